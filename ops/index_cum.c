/* index_cum.c: CumSum (11+) and CumProd (26+): running sums / products along the axis
 * given by the second input (a scalar int32/int64, negative counts from the back).
 * exclusive=1 leaves the current element out (the first output is 0 resp. 1);
 * reverse=1 runs from the end. Floats accumulate in double (rounded once per output),
 * integers in 64 bits wrapping like their own type. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_params.h"
#include "reduce_util.h"

static const char *const cum_attrs[] = {"exclusive", "reverse", NULL};

static infer_status cum_parse(const node *n, void **params) {
  int64_t ex, rev;
  TRY(attr_get_int(n, "exclusive", 0, &ex));
  TRY(attr_get_int(n, "reverse", 0, &rev));
  cum_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", n->op_type);
  p->exclusive = ex != 0;
  p->reverse = rev != 0;
  p->product = strcmp(n->op_type, "CumProd") == 0;
  *params = p;
  return INFER_OK;
}

infer_status cum_axis(const char *op, const tensor *axis, int rank, int *out) {
  if (axis->dtype != INFER_DTYPE_INT64 && axis->dtype != INFER_DTYPE_INT32)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: axis must be int32 or int64, not %s", op,
                      infer_dtype_name(axis->dtype));
  if (axis->rank > 1 || dims_count(axis->rank, axis->dims) != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: axis must be a scalar", op);
  if (!axis->data) return OP_NEEDS_DATA;
  char what[64];
  snprintf(what, sizeof what, "%s axis", op);
  return axis_normalize(index_at(axis, 0), rank, what, out);
}

static infer_status cum_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  const tensor *x = in[0];
  int axis;
  if (!index_dtype_numeric(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: dtype %s is not supported", n->op_type,
                      infer_dtype_name(x->dtype));
  if (x->rank < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input x must have rank >= 1", n->op_type);
  infer_status s = cum_axis(n->op_type, in[1], x->rank, &axis);
  if (s != INFER_OK && s != OP_NEEDS_DATA) return s; /* the shape does not need the axis */
  out[0]->dtype = x->dtype;
  out[0]->rank = x->rank;
  memcpy(out[0]->dims, x->dims, sizeof x->dims);
  return INFER_OK;
}

static infer_status cum_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  const cum_params *p = params;
  const tensor *x = in[0];
  tensor *y = out[0];
  int axis;
  infer_status st = cum_axis(n->op_type, in[1], x->rank, &axis);
  /* a constant axis was checked at build: a bad one now comes from the run's input */
  if (st != INFER_OK) return st == INFER_ERR_INVALID_MODEL ? INFER_ERR_INVALID_INPUT : st;
  int64_t outer = nr_span(x->dims, 0, axis), len = x->dims[axis];
  int64_t inner = nr_span(x->dims, axis + 1, x->rank);
  bool is_float = dtype_is_float(x->dtype);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      double fa = p->product ? 1 : 0;
      uint64_t ia = p->product ? 1 : 0;
      for (int64_t s = 0; s < len; s++) {
        int64_t i = o * len * inner + (p->reverse ? len - 1 - s : s) * inner + j;
        if (is_float) {
          double v = nr_load(x, i);
          if (p->exclusive) nr_store(y, i, fa);
          fa = p->product ? fa * v : fa + v;
          if (!p->exclusive) nr_store(y, i, fa);
        } else {
          uint64_t v = (uint64_t)tensor_get_i64(x, i);
          if (p->exclusive) tensor_set_i64(y, i, (int64_t)ia);
          ia = p->product ? ia * v : ia + v;
          if (!p->exclusive) tensor_set_i64(y, i, (int64_t)ia);
        }
      }
    }
  return INFER_OK;
}

#define CUM_DESC(sym, opname, from)                                                          \
  const op_desc sym = {.name = opname,                                                       \
                       .domain = "",                                                         \
                       .since = from,                                                        \
                       .until = OP_OPSET_MAX,                                                \
                       .min_inputs = 2,                                                      \
                       .max_inputs = 2,                                                      \
                       .min_outputs = 1,                                                     \
                       .max_outputs = 1,                                                     \
                       .attrs = cum_attrs,                                                   \
                       .parse = cum_parse,                                                   \
                       .infer = cum_infer,                                                   \
                       .run = cum_run}

CUM_DESC(op_cumsum, "CumSum", 11);
CUM_DESC(op_cumprod, "CumProd", 26);
