/* reduce_ops.c: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
 * ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp.
 *
 * Axes come from the `axes` attribute up to opset 12 (ReduceSum) / 17 (the others)
 * and from the optional second input afterwards. Empty axes reduce everything,
 * unless noop_with_empty_axes=1: then no axis is reduced and each output element
 * "reduces" one input element (so ReduceSumSquare squares, ReduceL1 takes |x|, as
 * the ONNX reference does). A reduction over zero elements yields the identity of
 * the reduction (0, 1, -inf, +inf or the integer type's extreme; Mean gives NaN).
 *
 * Float inputs accumulate in double; integer Sum/Prod/SumSquare/L1/Max/Min
 * accumulate in int64 (wrapping like the C types), the rest in double. */
#include <float.h>
#include <stdlib.h>

#include "reduce_params.h"
#include "reduce_util.h"

static const struct {
  const char *name;
  enum reduce_kind kind;
  int input_axes_since; /* opset where axes moved from attribute to input */
} reduce_table[] = {
    {"ReduceSum", RK_SUM, 13},          {"ReduceMean", RK_MEAN, 18},
    {"ReduceMax", RK_MAX, 18},          {"ReduceMin", RK_MIN, 18},
    {"ReduceProd", RK_PROD, 18},        {"ReduceL1", RK_L1, 18},
    {"ReduceL2", RK_L2, 18},            {"ReduceSumSquare", RK_SUMSQ, 18},
    {"ReduceLogSum", RK_LOGSUM, 18},    {"ReduceLogSumExp", RK_LOGSUMEXP, 18},
};
enum { REDUCE_OPS = sizeof reduce_table / sizeof reduce_table[0] };

static const char *const reduce_attrs_old[] = {"axes", "keepdims", NULL};
static const char *const reduce_attrs_new[] = {"keepdims", "noop_with_empty_axes", NULL};

static infer_status reduce_parse(const node *n, void **params) {
  reduce_params tmp;
  memset(&tmp, 0, sizeof tmp);
  int k = 0;
  while (k < REDUCE_OPS && strcmp(reduce_table[k].name, n->op_type) != 0) k++;
  if (k == REDUCE_OPS)
    return infer_fail(INFER_ERR_INTERNAL, "reduce: unknown op %s", n->op_type);
  tmp.kind = reduce_table[k].kind;
  tmp.axes_from_input = n->opset >= reduce_table[k].input_axes_since;
  int64_t keep, noop;
  TRY(attr_get_int(n, "keepdims", 1, &keep));
  tmp.keepdims = keep != 0;
  if (tmp.axes_from_input) {
    TRY(attr_get_int(n, "noop_with_empty_axes", 0, &noop));
    tmp.noop_with_empty_axes = noop != 0;
    tmp.n_axes = -1;
  } else {
    const int64_t *axes;
    TRY(attr_get_ints(n, "axes", &axes, &tmp.n_axes));
    if (tmp.n_axes > INFER_MAX_RANK)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: %d axes, more than the rank can have",
                        n->op_type, tmp.n_axes);
    for (int i = 0; i < tmp.n_axes; i++) tmp.axes[i] = axes[i];
  }
  reduce_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", n->op_type);
  *p = tmp;
  *params = p;
  return INFER_OK;
}

/* (reduce_params.h) */
infer_status reduce_axes_mask(const node *n, const reduce_params *p, const tensor *a, int rank,
                              bool *mask) {
  int64_t axes[INFER_MAX_RANK];
  int count = 0;
  if (p->axes_from_input) {
    if (a) {
      if (!a->data) return OP_NEEDS_DATA;
      if (a->dtype != INFER_DTYPE_INT64)
        return infer_fail(INFER_ERR_INVALID_MODEL, "%s: axes must be int64, not %s",
                          n->op_type, infer_dtype_name(a->dtype));
      TRY(tensor_read_ints(a, "axes", axes, INFER_MAX_RANK, &count));
    }
  } else if (p->n_axes > 0) {
    count = p->n_axes;
    memcpy(axes, p->axes, sizeof(int64_t) * (size_t)count);
  }
  for (int i = 0; i < rank; i++) mask[i] = false;
  if (count == 0) {
    /* empty axes: everything, or (noop) nothing */
    for (int i = 0; i < rank; i++) mask[i] = !p->noop_with_empty_axes;
    return INFER_OK;
  }
  for (int i = 0; i < count; i++) {
    int ax;
    TRY(axis_normalize(axes[i], rank, "axes entry", &ax));
    if (mask[ax])
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: axis %lld is repeated", n->op_type,
                        (long long)axes[i]);
    mask[ax] = true;
  }
  return INFER_OK;
}

/* Which dims of x (in[0]) are reduced (mask[i] = true). */
static infer_status reduce_resolve(const node *n, const reduce_params *p,
                                   const tensor *const *in, bool *mask) {
  const tensor *a = p->axes_from_input && n->n_inputs > 1 ? in[1] : NULL;
  return reduce_axes_mask(n, p, a, in[0]->rank, mask);
}

static bool reduce_dtype_ok(enum reduce_kind k, infer_dtype t) {
  if (dtype_is_float(t)) return true;
  if (t == INFER_DTYPE_BOOL) return k == RK_MAX || k == RK_MIN;
  return dtype_is_signed_int(t) || dtype_is_unsigned_int(t);
}

static infer_status reduce_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  const reduce_params *p = params;
  const tensor *x = in[0];
  TRY(nr_require(x, n->op_type, "data"));
  if (!reduce_dtype_ok(p->kind, x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: dtype %s is not supported", n->op_type,
                      infer_dtype_name(x->dtype));
  TRY(nr_check_count(x, n->op_type));
  bool mask[INFER_MAX_RANK];
  TRY(reduce_resolve(n, p, in, mask));
  int r = 0;
  for (int i = 0; i < x->rank; i++) {
    if (!mask[i])
      out[0]->dims[r++] = x->dims[i];
    else if (p->keepdims)
      out[0]->dims[r++] = 1;
  }
  out[0]->rank = r;
  out[0]->dtype = x->dtype;
  return INFER_OK;
}

/* ---- kernel ------------------------------------------------------------------- */

static int64_t int_min_of(infer_dtype t) {
  switch (t) {
    case INFER_DTYPE_INT8: return INT8_MIN;
    case INFER_DTYPE_INT16: return INT16_MIN;
    case INFER_DTYPE_INT32: return INT32_MIN;
    case INFER_DTYPE_INT64: return INT64_MIN;
    default: return 0; /* unsigned and bool */
  }
}

static int64_t int_max_of(infer_dtype t) {
  switch (t) {
    case INFER_DTYPE_INT8: return INT8_MAX;
    case INFER_DTYPE_INT16: return INT16_MAX;
    case INFER_DTYPE_INT32: return INT32_MAX;
    case INFER_DTYPE_UINT8: return UINT8_MAX;
    case INFER_DTYPE_UINT16: return UINT16_MAX;
    case INFER_DTYPE_UINT32: return UINT32_MAX;
    case INFER_DTYPE_BOOL: return 1;
    default: return INT64_MAX; /* int64; uint64 is capped at INT64_MAX */
  }
}

/* The reduced set of one output element: the remaining dims after merging. */
typedef struct reduce_walk {
  int rank;                          /* reduced dims (merged) */
  int64_t dims[INFER_MAX_RANK];      /* extents */
  int64_t strides[INFER_MAX_RANK];   /* input strides */
  int64_t count;                     /* elements per output */
} reduce_walk;

/* Accumulates f(x) over the reduced set at `base` into double accumulators. */
static double reduce_float(enum reduce_kind k, const tensor *x, const reduce_walk *w,
                           int64_t base, double shift) {
  double acc;
  switch (k) {
    case RK_MAX: acc = -INFINITY; break;
    case RK_MIN: acc = INFINITY; break;
    case RK_PROD: acc = 1.0; break;
    default: acc = 0.0;
  }
  if (w->count == 0) return acc;
  int64_t idx[INFER_MAX_RANK] = {0};
  int last = w->rank - 1;
  int64_t len = last >= 0 ? w->dims[last] : 1, st = last >= 0 ? w->strides[last] : 0;
  for (;;) {
    int64_t off = base;
    for (int d = 0; d < last; d++) off += idx[d] * w->strides[d];
    for (int64_t i = 0; i < len; i++, off += st) {
      double v = nr_load(x, off);
      switch (k) {
        case RK_SUM:
        case RK_MEAN:
        case RK_LOGSUM: acc += v; break;
        case RK_MAX:
          if (v > acc || v != v) acc = v;
          if (acc != acc) return acc;
          break;
        case RK_MIN:
          if (v < acc || v != v) acc = v;
          if (acc != acc) return acc;
          break;
        case RK_PROD: acc *= v; break;
        case RK_L1: acc += fabs(v); break;
        case RK_L2:
        case RK_SUMSQ: acc += v * v; break;
        case RK_LOGSUMEXP: acc += exp(v - shift); break;
      }
    }
    int d = last - 1;
    while (d >= 0 && ++idx[d] == w->dims[d]) idx[d--] = 0;
    if (d < 0) break;
  }
  return acc;
}

static int64_t reduce_int(enum reduce_kind k, const tensor *x, const reduce_walk *w,
                          int64_t base) {
  /* unsigned wraparound arithmetic keeps overflow defined */
  uint64_t acc = k == RK_PROD ? 1u : 0u;
  int64_t ext = k == RK_MAX ? int_min_of(x->dtype) : int_max_of(x->dtype);
  int64_t idx[INFER_MAX_RANK] = {0};
  int last = w->rank - 1;
  if (w->count == 0) return (k == RK_MAX || k == RK_MIN) ? ext : (int64_t)acc;
  int64_t len = last >= 0 ? w->dims[last] : 1, st = last >= 0 ? w->strides[last] : 0;
  for (;;) {
    int64_t off = base;
    for (int d = 0; d < last; d++) off += idx[d] * w->strides[d];
    for (int64_t i = 0; i < len; i++, off += st) {
      int64_t v = tensor_get_i64(x, off);
      switch (k) {
        case RK_MAX: ext = v > ext ? v : ext; break;
        case RK_MIN: ext = v < ext ? v : ext; break;
        case RK_PROD: acc *= (uint64_t)v; break;
        case RK_L1: acc += (uint64_t)(v < 0 ? -(uint64_t)v : (uint64_t)v); break;
        case RK_SUMSQ: acc += (uint64_t)v * (uint64_t)v; break;
        default: acc += (uint64_t)v; break; /* RK_SUM, RK_MEAN */
      }
    }
    int d = last - 1;
    while (d >= 0 && ++idx[d] == w->dims[d]) idx[d--] = 0;
    if (d < 0) break;
  }
  return (k == RK_MAX || k == RK_MIN) ? ext : (int64_t)acc;
}

/* One output value from the reduced set at `base`. */
static void reduce_one(enum reduce_kind k, const tensor *x, tensor *y, int64_t o,
                       const reduce_walk *w, int64_t base) {
  bool int_path = !dtype_is_float(x->dtype) &&
                  (k == RK_SUM || k == RK_PROD || k == RK_SUMSQ || k == RK_L1 ||
                   k == RK_MAX || k == RK_MIN || k == RK_MEAN);
  if (int_path) {
    int64_t v = reduce_int(k, x, w, base);
    if (k == RK_MEAN)
      tensor_set_f64(y, o, w->count ? (double)v / (double)w->count : 0.0);
    else
      tensor_set_i64(y, o, v);
    return;
  }
  double v, shift = 0.0;
  if (k == RK_LOGSUMEXP) {
    double mx = reduce_float(RK_MAX, x, w, base, 0.0);
    shift = isfinite(mx) ? mx : 0.0; /* as the ONNX reference: no inf - inf */
  }
  v = reduce_float(k, x, w, base, shift);
  switch (k) {
    case RK_MEAN: v = v / (double)w->count; break; /* 0/0 = NaN on an empty set */
    case RK_L2: v = sqrt(v); break;
    case RK_LOGSUM: v = log(v); break;
    case RK_LOGSUMEXP: v = log(v) + shift; break;
    default: break;
  }
  nr_store(y, o, v);
}

static infer_status reduce_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  const reduce_params *p = params;
  const tensor *x = in[0];
  tensor *y = out[0];
  bool mask[INFER_MAX_RANK];
  infer_status st = reduce_resolve(n, p, in, mask);
  if (st != INFER_OK)
    return st == OP_NEEDS_DATA ? infer_fail(INFER_ERR_RUNTIME, "%s: axes not available",
                                            n->op_type)
                               : st;
  /* Merge neighbouring dims of the same kind; drop unit dims. */
  int64_t strides[INFER_MAX_RANK];
  dims_strides(x->rank, x->dims, strides);
  int64_t kd[INFER_MAX_RANK], ks[INFER_MAX_RANK]; /* kept dims, input strides */
  int nk = 0;
  reduce_walk w = {.rank = 0, .count = 1};
  int prev = -1; /* 0 kept, 1 reduced */
  for (int i = 0; i < x->rank; i++) {
    int64_t d = x->dims[i];
    if (d == 1) continue;
    int kind = mask[i] ? 1 : 0;
    if (kind == 1) {
      w.count *= d;
      if (prev == 1 && w.strides[w.rank - 1] == d * strides[i]) {
        w.dims[w.rank - 1] *= d;
        w.strides[w.rank - 1] = strides[i];
      } else {
        w.dims[w.rank] = d;
        w.strides[w.rank++] = strides[i];
      }
    } else {
      if (prev == 0 && ks[nk - 1] == d * strides[i]) {
        kd[nk - 1] *= d;
        ks[nk - 1] = strides[i];
      } else {
        kd[nk] = d;
        ks[nk++] = strides[i];
      }
    }
    prev = kind;
  }
  if (dims_count(x->rank, x->dims) == 0) {
    /* an empty input: either no outputs, or outputs over an empty set */
    w.count = 0;
    for (int i = 0; i < x->rank; i++)
      if (!mask[i] && x->dims[i] == 0) return INFER_OK; /* no output elements */
    w.rank = 0;
  }
  int64_t total = dims_count(y->rank, y->dims);
  int64_t idx[INFER_MAX_RANK] = {0};
  for (int64_t o = 0; o < total; o++) {
    int64_t base = 0;
    for (int d = 0; d < nk; d++) base += idx[d] * ks[d];
    reduce_one(p->kind, x, y, o, &w, base);
    for (int d = nk - 1; d >= 0; d--) {
      if (++idx[d] < kd[d]) break;
      idx[d] = 0;
    }
  }
  return INFER_OK;
}

#define REDUCE_DESC(sym, opname, since_, until_, max_in, attrs_)                            \
  const op_desc sym = {.name = opname,                                                      \
                       .domain = "",                                                        \
                       .since = since_,                                                     \
                       .until = until_,                                                     \
                       .min_inputs = 1,                                                     \
                       .max_inputs = max_in,                                                \
                       .min_outputs = 1,                                                    \
                       .max_outputs = 1,                                                    \
                       .attrs = attrs_,                                                     \
                       .parse = reduce_parse,                                               \
                       .infer = reduce_infer,                                               \
                       .run = reduce_run}

#define REDUCE_PAIR(base, opname, split)                                          \
  REDUCE_DESC(op_##base##_1, opname, 1, split - 1, 1, reduce_attrs_old);          \
  REDUCE_DESC(op_##base##_##split, opname, split, OP_OPSET_MAX, 2, reduce_attrs_new)

REDUCE_PAIR(reduce_sum, "ReduceSum", 13);
REDUCE_PAIR(reduce_mean, "ReduceMean", 18);
REDUCE_PAIR(reduce_max, "ReduceMax", 18);
REDUCE_PAIR(reduce_min, "ReduceMin", 18);
REDUCE_PAIR(reduce_prod, "ReduceProd", 18);
REDUCE_PAIR(reduce_l1, "ReduceL1", 18);
REDUCE_PAIR(reduce_l2, "ReduceL2", 18);
REDUCE_PAIR(reduce_sum_square, "ReduceSumSquare", 18);
REDUCE_PAIR(reduce_log_sum, "ReduceLogSum", 18);
REDUCE_PAIR(reduce_log_sum_exp, "ReduceLogSumExp", 18);
