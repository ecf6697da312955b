"""tilelang.math: the integer helpers scripts call in host code."""
__path__ = []  # a package to the import system, so tilelang.math.* submodules resolve to stubs


def cdiv(a, b):
    return -(-a // b)


def next_power_of_2(x):
    x = int(x)
    return 1 if x <= 1 else 1 << (x - 1).bit_length()


def prev_power_of_2(x):
    x = int(x)
    return 1 if x <= 1 else 1 << (x.bit_length() - 1)
