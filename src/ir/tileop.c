/*
 * tileop.c — names of the tile-operator vocabulary (ir/tileop.h), for the
 * printer, the verifier and diagnostics.
 */
#include "ir/tileop.h"

const char *ts_op_name(TsOpKind k) {
    switch (k) {
#define X(e, n) case e: return n;
        TS_TILEOPS(X)
#undef X
    case TS_OP_COUNT: break;
    }
    return "?";
}

const char *ts_reduce_name(TsReduceKind k) {
    switch (k) {
    case TS_REDUCE_SUM: return "sum";
    case TS_REDUCE_MAX: return "max";
    case TS_REDUCE_MIN: return "min";
    case TS_REDUCE_ABSSUM: return "abssum";
    case TS_REDUCE_ABSMAX: return "absmax";
    }
    return "?";
}

const char *ts_comm_name(int comm) {
    switch (comm) {
#define X(e, n) case e: return n;
        TS_COMM_KINDS(X)
#undef X
    default: return "comm?";
    }
}

const char *ts_gin_form_name(int form) {
    static const char *const n[] = {"none", "put", "put_values", "value", "signal_add",
                                    "wait_signal", "reset_signal", "flush", "barrier"};
    return form >= 0 && form <= TS_GIN_BARRIER ? n[form] : "gin?";
}

const char *ts_coll_name(int coll) {
    switch (coll) {
#define X(e, n) case e: return n;
        TS_COLL_KINDS(X)
#undef X
    default: return "coll?";
    }
}
