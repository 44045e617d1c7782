/* movement_split.c: Split. The part sizes come from the `split` attribute (opset 2-12),
 * the `split` input (opset 1 and 13+), `num_outputs` (18+: ceil-sized chunks, the
 * last ones smaller), or else equal parts, one per output. Zero-size parts are fine. */
#include <stdlib.h>
#include <string.h>

#include "movement_copy.h"
#include "movement_params.h"

#define SPLIT_MAX_OUTPUTS (1 << 20)

static const char *const split_attrs[] = {"axis", "split", "num_outputs", NULL};

static infer_status split_parse(const node *n, void **params) {
  int64_t axis, num_outputs;
  const int64_t *v;
  int count;
  TRY(attr_get_int(n, "axis", 0, &axis));
  TRY(attr_get_int(n, "num_outputs", 0, &num_outputs));
  TRY(attr_get_ints(n, "split", &v, &count));
  if (n->opset >= 13 && count >= 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Split: 'split' is an input since opset 13");
  if (node_attr(n, "num_outputs")) {
    if (n->opset < 18)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Split: num_outputs needs opset 18");
    if (num_outputs != n->n_outputs)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Split: num_outputs %lld but %d outputs",
                        (long long)num_outputs, n->n_outputs);
  }
  if (count >= 0 && count != n->n_outputs)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Split: %d split sizes for %d outputs", count,
                      n->n_outputs);
  split_params *p = malloc(sizeof *p + (size_t)(count > 0 ? count : 0) * sizeof *v);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Split: out of memory");
  p->axis = axis;
  p->num_outputs = num_outputs;
  p->n_split = count;
  if (count > 0) memcpy(p->split, v, (size_t)count * sizeof *v);
  *params = p;
  return INFER_OK;
}

/* Where the sizes come from, for one node and its inputs. */
typedef struct split_sizes {
  const int64_t *list; /* attribute sizes, or NULL */
  const tensor *input; /* input sizes, or NULL */
  int64_t chunk;       /* otherwise: parts of `chunk`, the last ones clipped */
  int64_t dim;
} split_sizes;

static int64_t split_size(const split_sizes *s, int k) {
  if (s->list) return s->list[k];
  if (s->input) return tensor_get_i64(s->input, k);
  int64_t start = s->chunk * k; /* chunk*k <= dim + chunk: no overflow */
  int64_t left = start < s->dim ? s->dim - start : 0;
  return left < s->chunk ? left : s->chunk;
}

static infer_status split_setup(const node *n, const split_params *p, const tensor *const *in,
                                int *axis, split_sizes *s) {
  const tensor *x = in[0];
  int outs = n->n_outputs;
  memset(s, 0, sizeof *s);
  if (x->rank == 0) return infer_fail(INFER_ERR_INVALID_MODEL, "Split: input is a scalar");
  TRY(axis_normalize(p->axis, x->rank, "Split axis", axis));
  s->dim = x->dims[*axis];
  bool has_input = n->n_inputs > 1 && in[1];
  if (has_input && n->opset >= 2 && n->opset < 13)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Split: opset %lld takes one input",
                      (long long)n->opset);
  if (has_input) {
    const tensor *t = in[1];
    if (t->dtype != INFER_DTYPE_INT64 && t->dtype != INFER_DTYPE_INT32)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Split: split must be int64, not %s",
                        infer_dtype_name(t->dtype));
    if (t->rank > 1 || dims_count(t->rank, t->dims) != outs)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Split: split must be 1-D with %d sizes", outs);
    if (!t->data) return OP_NEEDS_DATA;
    s->input = t;
  } else if (p->n_split >= 0) {
    s->list = p->split;
  } else if (p->num_outputs > 0) {
    s->chunk = s->dim / outs + (s->dim % outs != 0);
    return INFER_OK;
  } else {
    if (s->dim % outs != 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Split: dim %lld does not split into %d parts",
                        (long long)s->dim, outs);
    s->chunk = s->dim / outs;
    return INFER_OK;
  }
  int64_t total = 0;
  for (int k = 0; k < outs; k++) {
    int64_t v = split_size(s, k);
    if (v < 0 || !size_add(total, v, &total))
      return infer_fail(INFER_ERR_INVALID_MODEL, "Split: invalid size %lld", (long long)v);
  }
  if (total != s->dim)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Split: sizes sum to %lld, dim %d is %lld",
                      (long long)total, *axis, (long long)s->dim);
  return INFER_OK;
}

static infer_status split_infer(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  size_t es;
  int axis;
  split_sizes s;
  TRY(movement_elem_size("Split", in[0]->dtype, &es));
  TRY(split_setup(n, params, in, &axis, &s));
  for (int k = 0; k < n->n_outputs; k++) {
    if (!out[k]) continue;
    movement_same_shape(in[0], out[k]);
    out[k]->dims[axis] = split_size(&s, k);
  }
  return INFER_OK;
}

static infer_status split_run(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out, void *ws) {
  int axis;
  split_sizes s;
  const tensor *x = in[0];
  TRY(split_setup(n, params, in, &axis, &s));
  int64_t outer = dims_count(axis, x->dims);
  int64_t inner =
      dims_count(x->rank - axis - 1, x->dims + axis + 1) * (int64_t)infer_dtype_size(x->dtype);
  int64_t in_row = x->dims[axis] * inner, offset = 0;
  for (int k = 0; k < n->n_outputs; k++) {
    int64_t row = split_size(&s, k) * inner;
    if (out[k] && row > 0) {
      const char *src = (const char *)x->data + offset;
      char *dst = out[k]->data;
      for (int64_t i = 0; i < outer; i++) memcpy(dst + i * row, src + i * in_row, (size_t)row);
    }
    offset += row;
  }
  return INFER_OK;
}

const op_desc op_split = {.name = "Split",
                          .domain = "",
                          .since = 1,
                          .until = OP_OPSET_MAX,
                          .min_inputs = 1,
                          .max_inputs = 2,
                          .min_outputs = 1,
                          .max_outputs = SPLIT_MAX_OUTPUTS,
                          .attrs = split_attrs,
                          .parse = split_parse,
                          .infer = split_infer,
                          .run = split_run};
