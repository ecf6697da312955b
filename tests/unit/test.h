/*
 * test.h — the tiny assertion kit of the unit tests (chibicc-style).
 * Each test program calls its checks from main() and ends with
 * `return test_done();`, which prints "N passed, N failed".
 */
#ifndef TS_TEST_H
#define TS_TEST_H

#include <stdio.h>
#include <string.h>

static int test_passed, test_failed;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (cond) test_passed++;                                                 \
        else {                                                                   \
            test_failed++;                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                        \
    } while (0)

#define CHECK_EQ_INT(want, got)                                                   \
    do {                                                                          \
        long long w_ = (long long)(want), g_ = (long long)(got);                  \
        if (w_ == g_) test_passed++;                                              \
        else {                                                                    \
            test_failed++;                                                        \
            fprintf(stderr, "%s:%d: %s: want %lld, got %lld\n", __FILE__, __LINE__, \
                    #got, w_, g_);                                                \
        }                                                                         \
    } while (0)

#define CHECK_EQ_STR(want, got)                                                   \
    do {                                                                          \
        const char *w_ = (want), *g_ = (got);                                     \
        if (g_ && !strcmp(w_, g_)) test_passed++;                                 \
        else {                                                                    \
            test_failed++;                                                        \
            fprintf(stderr, "%s:%d: %s:\n--- want\n%s\n--- got\n%s\n", __FILE__,  \
                    __LINE__, #got, w_, g_ ? g_ : "(null)");                      \
        }                                                                         \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                               \
    do {                                                                          \
        const char *h_ = (hay), *n_ = (needle);                                   \
        if (h_ && strstr(h_, n_)) test_passed++;                                  \
        else {                                                                    \
            test_failed++;                                                        \
            fprintf(stderr, "%s:%d: %s does not contain \"%s\":\n%s\n", __FILE__, \
                    __LINE__, #hay, n_, h_ ? h_ : "(null)");                      \
        }                                                                         \
    } while (0)

static inline int test_done(void) {
    printf("%d passed, %d failed\n", test_passed, test_failed);
    return test_failed ? 1 : 0;
}

#endif
