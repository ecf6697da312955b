"""npy_close.py GOT.npy REF.npy RTOL ATOL -- two .npy files of one shape
agree elementwise by numpy.allclose's rule (|got - ref| <= atol + rtol *
|ref|, NaN never passes), read without NumPy (float16/float32/float64/
int32, bfloat16 as its bits, little-endian C-order arrays, as the tilescale CLI writes them).
Prints the worst element and PASS or FAIL; exit status 1 on FAIL."""
import ast
import math
import struct
import sys

CODES = {"<f2": "e", "<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q", "<u2": "H", "<V2": "H"}


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise SystemExit(f"{path}: not a .npy file")
    hl = struct.unpack("<H", data[8:10])[0] if data[6] == 1 else struct.unpack("<I", data[8:12])[0]
    start = 10 if data[6] == 1 else 12
    hdr = ast.literal_eval(data[start:start + hl].decode("latin1"))
    if hdr["fortran_order"] or hdr["descr"] not in CODES:
        raise SystemExit(f"{path}: unsupported array {hdr}")
    n = 1
    for s in hdr["shape"]:
        n *= s
    vals = struct.unpack(f"<{n}{CODES[hdr['descr']]}", data[start + hl:start + hl + n * struct.calcsize(CODES[hdr["descr"]])])
    if hdr["descr"] in ("<u2", "<V2"):  # bfloat16 bits (the CLI writes '<u2', ml_dtypes '<V2')
        vals = tuple(struct.unpack("<f", struct.pack("<I", v << 16))[0] for v in vals)
    return tuple(hdr["shape"]), vals


def main(argv):
    got_shape, got = load(argv[1])
    ref_shape, ref = load(argv[2])
    rtol, atol = float(argv[3]), float(argv[4])
    if got_shape != ref_shape:
        print(f"FAIL shapes {got_shape} and {ref_shape}")
        return 1
    bad, worst, wi = 0, -1.0, 0
    for i, (g, r) in enumerate(zip(got, ref)):
        err = abs(g - r) if not (math.isnan(g) or math.isnan(r)) else math.inf
        if err > atol + rtol * abs(r):
            bad += 1
        if err - (atol + rtol * abs(r)) > worst:
            worst, wi = err - (atol + rtol * abs(r)), i
    print(f"{len(got)} elements, {bad} outside; worst at {wi}: got {got[wi]} ref {ref[wi]}")
    print("PASS" if bad == 0 else "FAIL")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
