/* cuda_attention.c: FusedAttention (ops/attention_fused.h) on the GPU: one launch of the
 * fused kernel (kernels/attention.cu) reading Q, K and V through their views and writing
 * O through its view. */
#include <stdlib.h>
#include <string.h>

#include "../../core/cuda_check.h"
#include "../../kernels/attention.h"
#include "../attention_fused.h"
#include "../cuda_op.h"

typedef struct attn_state {
  k_attn_view view[4];
  int kdt;
  int tensor_cores; /* the loaded code has the tensor-core kernel */
} attn_state;

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
  return INFER_OK;
}

static infer_status attn_run(const cuda_exec *x, const node *n, const void *params,
                             const void *state, const tensor *const *in, tensor *const *out) {
  const attn_state *s = state;
  const fused_attention_params *p = params;
  CUDA_LAUNCH_TRY(k_attention(s->kdt, in[0]->data, in[1]->data, in[2]->data, out[0]->data,
                              &s->view[ATTN_Q], &s->view[ATTN_K], &s->view[ATTN_V],
                              &s->view[ATTN_O], p->scale, p->kv_group > 0 ? p->kv_group : 1,
                              p->causal, p->causal_offset, s->tensor_cores,
                              (cudaStream_t)x->stream));
  return INFER_OK;
}

static const char *attn_impl(const void *state) {
  const attn_state *s = state;
  return s->tensor_cores &&
                 k_attention_tensor_cores(s->kdt, s->view[ATTN_Q].dims[3], s->view[ATTN_V].dims[3])
             ? "flash-attention"
             : "attention-rowwise";
}

static const cuda_op cuda_fused_attention = {.name = "FusedAttention", .domain = "infer",
                                             .prepare = attn_prepare, .run = attn_run,
                                             .impl = attn_impl};
const cuda_op *const cuda_ops_attention[] = {&cuda_fused_attention, NULL};
