/* cuda_attention.c: FusedAttention (ops/attention_fused.h) on the GPU: one launch of
 * our fused kernel (kernels/attention.cu) or one run of cuDNN's SDPA
 * (attention_cudnn.c), each reading Q, K and V through their views and writing O
 * through its view. In float16 both are timed at build on scratch tensors and the
 * faster kept; config cuda.attention_impl=flash or =cudnn takes one (cudnn where cuDNN
 * takes the problem, else ours). */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../../core/cuda_check.h"
#include "../../kernels/attention.h"
#include "../attention_fused.h"
#include "../cuda_op.h"
#include "attention_cudnn.h"

typedef struct attn_state {
  k_attn_view view[4];
  int kdt;
  int tensor_cores; /* the loaded code has the tensor-core kernel */
  sdpa_plan *sdpa;  /* cuDNN's plan when it was chosen, else NULL */
} attn_state;

static void attn_release(void *p) {
  attn_state *s = p;
  if (!s) return;
  sdpa_cudnn_release(s->sdpa);
  free(s);
}

static cudaError_t launch(const attn_state *s, const fused_attention_params *p, const void *q,
                          const void *k, const void *v, void *o, cudaStream_t st) {
  return k_attention(s->kdt, q, k, v, o, &s->view[ATTN_Q], &s->view[ATTN_K], &s->view[ATTN_V],
                     &s->view[ATTN_O], p->scale, p->kv_group > 0 ? p->kv_group : 1, p->causal,
                     p->causal_offset, s->tensor_cores, st);
}

/* Milliseconds per launch of our kernel on the scratch tensors (three after a warm-up);
 * -1 when it fails. */
static float time_ours(const attn_state *s, const fused_attention_params *p,
                       void *const *scratch, cudaStream_t st) {
  cudaEvent_t e0 = NULL, e1 = NULL;
  float ms = -1;
  bool ok = cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess;
  for (int r = 0; r < 4 && ok; r++) {
    if (r == 1) ok = cudaEventRecord(e0, st) == cudaSuccess;
    if (ok) ok = launch(s, p, scratch[0], scratch[1], scratch[2], scratch[3], st) == cudaSuccess;
  }
  if (ok && cudaEventRecord(e1, st) == cudaSuccess && cudaEventSynchronize(e1) == cudaSuccess &&
      cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess)
    ms /= 3;
  else
    ms = -1;
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  cudaGetLastError();
  return ms;
}

/* float16: cuDNN's SDPA against our kernel, timed on zero-filled scratch as large as the
 * tensors (the time of either does not depend on the values); s->sdpa set when cuDNN's
 * is kept. A refusal of cuDNN's is no error: ours runs. */
static infer_status choose(const cuda_exec *x, attn_state *s, const fused_attention_params *p,
                           const tensor *const *in, tensor *const *out, const char *impl,
                           int64_t *ws_bytes) {
  cudaStream_t st = (cudaStream_t)x->stream;
  int64_t bytes[4];
  void *scratch[4] = {NULL, NULL, NULL, NULL};
  infer_status rc = INFER_OK;
  for (int t = 0; t < 4; t++) {
    bytes[t] = tensor_nbytes(t < 3 ? in[t] : out[0]);
    if (bytes[t] <= 0 || cudaMalloc(&scratch[t], (size_t)bytes[t]) != cudaSuccess ||
        cudaMemsetAsync(scratch[t], 0, (size_t)bytes[t], st) != cudaSuccess) {
      cudaGetLastError();
      rc = infer_fail(INFER_ERR_OUT_OF_MEMORY, "FusedAttention: no device memory to time the "
                      "implementations");
      goto done;
    }
  }
  sdpa_plan *plan = NULL;
  int64_t ws = 0;
  float cudnn_ms = -1;
  const k_attn_view *v = s->view;
  if (sdpa_cudnn_prepare((cudnnHandle_t)x->cudnn, &v[ATTN_Q], &v[ATTN_K], &v[ATTN_V], &v[ATTN_O],
                         p->scale, p->kv_group > 0 ? p->kv_group : 1, p->causal,
                         p->causal_offset, st, (const void *const *)scratch, &plan, &ws,
                         &cudnn_ms) != INFER_OK)
    goto done; /* ours */
  bool take = impl && strcmp(impl, "cudnn") == 0;
  if (!take) {
    float ours = time_ours(s, p, scratch, st);
    take = ours < 0 || cudnn_ms < ours;
  }
  if (take && ws <= x->ws_limit) {
    s->sdpa = plan;
    *ws_bytes = ws;
  } else {
    sdpa_cudnn_release(plan);
  }
done:
  cudaStreamSynchronize(st);
  cudaGetLastError();
  for (int t = 0; t < 4; t++)
    if (scratch[t]) cudaFree(scratch[t]);
  return rc;
}

static infer_status attn_prepare(const cuda_exec *x, const node *n, const void *params,
                                 const tensor *const *in, const tensor *const *host_in,
                                 tensor *const *out, void **state, int64_t *ws_bytes) {
  const fused_attention_params *p = params;
  infer_dtype dt = in[0]->dtype;
  if (dt != INFER_DTYPE_FLOAT16 && dt != INFER_DTYPE_FLOAT32)
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedAttention on the GPU: dtype %s",
                      infer_dtype_name(dt));
  if (p->view[ATTN_V].dims[3] > 256)
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedAttention on the GPU: a value dim of %lld "
                      "(at most 256)", (long long)p->view[ATTN_V].dims[3]);
  for (int k = 0; k < 4; k++)
    if (p->view[k].strides[3] != 1)
      return infer_fail(INFER_ERR_UNSUPPORTED, "FusedAttention on the GPU: %s is not contiguous "
                        "along its rows", attn_view_attr[k]);
  attn_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  s->kdt = (int)dt;
  for (int k = 0; k < 4; k++) {
    s->view[k].offset = p->view[k].offset;
    memcpy(s->view[k].dims, p->view[k].dims, sizeof s->view[k].dims);
    memcpy(s->view[k].strides, p->view[k].strides, sizeof s->view[k].strides);
  }
  CUDA_TRY(k_attention_prepare(&s->tensor_cores));
  const char *impl = config_get(x->cfg, "cuda.attention_impl");
  if (impl && strcmp(impl, "flash") != 0 && strcmp(impl, "cudnn") != 0)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "config cuda.attention_impl: '%s' is neither "
                      "flash nor cudnn", impl);
  if (dt == INFER_DTYPE_FLOAT16 && !(impl && strcmp(impl, "flash") == 0))
    return choose(x, s, p, in, out, impl, ws_bytes);
  return INFER_OK;
}

static infer_status attn_run(const cuda_exec *x, const node *n, const void *params,
                             const void *state, const tensor *const *in, tensor *const *out) {
  const attn_state *s = state;
  const fused_attention_params *p = params;
  if (s->sdpa)
    return sdpa_cudnn_run((cudnnHandle_t)x->cudnn, s->sdpa, in[0]->data, in[1]->data,
                          in[2]->data, out[0]->data, x->ws);
  CUDA_LAUNCH_TRY(launch(s, p, in[0]->data, in[1]->data, in[2]->data, out[0]->data,
                         (cudaStream_t)x->stream));
  return INFER_OK;
}

static const char *attn_impl(const void *state) {
  const attn_state *s = state;
  if (s->sdpa) return sdpa_cudnn_name(s->sdpa);
  return s->tensor_cores &&
                 k_attention_tensor_cores(s->kdt, s->view[ATTN_Q].dims[3], s->view[ATTN_V].dims[3])
             ? "flash-attention"
             : "attention-rowwise";
}

static const cuda_op cuda_fused_attention = {.name = "FusedAttention", .domain = "infer",
                                             .prepare = attn_prepare, .run = attn_run,
                                             .release = attn_release, .needs = CUDA_NEEDS_CUDNN,
                                             .impl = attn_impl};
const cuda_op *const cuda_ops_attention[] = {&cuda_fused_attention, NULL};
