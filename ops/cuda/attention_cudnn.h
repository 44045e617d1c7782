/* attention_cudnn.h: FusedAttention in float16 through cuDNN's scaled dot-product
 * attention (the backend graph API), which ops/cuda/cuda_attention.c times against our
 * flash kernel at build. Two graphs are tried, as cudnn-frontend lowers SDPA: cuDNN's
 * own SDPA operation (cuDNN 9.13 and newer, no mask), then the composite pattern its
 * fused flash-attention engine matches (Q.K^T, scale, causal mask, softmax as max /
 * sub / exp / sum / div with the log-sum-exp branch, .V). Plans are shared by the
 * steps of one process that have the same problem (a transformer's layers), so the
 * engines' runtime compilation happens once per shape. */
#ifndef INFER_ATTENTION_CUDNN_H
#define INFER_ATTENTION_CUDNN_H

#include <cuda_runtime.h>
#include <cudnn.h>
#include <stdint.h>

#include "../../include/infer.h"
#include "../../kernels/attention.h"

typedef struct sdpa_plan sdpa_plan;

/* A plan for O = softmax(scale Q.K^T [causal]).V with float16 Q, K, V, O read through
 * the views (offsets in elements; K's and V's b2 dim is Q's / kv_group), or
 * INFER_ERR_UNSUPPORTED naming why cuDNN takes none. The candidates are timed on
 * stream st (h's) over scratch[0..4), device buffers as large as Q's, K's, V's and O's
 * tensors; *ms: a run of the plan kept, *ws_bytes: the workspace it needs. cached >= 0:
 * an earlier build's sdpa_cudnn_choice, tried first and untimed (*ms 0); the search
 * runs when it no longer builds. */
infer_status sdpa_cudnn_prepare(cudnnHandle_t h, const k_attn_view *q, const k_attn_view *k,
                                const k_attn_view *v, const k_attn_view *o, float scale,
                                int64_t kv_group, int causal, int64_t causal_offset,
                                cudaStream_t st, const void *const *scratch, int cached,
                                sdpa_plan **plan, int64_t *ws_bytes, float *ms);
/* The graph and engine config a plan runs, as one number for the algorithm cache. */
int sdpa_cudnn_choice(const sdpa_plan *plan);
/* Enqueues one run on h's stream: q, k, v, o the tensors' base pointers (the views'
 * offsets are added here), ws at least the prepared workspace. */
infer_status sdpa_cudnn_run(cudnnHandle_t h, const sdpa_plan *plan, const void *q, const void *k,
                            const void *v, void *o, void *ws);
/* Which graph the plan runs: "cudnn-sdpa" (cuDNN's SDPA operation) or "cudnn-sdpa-graph". */
const char *sdpa_cudnn_name(const sdpa_plan *plan);
void sdpa_cudnn_release(sdpa_plan *plan);

#endif
