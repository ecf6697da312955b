/*
 * cache.h — the on-disk kernel cache both targets use (C shared objects,
 * CUDA cubins): where it lives and how files get into it safely.
 */
#ifndef TS_CACHE_H
#define TS_CACHE_H

#include "base/base.h"

/* The cache directory — opt->cache_dir, else $TILESCALE_CACHE_DIR, else
 * ~/.cache/tilescale — without trailing slashes, created if missing, into
 * out.  On failure adds a message to d (no longjmp) and returns TS_ERR_IO. */
TsStatus ts_cache_dir(TsDiag *d, const TsCompileOptions *opt, TsBuf *out);

/* Mark the cache file at path as just used (its modification time: the
 * least recently used kernels are the ones trimmed).  Errors are ignored. */
void ts_cache_touch(const char *path);

/* Keep the cache in dir within its size limit ($TILESCALE_CACHE_MAX):
 * after a build stored a kernel, remove the least recently used kernels
 * until the rest fit, never one used in the last minute, never a file the
 * cache did not make.  Best effort: errors are ignored; another process
 * trimming at the same time makes this call return at once. */
void ts_cache_trim(const char *dir);

/* mkdir -p; 0 on success. */
int ts_make_dirs(const char *path);

/* Write data to path through a temporary file in the same directory and a
 * rename, so readers never see half a file and concurrent writers of the
 * same content are safe.  0 on success; on failure errno is set and no
 * temporary file is left behind. */
int ts_write_atomic(const char *path, const void *data, size_t n, int mode);

#endif
