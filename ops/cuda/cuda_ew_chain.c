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
  const fused_chain_params *p = params;
  int ns = ewc_slots(p, n);
  if (ns > EWC_MAX_INPUTS)
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedChain on the GPU: %d operands", ns);
  chain_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  int r = y->rank;
  int64_t st[EWC_MAX_INPUTS][INFER_MAX_RANK];
  for (int k = 0; k < ns; k++)
    ewc_input_strides(p, k, in[ewc_slot_input(p, k)], y, st[k], &s->g.offset[k]);
  if (p->n_parts > 1) { /* the concatenation walks the output contiguously (kernel: by part) */
    int64_t run = 1;
    for (int d = r - 1; d >= 0; d--) {
      st[0][d] = run;
      run *= y->dims[d];
    }
    s->g.offset[0] = 0;
  }
  /* merge dims, innermost first, skipping size-1 ones; a concatenation's last dim stays
   * apart (the kernel finds the part by its column) */
  k_ewc_geom *g = &s->g;
  g->n_in = ns;
  int64_t dims[INFER_MAX_RANK], ms[EWC_MAX_INPUTS][INFER_MAX_RANK];
  int m = 0;
  for (int d = r - 1; d >= 0; d--) {
    if (y->dims[d] == 1 && !(p->n_parts > 1 && d == r - 1)) continue;
    bool merge = m > 0 && !(p->n_parts > 1 && m == 1);
    for (int k = 0; merge && k < ns; k++)
      merge = st[k][d] == ms[k][m - 1] * dims[m - 1];
    if (merge) {
      dims[m - 1] *= y->dims[d];
      continue;
    }
    dims[m] = y->dims[d];
    for (int k = 0; k < ns; k++) ms[k][m] = st[k][d];
    m++;
  }
  if (m == 0) { /* a scalar */
    dims[0] = 1;
    for (int k = 0; k < ns; k++) ms[k][0] = 0;
    m = 1;
  }
  if (m > EWC_MAX_RANK)
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedChain on the GPU: %d dims after merging (at "
                      "most %d)", m, EWC_MAX_RANK);
  g->rank = m;
  for (int d = 0; d < m; d++) { /* back to outermost first */
    g->dims[d] = dims[m - 1 - d];
    for (int k = 0; k < ns; k++) g->strides[k][d] = ms[k][m - 1 - d];
  }
  g->n_parts = p->n_parts > 1 ? p->n_parts : 0; /* pointers at each run (chain_run) */
  return INFER_OK;
}

static infer_status chain_run(const cuda_exec *x, const node *n, const void *params,
                              const void *state, const tensor *const *in, tensor *const *out) {
  const chain_state *s = state;
  const fused_chain_params *p = params;
  const void *ptrs[EWC_MAX_INPUTS];
  int ns = s->g.n_in;
  for (int k = 0; k < ns; k++) ptrs[k] = in[ewc_slot_input(p, k)]->data;
  const k_ewc_geom *g = &s->g;
  k_ewc_geom gc;
  if (g->n_parts > 0) { /* the parts' addresses and column ends: run-time pointers */
    gc = *g;
    int last = out[0]->rank - 1;
    int64_t end = 0;
    for (int k = 0; k < g->n_parts; k++) {
      gc.part[k] = in[k]->data;
      gc.part_end[k] = end += in[k]->dims[last];
    }
    ptrs[0] = in[0]->data;
    g = &gc;
  }
  CUDA_LAUNCH_TRY(k_ew_chain((int)out[0]->dtype, ptrs, out[0]->data, g, p->steps, p->n_steps,
                             (cudaStream_t)x->stream));
  return INFER_OK;
}

static const cuda_op cuda_fused_chain = {.name = "FusedChain", .domain = "infer",
                                         .prepare = chain_prepare, .run = chain_run};
const cuda_op *const cuda_ops_elementwise_chain[] = {&cuda_fused_chain, NULL};
