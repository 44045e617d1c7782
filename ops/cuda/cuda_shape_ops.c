/* cuda_shape_ops.c: the GPU side of ops/shape_ops.c (Shape, Size, Identity, Dropout)
 * and the shape family's list (its other ops are in cuda_shape_const.c,
 * cuda_shape_expand.c and cuda_shape_reshape.c, as on the CPU). */
#include "../../kernels/copy.h"
#include "../shape_params.h"
#include "cuda_movement_util.h"

/* ---- Dropout (inference: a copy, and a mask of ones) ------------------------------------ */

typedef struct dropout_state {
  int mask_es;
  unsigned char one[16]; /* 1 (true) in the mask's storage dtype */
} dropout_state;

static infer_status dropout_prepare(const cuda_exec *x, const node *n, const void *params,
                                    const tensor *const *in, const tensor *const *host_in,
                                    tensor *const *out, void **state, int64_t *ws_bytes) {
  dropout_state *s;
  TRY(mv_same_bytes_check(n, in[0], out[0]));
  if (n->opset >= 12 && mv_input_given(n, in, 2)) {
    const tensor *t = host_in[2];
    if (!t)
      return infer_fail(INFER_ERR_UNSUPPORTED,
                        "Dropout on the GPU: training_mode must be a constant");
    if (t->dtype != INFER_DTYPE_BOOL || dims_count(t->rank, t->dims) != 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Dropout: training_mode must be one bool");
    const tensor *ratio = mv_input_given(n, in, 1) ? host_in[1] : NULL;
    if (mv_input_given(n, in, 1) && !ratio)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Dropout on the GPU: ratio must be a constant");
    if (!dropout_drops_nothing(ratio, t))
      return infer_fail(INFER_ERR_UNSUPPORTED, "Dropout: training_mode=true with a ratio other "
                        "than 0 (random dropout) is not supported");
  }
  MV_NEW_STATE(s, sizeof *s);
  if (n->n_outputs > 1 && out[1]) {
    int64_t es;
    TRY(mv_elem_size("Dropout mask", out[1], &es));
    if (es > 8)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Dropout on the GPU: mask dtype %s",
                        infer_dtype_name(out[1]->dtype));
    s->mask_es = (int)es;
    mv_elem_from_f64(out[1]->dtype, 1.0, s->one); /* bool: 1; opset 7-9: 1.0 in x's dtype */
  }
  return INFER_OK;
}

static infer_status dropout_run(const cuda_exec *x, const node *n, const void *params,
                                const void *state, const tensor *const *in, tensor *const *out) {
  const dropout_state *s = state;
  TRY(mv_copy_bytes(x, in[0], out[0]));
  if (s->mask_es > 0 && n->n_outputs > 1 && out[1])
    CUDA_LAUNCH_TRY(k_fill_pattern(s->mask_es, s->one, out[1]->data,
                                   dims_count(out[1]->rank, out[1]->dims), MV_STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_dropout = {.name = "Dropout", .prepare = dropout_prepare,
                                     .run = dropout_run};

/* ---- Shape and Size: values known from shapes at prepare; a tiny kernel writes them ----- */

typedef struct ints_state {
  int n;
  int64_t v[8];
} ints_state;

static infer_status shape_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  ints_state *s;
  int64_t start, end;
  if (!params) return infer_fail(INFER_ERR_INTERNAL, "Shape: attributes were not parsed");
  shape_range(params, in[0]->rank, &start, &end);
  if (end - start > 8 || out[0]->dtype != INFER_DTYPE_INT64 ||
      dims_count(out[0]->rank, out[0]->dims) != end - start)
    return infer_fail(INFER_ERR_INTERNAL, "Shape on the GPU: unexpected output");
  MV_NEW_STATE(s, sizeof *s);
  s->n = (int)(end - start);
  for (int64_t i = start; i < end; i++) s->v[i - start] = in[0]->dims[i];
  return INFER_OK;
}

static infer_status size_prepare(const cuda_exec *x, const node *n, const void *params,
                                 const tensor *const *in, const tensor *const *host_in,
                                 tensor *const *out, void **state, int64_t *ws_bytes) {
  ints_state *s;
  if (out[0]->dtype != INFER_DTYPE_INT64)
    return infer_fail(INFER_ERR_INTERNAL, "Size on the GPU: unexpected output");
  MV_NEW_STATE(s, sizeof *s);
  s->n = 1;
  s->v[0] = dims_count(in[0]->rank, in[0]->dims);
  return INFER_OK;
}

static infer_status ints_run(const cuda_exec *x, const node *n, const void *params,
                             const void *state, const tensor *const *in, tensor *const *out) {
  const ints_state *s = state;
  CUDA_LAUNCH_TRY(k_write_i64(s->v, s->n, out[0]->data, MV_STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_shape = {.name = "Shape", .prepare = shape_prepare, .run = ints_run};
static const cuda_op cuda_size = {.name = "Size", .prepare = size_prepare, .run = ints_run};

/* ---- Identity: a view ------------------------------------------------------------------ */

static const cuda_op cuda_identity = {.name = "Identity", .prepare = mv_view_prepare,
                                      .run = mv_view_run};

/* ---- the family ------------------------------------------------------------------------- */

extern const cuda_op cuda_constant, cuda_constant_of_shape, cuda_range, cuda_expand, cuda_reshape,
    cuda_flatten, cuda_squeeze, cuda_unsqueeze;

const cuda_op *const cuda_ops_shape[] = {
    &cuda_shape,   &cuda_size,    &cuda_constant, &cuda_constant_of_shape, &cuda_range,
    &cuda_reshape, &cuda_flatten, &cuda_squeeze,  &cuda_unsqueeze,         &cuda_expand,
    &cuda_identity, &cuda_dropout, NULL};
