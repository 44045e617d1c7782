/* attention.h: fused scaled dot-product attention on the device (FusedAttention,
 * ops/attention_fused.h):
 *
 *   O[b1, b2] = softmax(scale * Q[b1, b2] . K[b1, g]^T [+ causal mask]) . V[b1, g],
 *   g = b2 / kv_group (grouped heads; K's and V's b2 dim is Q's / kv_group)
 *
 * Q [Sq, D], K [Sk, D], V [Sk, Dv], O [Sq, Dv] per batch entry, each addressed through a
 * 4-D strided view (element offset, strides of b1, b2, row, and 1 along the row). The
 * scores never reach memory: float16 with D = Dv a multiple of 16 up to 128 runs a
 * flash-attention kernel on tensor cores (mma.sync m16n8k16, fp32 accumulation, online
 * softmax in registers); other cases a warp per query row in float. */
#ifndef INFER_K_ATTENTION_H
#define INFER_K_ATTENTION_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct k_attn_view {
  int64_t offset;
  int64_t dims[4];    /* b1, b2, rows, cols */
  int64_t strides[4]; /* strides[3] must be 1 */
} k_attn_view;

/* Whether the tensor-core kernel takes this problem's shape (else the float one runs). */
int k_attention_tensor_cores(int dtype, int64_t d, int64_t dv);
/* Build time: *tensor_cores = whether the loaded code has the tensor-core kernel (sm_80
 * and newer), and if so lets it use the shared memory it needs. */
cudaError_t k_attention_prepare(int *tensor_cores);
/* dtype float32 or float16 (k_dtype codes); q, k, v, o the tensors' base pointers;
 * causal: query row i sees key j only when j <= i + causal_offset (a row seeing none is
 * 0); tensor_cores from k_attention_prepare. */
cudaError_t k_attention(int dtype, const void *q, const void *k, const void *v, void *o,
                        const k_attn_view *qv, const k_attn_view *kv, const k_attn_view *vv,
                        const k_attn_view *ov, float scale, int64_t kv_group, int causal,
                        int64_t causal_offset, int tensor_cores, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
