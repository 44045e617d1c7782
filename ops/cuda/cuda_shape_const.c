/* cuda_shape_const.c: the GPU side of ops/shape_const.c: Constant, ConstantOfShape
 * (values from the CPU op's params, ../shape_params.h, converted to the storage dtype
 * at prepare) and Range. */
#include <stdlib.h>

#include "../../kernels/copy.h"
#include "../shape_params.h"
#include "cuda_movement_util.h"

/* ---- Constant: the value converted to the storage dtype and kept on the device --------- */

static infer_status constant_prepare(const cuda_exec *x, const node *n, const void *params,
                                     const tensor *const *in, const tensor *const *host_in,
                                     tensor *const *out, void **state, int64_t *ws_bytes) {
  tensor src;
  const void *data = NULL;
  if (!params) return infer_fail(INFER_ERR_INTERNAL, "Constant: attributes were not parsed");
  TRY(constant_source(n, params, &src, &data)); /* the CPU op's value (shape_params.h) */
  src.data = (void *)data;
  int64_t count = dims_count(src.rank, src.dims), es;
  TRY(mv_elem_size("Constant", out[0], &es));
  if (count < 0 || count != dims_count(out[0]->rank, out[0]->dims) || (count > 0 && !src.data) ||
      infer_dtype_size(src.dtype) == 0)
    return infer_fail(INFER_ERR_INTERNAL, "Constant on the GPU: value and output differ");
  mv_dev_buf *b;
  MV_NEW_STATE(b, sizeof *b);
  b->bytes = count * es;
  unsigned char *host = malloc((size_t)(b->bytes > 0 ? b->bytes : 1));
  if (!host) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int64_t i = 0; i < count; i++) mv_elem_convert(&src, i, out[0]->dtype, host + i * es);
  infer_status st = mv_upload(host, b->bytes, &b->p);
  free(host);
  return st;
}

static infer_status constant_run(const cuda_exec *x, const node *n, const void *params,
                                 const void *state, const tensor *const *in, tensor *const *out) {
  const mv_dev_buf *b = state;
  if (b->bytes > 0)
    CUDA_TRY(cudaMemcpyAsync(out[0]->data, b->p, (size_t)b->bytes, cudaMemcpyDeviceToDevice,
                             MV_STREAM(x)));
  return INFER_OK;
}

const cuda_op cuda_constant = {.name = "Constant", .prepare = constant_prepare,
                               .run = constant_run, .release = mv_dev_buf_release};

/* ---- ConstantOfShape: one element repeated ------------------------------------------------ */

typedef struct fill_state {
  int es;
  unsigned char value[16];
} fill_state;

static infer_status cos_prepare(const cuda_exec *x, const node *n, const void *params,
                                const tensor *const *in, const tensor *const *host_in,
                                tensor *const *out, void **state, int64_t *ws_bytes) {
  fill_state *s;
  int64_t es;
  const cos_params *p = params;
  TRY(mv_elem_size("ConstantOfShape", out[0], &es));
  if (es > 8)
    return infer_fail(INFER_ERR_UNSUPPORTED, "ConstantOfShape on the GPU: dtype %s",
                      infer_dtype_name(out[0]->dtype));
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "ConstantOfShape: attributes were not parsed");
  MV_NEW_STATE(s, sizeof *s);
  s->es = (int)es;
  /* the CPU op's element (shape_params.h; absent: float 0, all-zero bytes in every dtype) */
  tensor v = {.dtype = p->dtype, .rank = 0, .data = (void *)p->value};
  mv_elem_convert(&v, 0, out[0]->dtype, s->value);
  return INFER_OK;
}

static infer_status fill_run(const cuda_exec *x, const node *n, const void *params,
                             const void *state, const tensor *const *in, tensor *const *out) {
  const fill_state *s = state;
  CUDA_LAUNCH_TRY(k_fill_pattern(s->es, s->value, out[0]->data,
                                 dims_count(out[0]->rank, out[0]->dims), MV_STREAM(x)));
  return INFER_OK;
}

const cuda_op cuda_constant_of_shape = {.name = "ConstantOfShape", .prepare = cos_prepare,
                                        .run = fill_run};

/* ---- Range: start and delta read on the device; the count is the output shape ---------- */

static infer_status range_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  infer_dtype t = out[0]->dtype;
  if (in[0]->dtype != t || in[2]->dtype != t || out[0]->rank != 1 || t == INFER_DTYPE_BOOL ||
      infer_dtype_size(t) == 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Range on the GPU: dtype %s is not supported",
                      infer_dtype_name(t));
  return INFER_OK;
}

static infer_status range_run(const cuda_exec *x, const node *n, const void *params,
                              const void *state, const tensor *const *in, tensor *const *out) {
  CUDA_LAUNCH_TRY(k_range((int)out[0]->dtype, in[0]->data, in[2]->data, out[0]->data,
                          out[0]->dims[0], MV_STREAM(x)));
  return INFER_OK;
}

const cuda_op cuda_range = {.name = "Range", .prepare = range_prepare, .run = range_run};
