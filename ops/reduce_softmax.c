/* reduce_softmax.c: Softmax, LogSoftmax and Hardmax (listed by ops/misc.c).
 * Opsets 1-12 coerce the input to 2-D at `axis` (default 1) and normalize each row
 * of prod(dims[axis:]) elements; opset 13+ normalizes along `axis` (default -1)
 * alone. Both subtract the maximum first; sums accumulate in double. */
#include <stdlib.h>

#include "reduce_params.h"
#include "reduce_util.h"

static const char *const softmax_attrs[] = {"axis", NULL};

static infer_status softmax_parse(const node *n, void **params) {
  softmax_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", n->op_type);
  p->log = strcmp(n->op_type, "LogSoftmax") == 0;
  infer_status st = attr_get_int(n, "axis", n->opset >= 13 ? -1 : 1, &p->axis);
  if (st != INFER_OK) {
    free(p);
    return st;
  }
  *params = p;
  return INFER_OK;
}

/* (reduce_params.h) */
infer_status softmax_geometry(const node *n, const softmax_params *p, const tensor *x,
                              int64_t *outer, int64_t *len, int64_t *inner) {
  int axis;
  if (x->rank == 0) { /* a scalar normalizes over itself */
    if (p->axis != 0 && p->axis != -1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: axis %lld is out of range for a scalar",
                        n->op_type, (long long)p->axis);
    *outer = *len = *inner = 1;
    return INFER_OK;
  }
  TRY(axis_normalize(p->axis, x->rank, "axis", &axis));
  *outer = nr_span(x->dims, 0, axis);
  if (n->opset >= 13) {
    *len = x->dims[axis];
    *inner = nr_span(x->dims, axis + 1, x->rank);
  } else {
    *len = nr_span(x->dims, axis, x->rank);
    *inner = 1;
  }
  return INFER_OK;
}

static infer_status softmax_infer(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out) {
  const tensor *x = in[0];
  TRY(nr_require(x, n->op_type, "input"));
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: dtype %s is not supported", n->op_type,
                      infer_dtype_name(x->dtype));
  TRY(nr_check_count(x, n->op_type));
  int64_t o, l, i;
  TRY(softmax_geometry(n, params, x, &o, &l, &i));
  out[0]->dtype = x->dtype;
  nr_copy_shape(out[0], x);
  return INFER_OK;
}

/* Contiguous float32 rows: exp once into y, then scale (or log-shift). */
static void softmax_rows_f32(const float *x, float *y, int64_t rows, int64_t len, bool log_) {
  for (int64_t r = 0; r < rows; r++, x += len, y += len) {
    float mx = -INFINITY;
    for (int64_t i = 0; i < len; i++) mx = x[i] > mx ? x[i] : mx;
    if (!isfinite(mx)) mx = isnan(mx) ? mx : (mx > 0 ? mx : 0.0f);
    double sum = 0.0;
    if (log_) {
      for (int64_t i = 0; i < len; i++) sum += exp((double)x[i] - mx);
      double ls = log(sum);
      for (int64_t i = 0; i < len; i++) y[i] = (float)((double)x[i] - mx - ls);
    } else {
      for (int64_t i = 0; i < len; i++) {
        float e = (float)exp((double)x[i] - mx);
        y[i] = e;
        sum += e;
      }
      double inv = 1.0 / sum;
      for (int64_t i = 0; i < len; i++) y[i] = (float)(y[i] * inv);
    }
  }
}

static infer_status softmax_run(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out, void *ws) {
  const softmax_params *p = params;
  const tensor *x = in[0];
  tensor *y = out[0];
  int64_t outer, len, inner;
  TRY(softmax_geometry(n, p, x, &outer, &len, &inner));
  if (x->dtype == INFER_DTYPE_FLOAT32 && inner == 1) {
    softmax_rows_f32(x->data, y->data, outer, len, p->log);
    return INFER_OK;
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in_ = 0; in_ < inner; in_++) {
      int64_t base = o * len * inner + in_;
      double mx = -INFINITY;
      for (int64_t i = 0; i < len; i++) {
        double v = nr_load(x, base + i * inner);
        if (v > mx || v != v) mx = v;
        if (mx != mx) break;
      }
      /* an infinite max: shift by 0 so that -inf rows give NaN/0 like numpy */
      if (isinf(mx)) mx = mx > 0 ? mx : 0.0;
      double sum = 0.0;
      for (int64_t i = 0; i < len; i++) sum += exp(nr_load(x, base + i * inner) - mx);
      double ls = log(sum), inv = 1.0 / sum;
      for (int64_t i = 0; i < len; i++) {
        double v = nr_load(x, base + i * inner) - mx;
        nr_store(y, base + i * inner, p->log ? v - ls : exp(v) * inv);
      }
    }
  return INFER_OK;
}

#define SOFTMAX_DESC(sym, opname, since_, until_)                                          \
  const op_desc sym = {.name = opname,                                                     \
                       .domain = "",                                                       \
                       .since = since_,                                                    \
                       .until = until_,                                                    \
                       .min_inputs = 1,                                                    \
                       .max_inputs = 1,                                                    \
                       .min_outputs = 1,                                                   \
                       .max_outputs = 1,                                                   \
                       .attrs = softmax_attrs,                                             \
                       .parse = softmax_parse,                                             \
                       .infer = softmax_infer,                                             \
                       .run = softmax_run}

SOFTMAX_DESC(op_softmax_1, "Softmax", 1, 12);
SOFTMAX_DESC(op_softmax_13, "Softmax", 13, OP_OPSET_MAX);
SOFTMAX_DESC(op_logsoftmax_1, "LogSoftmax", 1, 12);
SOFTMAX_DESC(op_logsoftmax_13, "LogSoftmax", 13, OP_OPSET_MAX);

/* ---- Hardmax: 1 at the first maximum of each softmax row, 0 elsewhere ---------------
 * Same attribute, geometry and opset split as Softmax (2-D coercion before 13). A
 * NaN counts as the maximum once met (the comparison > never picks past it), as in
 * numpy's argmax. */
static infer_status hardmax_run(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out, void *ws) {
  const tensor *x = in[0];
  tensor *y = out[0];
  int64_t outer, len, inner;
  TRY(softmax_geometry(n, params, x, &outer, &len, &inner));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in_ = 0; in_ < inner; in_++) {
      int64_t base = o * len * inner + in_, best = 0;
      double mx = len > 0 ? nr_load(x, base) : 0;
      for (int64_t i = 1; i < len && mx == mx; i++) {
        double v = nr_load(x, base + i * inner);
        if (v > mx || v != v) mx = v, best = i;
      }
      for (int64_t i = 0; i < len; i++) nr_store(y, base + i * inner, i == best ? 1.0 : 0.0);
    }
  return INFER_OK;
}

#define HARDMAX_DESC(sym, since_, until_)                 \
  const op_desc sym = {.name = "Hardmax",                 \
                       .domain = "",                      \
                       .since = since_,                   \
                       .until = until_,                   \
                       .min_inputs = 1,                   \
                       .max_inputs = 1,                   \
                       .min_outputs = 1,                  \
                       .max_outputs = 1,                  \
                       .attrs = softmax_attrs,            \
                       .parse = softmax_parse,            \
                       .infer = softmax_infer,            \
                       .run = hardmax_run}

HARDMAX_DESC(op_hardmax_1, 1, 12);
HARDMAX_DESC(op_hardmax_13, 13, OP_OPSET_MAX);
