/* cuda_ew_chain.c: FusedChain (ops/elementwise_chain.h) on the GPU: the broadcast geometry
 * of its inputs, merged where they all walk the output contiguously, made at build; one
 * kernel launch (kernels/ew_chain.cu) per run. */
#include <stdlib.h>
#include <string.h>

#include "../../core/cuda_check.h"
#include "../../kernels/ew_chain.h"
#include "../cuda_op.h"
#include "../elementwise_chain.h"

typedef struct chain_state {
  k_ewc_geom g;
} chain_state;

static infer_status chain_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  const tensor *y = out[0];
  infer_dtype dt = y->dtype;
  if (dt != INFER_DTYPE_FLOAT32 && dt != INFER_DTYPE_FLOAT16 && dt != INFER_DTYPE_BFLOAT16)
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedChain on the GPU: dtype %s",
                      infer_dtype_name(dt));
  if (n->n_inputs > EWC_MAX_INPUTS)
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedChain on the GPU: %d inputs", n->n_inputs);
  chain_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  int r = y->rank;
  int64_t st[EWC_MAX_INPUTS][INFER_MAX_RANK];
  const fused_chain_params *p = params;
  for (int k = 0; k < n->n_inputs; k++) ewc_input_strides(p, k, in[k], y, st[k], &s->g.offset[k]);
  /* merge dims, innermost first, skipping size-1 ones */
  k_ewc_geom *g = &s->g;
  g->n_in = n->n_inputs;
  int64_t dims[INFER_MAX_RANK], ms[EWC_MAX_INPUTS][INFER_MAX_RANK];
  int m = 0;
  for (int d = r - 1; d >= 0; d--) {
    if (y->dims[d] == 1) continue;
    bool merge = m > 0;
    for (int k = 0; merge && k < n->n_inputs; k++)
      merge = st[k][d] == ms[k][m - 1] * dims[m - 1];
    if (merge) {
      dims[m - 1] *= y->dims[d];
      continue;
    }
    dims[m] = y->dims[d];
    for (int k = 0; k < n->n_inputs; k++) ms[k][m] = st[k][d];
    m++;
  }
  if (m == 0) { /* a scalar */
    dims[0] = 1;
    for (int k = 0; k < n->n_inputs; k++) ms[k][0] = 0;
    m = 1;
  }
  if (m > EWC_MAX_RANK)
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedChain on the GPU: %d dims after merging (at "
                      "most %d)", m, EWC_MAX_RANK);
  g->rank = m;
  for (int d = 0; d < m; d++) { /* back to outermost first */
    g->dims[d] = dims[m - 1 - d];
    for (int k = 0; k < n->n_inputs; k++) g->strides[k][d] = ms[k][m - 1 - d];
  }
  return INFER_OK;
}

static infer_status chain_run(const cuda_exec *x, const node *n, const void *params,
                              const void *state, const tensor *const *in, tensor *const *out) {
  const chain_state *s = state;
  const fused_chain_params *p = params;
  const void *ptrs[EWC_MAX_INPUTS];
  for (int k = 0; k < n->n_inputs; k++) ptrs[k] = in[k]->data;
  CUDA_LAUNCH_TRY(k_ew_chain((int)out[0]->dtype, ptrs, out[0]->data, &s->g, p->steps, p->n_steps,
                             (cudaStream_t)x->stream));
  return INFER_OK;
}

static const cuda_op cuda_fused_chain = {.name = "FusedChain", .domain = "infer",
                                         .prepare = chain_prepare, .run = chain_run};
const cuda_op *const cuda_ops_elementwise_chain[] = {&cuda_fused_chain, NULL};
