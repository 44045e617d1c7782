/* attention_fused.h: FusedAttention (domain "infer", made by the pass fuse-attention from
 * MatMul -> [scale] -> Softmax(last axis) -> MatMul chains, and by fuse-attention-op from
 * ONNX's Attention op, engine/pass_attention_onnx.c):
 *
 *   O[b1, b2] = softmax(scale * Q[b1, b2] . K[b1, g]^T [+ causal mask]) . V[b1, g],
 *   g = b2 / kv_group
 *
 * with Q [Sq, D], K [Sk, D], V [Sk, Dv] per batch entry, each read through a strided view
 * of its input (the pass folds the Transposes, Reshapes and Slices that fed the products
 * into the views), and O written through a strided view of the output (folding the
 * movement ops that followed). Inputs: the values holding Q, K and V (they may be one
 * value: a fused QKV projection); output: of shape out_shape, every element written.
 * Softmax accumulates in float. The CPU reference is ops/attention_fused.c, the GPU side
 * ops/cuda/cuda_attention.c. */
#ifndef INFER_ATTENTION_FUSED_H
#define INFER_ATTENTION_FUSED_H

#include "op.h"

/* A 4-D strided view [b1, b2, rows, cols] of a tensor's elements. */
typedef struct attn_view {
  int64_t offset;
  int64_t dims[4], strides[4];
} attn_view;

enum { ATTN_Q = 0, ATTN_K, ATTN_V, ATTN_O };

typedef struct fused_attention_params {
  attn_view view[4]; /* Q, K, V in their inputs, O in the output */
  float scale;
  /* Grouped heads (GQA): query entry b2 reads key/value entry b2 / kv_group, so K's and
   * V's dims[1] are Q's / kv_group; 1 when every query head has its own. */
  int64_t kv_group;
  /* causal: query row i sees key j only when j <= i + causal_offset (ONNX Attention's
   * is_causal, offset 0 without a past); a row that sees no key is 0. */
  int causal;
  int64_t causal_offset;
  int out_rank;
  int64_t out_dims[INFER_MAX_RANK];
} fused_attention_params;

/* The attribute names of the views, in ATTN_* order; each holds 9 ints: the offset, the
 * 4 dims, the 4 strides. */
extern const char *const attn_view_attr[4];

#endif
