/* shape_ops.c: the shape family list, and Shape, Size, Identity, Dropout.
 *
 * Shape and Size read only their input's shape (fold_from_shape); Identity and
 * inference-mode Dropout copy bytes, so they work for every fixed-size dtype. */
#include <stdlib.h>
#include <string.h>

#include "movement_copy.h"
#include "shape_params.h"

/* ---- Shape (1+; start/end since 15) ---------------------------------------- */

static const char *const shape_attrs[] = {"start", "end", NULL};

static infer_status shape_parse(const node *n, void **params) {
  shape_params v;
  v.has_end = node_attr(n, "end") != NULL;
  TRY(attr_get_int(n, "start", 0, &v.start));
  TRY(attr_get_int(n, "end", 0, &v.end));
  if (n->opset < 15 && (v.has_end || node_attr(n, "start")))
    return infer_fail(INFER_ERR_INVALID_MODEL, "Shape: start/end need opset 15 (node has %lld)",
                      (long long)n->opset);
  shape_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Shape: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

/* Negative values count from the back; both ends clamp into [0, rank]. */
static int64_t shape_clamp(int64_t v, int rank) {
  if (v < 0) v += rank;
  return v < 0 ? 0 : v > rank ? rank : v;
}

/* (shape_params.h) */
void shape_range(const shape_params *p, int rank, int64_t *s, int64_t *e) {
  *s = shape_clamp(p->start, rank);
  *e = p->has_end ? shape_clamp(p->end, rank) : rank;
  if (*e < *s) *e = *s;
}

static infer_status shape_infer(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  int64_t s, e;
  shape_range(params, in[0]->rank, &s, &e);
  out[0]->dtype = INFER_DTYPE_INT64;
  out[0]->rank = 1;
  out[0]->dims[0] = e - s;
  return INFER_OK;
}

static infer_status shape_run(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out, void *ws) {
  int64_t s, e;
  shape_range(params, in[0]->rank, &s, &e);
  int64_t *o = out[0]->data;
  for (int64_t i = s; i < e; i++) o[i - s] = in[0]->dims[i];
  return INFER_OK;
}

const op_desc op_shape = {.name = "Shape",
                          .domain = "",
                          .since = 1,
                          .until = OP_OPSET_MAX,
                          .min_inputs = 1,
                          .max_inputs = 1,
                          .min_outputs = 1,
                          .max_outputs = 1,
                          .attrs = shape_attrs,
                          .parse = shape_parse,
                          .infer = shape_infer,
                          .run = shape_run,
                          .fold_from_shape = true};

/* ---- Size (1+) ------------------------------------------------------------------ */

static infer_status size_infer(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out) {
  if (dims_count(in[0]->rank, in[0]->dims) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Size: element count overflows");
  out[0]->dtype = INFER_DTYPE_INT64;
  out[0]->rank = 0;
  return INFER_OK;
}

static infer_status size_run(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out, void *ws) {
  *(int64_t *)out[0]->data = dims_count(in[0]->rank, in[0]->dims);
  return INFER_OK;
}

const op_desc op_size = {.name = "Size",
                         .domain = "",
                         .since = 1,
                         .until = OP_OPSET_MAX,
                         .min_inputs = 1,
                         .max_inputs = 1,
                         .min_outputs = 1,
                         .max_outputs = 1,
                         .infer = size_infer,
                         .run = size_run,
                         .fold_from_shape = true};

/* ---- Identity (1+) ---------------------------------------------------------------- */

static infer_status identity_infer(const node *n, const void *params, const tensor *const *in,
                                   tensor *const *out) {
  size_t es;
  TRY(movement_elem_size("Identity", in[0]->dtype, &es));
  movement_same_shape(in[0], out[0]);
  return INFER_OK;
}

static infer_status copy_run(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out, void *ws) {
  return movement_copy_all(in[0], out[0]);
}

const op_desc op_identity = {.name = "Identity",
                             .domain = "",
                             .since = 1,
                             .until = OP_OPSET_MAX,
                             .min_inputs = 1,
                             .max_inputs = 1,
                             .min_outputs = 1,
                             .max_outputs = 1,
                             .infer = identity_infer,
                             .run = copy_run};

/* ---- Dropout (7+), inference mode only --------------------------------------------
 * 7-9: `ratio` attribute, mask of the input's dtype; 10-11: mask bool;
 * 12+: ratio and training_mode inputs, `seed` attribute, mask bool. Without
 * training (or training with ratio 0) the output is the input and the mask is all true. */

static const char *const dropout_attrs[] = {"ratio", "seed", NULL};

static infer_status dropout_parse(const node *n, void **params) {
  float ratio;
  int64_t seed;
  TRY(attr_get_float(n, "ratio", 0.5f, &ratio));
  TRY(attr_get_int(n, "seed", 0, &seed));
  if (n->opset >= 12 && node_attr(n, "ratio"))
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "Dropout: attribute 'ratio' is an input since opset 12");
  if (n->opset < 12 && node_attr(n, "seed"))
    return infer_fail(INFER_ERR_INVALID_MODEL, "Dropout: attribute 'seed' needs opset 12");
  if (n->opset < 12 && n->n_inputs > 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Dropout: opset %lld takes one input, not %d",
                      (long long)n->opset, n->n_inputs);
  return INFER_OK;
}

/* Training mode, when its value is known; a random dropout is not implemented (one of
 * ratio 0 is the identity). */
static infer_status dropout_check_training(const node *n, const tensor *const *in) {
  if (n->opset < 12 || n->n_inputs < 3 || !in[2] || !in[2]->data) return INFER_OK;
  if (in[2]->dtype != INFER_DTYPE_BOOL || dims_count(in[2]->rank, in[2]->dims) != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Dropout: training_mode must be one bool");
  if (!dropout_drops_nothing(in[1], in[2]))
    return infer_fail(INFER_ERR_UNSUPPORTED, "Dropout: training_mode=true with a ratio other "
                      "than 0 (random dropout) is not supported");
  return INFER_OK;
}

static infer_status dropout_infer(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out) {
  size_t es;
  TRY(movement_elem_size("Dropout", in[0]->dtype, &es));
  TRY(dropout_check_training(n, in));
  movement_same_shape(in[0], out[0]);
  if (n->n_outputs > 1 && out[1]) {
    movement_same_shape(in[0], out[1]);
    if (n->opset >= 10) out[1]->dtype = INFER_DTYPE_BOOL;
  }
  return INFER_OK;
}

static infer_status dropout_run(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out, void *ws) {
  TRY(dropout_check_training(n, in));
  TRY(movement_copy_all(in[0], out[0]));
  if (n->n_outputs > 1 && out[1]) {
    int64_t count = dims_count(out[1]->rank, out[1]->dims);
    if (out[1]->dtype == INFER_DTYPE_BOOL)
      memset(out[1]->data, 1, (size_t)count);
    else /* opset 7-9: the mask has the input's (float) dtype */
      for (int64_t i = 0; i < count; i++) tensor_set_f64(out[1], i, 1.0);
  }
  return INFER_OK;
}

const op_desc op_dropout = {.name = "Dropout",
                            .domain = "",
                            .since = 7,
                            .until = OP_OPSET_MAX,
                            .min_inputs = 1,
                            .max_inputs = 3,
                            .min_outputs = 1,
                            .max_outputs = 2,
                            .attrs = dropout_attrs,
                            .parse = dropout_parse,
                            .infer = dropout_infer,
                            .run = dropout_run};

/* ---- the family ---------------------------------------------------------------------- */

extern const op_desc op_constant, op_constant_of_shape, op_range;
extern const op_desc op_reshape, op_flatten, op_squeeze, op_unsqueeze, op_expand;

const op_desc *const ops_shape[] = {
    &op_shape,    &op_size,    &op_constant, &op_constant_of_shape, &op_range,
    &op_reshape,  &op_flatten, &op_squeeze,  &op_unsqueeze,         &op_expand,
    &op_identity, &op_dropout, NULL,
};
