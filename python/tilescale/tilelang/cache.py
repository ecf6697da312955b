"""tilelang.cache: the kernel cache is libtilescale's disk cache; nothing to clear from here."""


def clear_cache():
    pass
