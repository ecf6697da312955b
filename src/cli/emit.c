/*
 * emit.c — `tilescale compile --target cuda --emit ptx|sass`: the device
 * code of each kernel of a chain, as PTX or as SASS.
 *
 * PTX comes from the library (ts_kernel_device_code: NVRTC with the same
 * architecture and options as a build).  SASS is not something NVRTC
 * prints, so the cubin goes to a temporary file and a disassembler from
 * the CUDA toolkit reads it: cuobjdump (-sass), else nvdisasm, looked for
 * in $CUDA_HOME/bin, $CUDA_PATH/bin, every $PATH entry, /usr/local/cuda/bin,
 * in that order (cuobjdump in all of them first).  The tool is run
 * directly (posix_spawn, no shell), its output going to ours.  Where none
 * is found the error says where we looked and that --emit ptx works
 * without them.  This lives in the CLI, not the library: running programs
 * is a tool's business, and the library must not depend on a toolkit.
 * Paths are the library's growable strings (TsBuf), so a toolkit or
 * temporary directory of any length works.
 */
#include "cli/cli.h"
#include "base/base.h" /* TsBuf: paths of any length */

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* First executable `name` in the search order of the essay, into out
 * (emptied first; any length: no fixed buffer); 1 if found. */
static int find_tool(const char *name, TsBuf *out) {
    const char *homes[2] = {getenv("CUDA_HOME"), getenv("CUDA_PATH")};
    for (int i = 0; i < 2; i++) {
        if (!homes[i] || !*homes[i]) continue;
        out->n = 0;
        ts_buf_printf(out, "%s/bin/%s", homes[i], name);
        if (!out->oom && access(out->s, X_OK) == 0) return 1;
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *e = strchr(path, ':');
        size_t len = e ? (size_t)(e - path) : strlen(path);
        if (len > 0) {
            out->n = 0;
            ts_buf_printf(out, "%.*s/%s", (int)len, path, name);
            if (!out->oom && access(out->s, X_OK) == 0) return 1;
        }
        path = e ? e + 1 : NULL;
    }
    out->n = 0;
    ts_buf_printf(out, "/usr/local/cuda/bin/%s", name);
    return !out->oom && access(out->s, X_OK) == 0;
}

/* The SASS of one cubin on stdout; 0 on success. */
static int print_sass(const void *cubin, size_t size) {
    TsBuf tool = {0}, path = {0};
    const char *flag = "-sass";
    if (!find_tool("cuobjdump", &tool)) {
        flag = NULL;
        if (!find_tool("nvdisasm", &tool)) {
            fprintf(stderr,
                    "tilescale: error: --emit sass needs cuobjdump or nvdisasm from the CUDA toolkit; none found in "
                    "$CUDA_HOME/bin, $CUDA_PATH/bin, $PATH or /usr/local/cuda/bin (--emit ptx needs only NVRTC)\n");
            ts_buf_free(&tool);
            return 1;
        }
    }
    const char *tmpdir = getenv("TMPDIR");
    ts_buf_printf(&path, "%s/tilescale-XXXXXX.cubin", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = path.oom ? -1 : mkstemps(path.s, 6);
    if (fd < 0) {
        fprintf(stderr, "tilescale: error: cannot create a temporary file for the cubin in '%s': %s\n",
                tmpdir && *tmpdir ? tmpdir : "/tmp", path.oom ? "out of memory" : strerror(errno));
        ts_buf_free(&tool);
        ts_buf_free(&path);
        return 1;
    }
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, (const char *)cubin + done, size - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += (size_t)w;
    }
    close(fd);
    int rc = 1;
    if (done != size) {
        fprintf(stderr, "tilescale: error: cannot write '%s': %s\n", path.s, strerror(errno));
    } else {
        char *argv[4] = {tool.s, (char *)flag, path.s, NULL};
        if (!flag) argv[1] = path.s, argv[2] = NULL;
        fflush(stdout);
        pid_t pid;
        int status = 0, e = posix_spawn(&pid, tool.s, NULL, NULL, argv, environ);
        if (e != 0) fprintf(stderr, "tilescale: error: cannot run '%s': %s\n", tool.s, strerror(e));
        else if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fprintf(stderr, "tilescale: error: '%s %s' failed\n", tool.s, flag ? flag : "");
        else rc = 0;
    }
    unlink(path.s);
    ts_buf_free(&tool);
    ts_buf_free(&path);
    return rc;
}

int cli_emit_device(TsContext *ctx, const TsKernel *k, const char *emit) {
    int sass = !strcmp(emit, "sass");
    for (const TsKernel *p = k; p; p = ts_kernel_next(p)) {
        if (p != k) printf("\n// ---- the next kernel of the chain, launched after the one above ----\n\n");
        void *code = NULL;
        size_t size = 0;
        if (ts_kernel_device_code(p, sass ? "cubin" : "ptx", &code, &size)) {
            fprintf(stderr, "%s", ts_last_error(ctx));
            return 1;
        }
        int rc = 0;
        if (sass) rc = print_sass(code, size);
        else fputs((const char *)code, stdout);
        free(code);
        if (rc) return rc;
    }
    fflush(stdout);
    return 0;
}
