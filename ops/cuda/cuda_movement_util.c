/* cuda_movement_util.c: the helpers of cuda_movement_util.h. */
#include <string.h>

#include "cuda_movement_util.h"

infer_status mv_elem_size(const char *op, const tensor *t, int64_t *es) {
  *es = (int64_t)infer_dtype_size(t->dtype);
  if (*es == 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: dtype %s is not supported", op,
                      infer_dtype_name(t->dtype));
  return INFER_OK;
}

void mv_elem_convert(const tensor *t, int64_t i, infer_dtype to, void *dst) {
  size_t es = infer_dtype_size(to);
  if (t->dtype == to) {
    memcpy(dst, (const char *)t->data + (size_t)i * es, es);
    return;
  }
  tensor d = {.dtype = to, .rank = 0, .data = dst};
  if (dtype_is_float(t->dtype) || dtype_is_float(to))
    tensor_set_f64(&d, 0, tensor_get_f64(t, i));
  else
    tensor_set_i64(&d, 0, tensor_get_i64(t, i));
}

void mv_elem_from_f64(infer_dtype to, double v, void *dst) {
  tensor d = {.dtype = to, .rank = 0, .data = dst};
  tensor_set_f64(&d, 0, v);
}

void mv_dev_buf_release(void *s) {
  mv_dev_buf *b = s;
  if (!b) return;
  if (b->p) cudaFree(b->p);
  free(b);
}

infer_status mv_upload(const void *host, int64_t bytes, void **dev) {
  CUDA_TRY(cudaMalloc(dev, (size_t)(bytes > 0 ? bytes : 1)));
  if (bytes > 0) CUDA_TRY(cudaMemcpy(*dev, host, (size_t)bytes, cudaMemcpyHostToDevice));
  return INFER_OK;
}

infer_status mv_same_bytes_check(const node *n, const tensor *a, const tensor *b) {
  int64_t es;
  TRY(mv_elem_size(n->op_type, a, &es));
  int64_t x = tensor_nbytes(a), y = tensor_nbytes(b);
  if (x < 0 || x != y)
    return infer_fail(INFER_ERR_INTERNAL, "%s on the GPU: input and output byte sizes differ",
                      n->op_type);
  return INFER_OK;
}

infer_status mv_copy_bytes(const cuda_exec *x, const tensor *a, tensor *b) {
  int64_t bytes = tensor_nbytes(a);
  if (bytes > 0 && a->data != b->data)
    CUDA_TRY(cudaMemcpyAsync(b->data, a->data, (size_t)bytes, cudaMemcpyDeviceToDevice,
                             MV_STREAM(x)));
  return INFER_OK;
}

infer_status mv_view_prepare(const cuda_exec *x, const node *n, const void *params,
                             const tensor *const *in, const tensor *const *host_in,
                             tensor *const *out, void **state, int64_t *ws_bytes) {
  return mv_same_bytes_check(n, in[0], out[0]);
}

infer_status mv_view_run(const cuda_exec *x, const node *n, const void *params,
                         const void *state, const tensor *const *in, tensor *const *out) {
  return mv_copy_bytes(x, in[0], out[0]);
}

infer_status mv_broadcast_view_prepare(const cuda_exec *x, const node *n, const void *params,
                                       const tensor *const *in, const tensor *const *host_in,
                                       tensor *const *out, void **state, int64_t *ws_bytes) {
  int64_t es;
  TRY(mv_elem_size(n->op_type, in[0], &es));
  if (out[0]->dtype != in[0]->dtype || out[0]->rank < in[0]->rank)
    return infer_fail(INFER_ERR_INTERNAL, "%s on the GPU: unexpected output", n->op_type);
  return INFER_OK;
}
