/* cuda_attention.c: FusedAttention (ops/attention_fused.h) on the GPU: one launch of
 * our fused kernel (kernels/attention.cu) or one run of cuDNN's SDPA
 * (attention_cudnn.c), each reading Q, K and V through their views and writing O
 * through its view. In float16 both are timed at build on scratch tensors and the
 * faster kept; config cuda.attention_impl=flash or =cudnn takes one (cudnn where cuDNN
 * takes the problem, else ours). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../../core/cuda_check.h"
#include "../../kernels/attention.h"
#include "../attention_fused.h"
#include "../cuda_op.h"
#include "algo_cache.h"
#include "attention_cudnn.h"
#include "cuda_timing.h"

typedef struct attn_state {
  k_attn_view view[4];
  int kdt;
  int tensor_cores; /* the loaded code has the tensor-core kernel */
  sdpa_plan *sdpa;  /* cuDNN's plan when it was chosen, else NULL */
  /* cuDNN's plan when ours was chosen: held (not run) so that the engine's other steps
   * of this shape find the search done (attention_cudnn.c frees a plan with its last
   * holder) */
  sdpa_plan *held;
} attn_state;

static void attn_release(void *p) {
  attn_state *s = p;
  if (!s) return;
  sdpa_cudnn_release(s->sdpa);
  sdpa_cudnn_release(s->held);
  free(s);
}

static cudaError_t launch(const attn_state *s, const fused_attention_params *p, const void *q,
                          const void *k, const void *v, void *o, cudaStream_t st) {
  return k_attention(s->kdt, q, k, v, o, &s->view[ATTN_Q], &s->view[ATTN_K], &s->view[ATTN_V],
                     &s->view[ATTN_O], p->scale, p->kv_group > 0 ? p->kv_group : 1, p->causal,
                     p->causal_offset, s->tensor_cores, st);
}

typedef struct ours_run {
  const attn_state *s;
  const fused_attention_params *p;
  void *const *scratch;
  cudaStream_t st;
} ours_run;

static bool ours_once(void *ctx) {
  const ours_run *r = ctx;
  return launch(r->s, r->p, r->scratch[0], r->scratch[1], r->scratch[2], r->scratch[3], r->st) ==
         cudaSuccess;
}

/* Milliseconds per launch of our kernel on the scratch tensors; -1 when it fails. */
static float time_ours(const attn_state *s, const fused_attention_params *p,
                       void *const *scratch, cudaStream_t st) {
  ours_run r = {s, p, scratch, st};
  return cuda_time_runs(st, ours_once, &r);
}

/* The algorithm cache's key of this problem: the views (offsets modulo the 16 bytes
 * cuDNN needs), the grouping, the mask and the scale's bits. */
static void cache_key(const attn_state *s, const fused_attention_params *p, char *key,
                      size_t cap) {
  size_t k = 0;
  int w = snprintf(key, cap, "attn:f16");
  k = w > 0 ? (size_t)w : 0;
  for (int t = 0; t < 4 && k < cap; t++) {
    const k_attn_view *v = &s->view[t];
    w = snprintf(key + k, cap - k, ":%lld,%lld,%lld,%lld/%lld,%lld,%lld,%lld/%lld",
                 (long long)v->dims[0], (long long)v->dims[1], (long long)v->dims[2],
                 (long long)v->dims[3], (long long)v->strides[0], (long long)v->strides[1],
                 (long long)v->strides[2], (long long)v->strides[3], (long long)(v->offset % 8));
    k += w > 0 ? (size_t)w : 0;
  }
  uint32_t bits;
  memcpy(&bits, &p->scale, sizeof bits);
  if (k < cap)
    snprintf(key + k, cap - k, ":g%lld:c%d,%lld:s%08x", (long long)p->kv_group, p->causal,
             (long long)p->causal_offset, bits);
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
  /* --cache: v[0] 0 ours, 1 cuDNN's with v[1] its sdpa_cudnn_choice */
  char key[ALGO_CACHE_KEY_MAX + 1];
  cache_key(s, p, key, sizeof key);
  int64_t cv[4] = {-1, -1, 0, 0};
  bool hit = !impl && algo_cache_get(x->algo_cache, key, cv) && (cv[0] == 0 || cv[0] == 1);
  if (hit && cv[0] == 0) return INFER_OK; /* ours, as measured before */
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
                         p->causal_offset, st, (const void *const *)scratch,
                         hit ? (int)cv[1] : -1, &plan, &ws, &cudnn_ms) != INFER_OK) {
    if (!impl) algo_cache_put(x->algo_cache, key, (int64_t[4]){0, 0, 0, 0});
    goto done; /* ours */
  }
  bool take = (impl && strcmp(impl, "cudnn") == 0) || (hit && cudnn_ms == 0);
  if (!take) {
    float ours = time_ours(s, p, scratch, st);
    take = ours < 0 || cudnn_ms < ours;
  }
  take = take && ws <= x->ws_limit;
  if (!impl)
    algo_cache_put(x->algo_cache, key, (int64_t[4]){take ? 1 : 0, sdpa_cudnn_choice(plan), 0, 0});
  if (take) {
    s->sdpa = plan;
    *ws_bytes = ws;
  } else {
    s->held = plan;
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
