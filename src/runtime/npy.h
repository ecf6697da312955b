/*
 * npy.h — reading and writing NumPy .npy files (host tensors for the CLI,
 * tests and library users).
 *
 * Reading accepts format versions 1.0, 2.0 and 3.0, little-endian or
 * byte-order-free dtypes: <f2 <f4 <f8 <i1 <i2 <i4 <i8 <u1 <u2 <u4 <u8 |b1
 * (and their '|'/'=' spellings), plus '<V2'/'|V2' as bfloat16 (what
 * ml_dtypes' bfloat16 arrays save as).  C order only: fortran_order True is
 * refused.  bfloat16 and float8 have no NumPy dtype, so writing stores
 * their raw bits as '<u2' / '|u1' (read back as uint16 / uint8; view them
 * as bfloat16 with ml_dtypes or torch).  Every problem with a file is a
 * TS_ERR_IO naming the file and what is wrong; nothing here longjmps.
 */
#ifndef TS_NPY_H
#define TS_NPY_H

#include "base/base.h"

#define TS_NPY_MAX_DIMS 8

/* Read a file.  *data is malloc'ed (row-major, contiguous; caller frees). */
TsStatus ts_npy_read(TsDiag *d, const char *path, TsDType *dt, int *ndim,
                     int64_t shape[TS_NPY_MAX_DIMS], void **data);
/* Write `data` (strides in elements, NULL: row-major contiguous), version
 * 1.0 (2.0 if the header needs it), via a temporary file and rename. */
TsStatus ts_npy_write(TsDiag *d, const char *path, TsDType dt, int ndim, const int64_t *shape,
                      const int64_t *strides, const void *data);

/* The same for TsTensor: read allocates out->data and out->shape with
 * malloc (ts_tensor_free releases them). */
TsStatus ts_npy_read_tensor(TsDiag *d, const char *path, TsTensor *out);
TsStatus ts_npy_write_tensor(TsDiag *d, const char *path, const TsTensor *t);

#endif
