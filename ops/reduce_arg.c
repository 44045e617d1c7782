/* reduce_arg.c: ArgMax and ArgMin: int64 index of the largest / smallest element
 * along `axis` (default 0), the first one on ties unless select_last_index=1
 * (opset 12+). keepdims (default 1) keeps the reduced axis as 1. NaN counts as the
 * extreme (as numpy's argmax/argmin: the first NaN wins). */
#include <stdlib.h>

#include "reduce_params.h"
#include "reduce_util.h"

static const char *const arg_attrs[] = {"axis", "keepdims", "select_last_index", NULL};

static infer_status arg_parse(const node *n, void **params) {
  arg_params tmp;
  int64_t keep, last;
  TRY(attr_get_int(n, "axis", 0, &tmp.axis));
  TRY(attr_get_int(n, "keepdims", 1, &keep));
  TRY(attr_get_int(n, "select_last_index", 0, &last));
  if (node_attr(n, "select_last_index") && n->opset < 12)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "%s: attribute 'select_last_index' does not exist at opset %lld",
                      n->op_type, (long long)n->opset);
  tmp.keepdims = keep != 0;
  tmp.last = last != 0;
  tmp.is_max = strcmp(n->op_type, "ArgMax") == 0;
  arg_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", n->op_type);
  *p = tmp;
  *params = p;
  return INFER_OK;
}

static infer_status arg_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  const arg_params *p = params;
  const tensor *x = in[0];
  TRY(nr_require(x, n->op_type, "data"));
  if (!dtype_is_float(x->dtype) && !dtype_is_signed_int(x->dtype) &&
      !(dtype_is_unsigned_int(x->dtype) && x->dtype != INFER_DTYPE_BOOL))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: dtype %s is not supported", n->op_type,
                      infer_dtype_name(x->dtype));
  TRY(nr_check_count(x, n->op_type));
  if (x->rank < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input must have rank >= 1", n->op_type);
  int axis;
  TRY(axis_normalize(p->axis, x->rank, "axis", &axis));
  if (x->dims[axis] == 0) {
    /* only an error if some output element would have no candidates */
    bool other_zero = false;
    for (int i = 0; i < x->rank; i++) other_zero = other_zero || (i != axis && x->dims[i] == 0);
    if (!other_zero)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: axis %d has size 0", n->op_type, axis);
  }
  int r = 0;
  for (int i = 0; i < x->rank; i++) {
    if (i != axis)
      out[0]->dims[r++] = x->dims[i];
    else if (p->keepdims)
      out[0]->dims[r++] = 1;
  }
  out[0]->rank = r;
  out[0]->dtype = INFER_DTYPE_INT64;
  return INFER_OK;
}

static infer_status arg_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  const arg_params *p = params;
  const tensor *x = in[0];
  int axis;
  TRY(axis_normalize(p->axis, x->rank, "axis", &axis));
  int64_t outer = nr_span(x->dims, 0, axis), len = x->dims[axis];
  int64_t inner = nr_span(x->dims, axis + 1, x->rank);
  int64_t *y = out[0]->data;
  bool ints = !dtype_is_float(x->dtype);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      int64_t base = o * len * inner + j, best = 0;
      if (ints) {
        int64_t bv = tensor_get_i64(x, base);
        for (int64_t i = 1; i < len; i++) {
          int64_t v = tensor_get_i64(x, base + i * inner);
          bool better = p->is_max ? (p->last ? v >= bv : v > bv) : (p->last ? v <= bv : v < bv);
          if (better) {
            bv = v;
            best = i;
          }
        }
      } else {
        double bv = nr_load(x, base);
        for (int64_t i = 1; i < len && bv == bv; i++) {
          double v = nr_load(x, base + i * inner);
          bool better = v != v || (p->is_max ? (p->last ? v >= bv : v > bv)
                                             : (p->last ? v <= bv : v < bv));
          if (better) {
            bv = v;
            best = i;
          }
        }
      }
      y[o * inner + j] = best;
    }
  return INFER_OK;
}

#define ARG_DESC(sym, opname)                                                               \
  const op_desc sym = {.name = opname,                                                      \
                       .domain = "",                                                        \
                       .since = 1,                                                          \
                       .until = OP_OPSET_MAX,                                               \
                       .min_inputs = 1,                                                     \
                       .max_inputs = 1,                                                     \
                       .min_outputs = 1,                                                    \
                       .max_outputs = 1,                                                    \
                       .attrs = arg_attrs,                                                  \
                       .parse = arg_parse,                                                  \
                       .infer = arg_infer,                                                  \
                       .run = arg_run}

ARG_DESC(op_argmax, "ArgMax");
ARG_DESC(op_argmin, "ArgMin");
