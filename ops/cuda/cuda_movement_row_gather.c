/* cuda_movement_row_gather.c: the GPU side of ops/movement_row_gather.c: RowGather's
 * table (ops/row_gather.h) packed into 32-bit entries and uploaded once at prepare,
 * then one kernel (kernels/row_gather.cu) per run. */
#include "../../kernels/row_gather.h"
#include "../row_gather.h"
#include "cuda_movement_util.h"

typedef struct rg_state {
  mv_dev_buf table; /* first: mv_dev_buf_release frees it */
  int sm_count;
} rg_state;

static void rg_release(void *p) { mv_dev_buf_release(p); }

static infer_status rg_prepare(const cuda_exec *x, const node *n, const void *params,
                               const tensor *const *in, const tensor *const *host_in,
                               tensor *const *out, void **state, int64_t *ws_bytes) {
  (void)host_in;
  (void)out;
  (void)ws_bytes;
  const row_gather_params *p = params;
  int64_t es;
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "RowGather: attributes were not parsed");
  TRY(mv_elem_size("RowGather", in[0], &es));
  if (es != 1 && es != 2 && es != 4 && es != 8)
    return infer_fail(INFER_ERR_UNSUPPORTED, "RowGather on the GPU: %lld-byte elements",
                      (long long)es);
  if (n->n_inputs > K_ROW_GATHER_MAX || n->n_outputs > K_ROW_GATHER_MAX)
    return infer_fail(INFER_ERR_UNSUPPORTED, "RowGather on the GPU: at most %d inputs and outputs",
                      K_ROW_GATHER_MAX);
  uint32_t *packed = malloc(sizeof(uint32_t) * (size_t)(p->n_table > 0 ? p->n_table : 1));
  if (!packed) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int64_t t = 0; t < p->n_table; t++) {
    int64_t col = row_gather_column(p->table[t]);
    if (col >= (1 << 24)) {
      free(packed);
      return infer_fail(INFER_ERR_UNSUPPORTED, "RowGather on the GPU: rows of more than 2^24 "
                        "elements");
    }
    packed[t] = (uint32_t)row_gather_input(p->table[t]) << 24 | (uint32_t)col;
  }
  rg_state *s = calloc(1, sizeof *s);
  if (!s) {
    free(packed);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  s->sm_count = x->sm_count;
  s->table.bytes = p->n_table * (int64_t)sizeof(uint32_t);
  infer_status st = mv_upload(packed, s->table.bytes, &s->table.p);
  free(packed);
  if (st != INFER_OK) {
    rg_release(s);
    return st;
  }
  *state = s;
  return INFER_OK;
}

static infer_status rg_run(const cuda_exec *x, const node *n, const void *params,
                           const void *state, const tensor *const *in, tensor *const *out) {
  const row_gather_params *p = params;
  const rg_state *s = state;
  k_row_gather a = {.n_in = n->n_inputs, .n_out = 0, .table = s->table.p, .n_table = p->n_table};
  a.rows = dims_count(p->prefix, in[0]->dims);
  for (int k = 0; k < n->n_inputs; k++) {
    a.in[k] = in[k]->data;
    a.in_row[k] = dims_count(in[k]->rank - p->prefix, in[k]->dims + p->prefix);
  }
  for (int j = 0; j < n->n_outputs; j++) {
    if (!out[j]) continue; /* an omitted output: its rows are not written */
    a.out[a.n_out] = out[j]->data;
    a.out_row[a.n_out] = p->row[j];
    a.offset[a.n_out] = p->offset[j];
    a.n_out++;
  }
  if (a.n_out == 0) return INFER_OK;
  CUDA_LAUNCH_TRY(k_row_gather_run(&a, (int)infer_dtype_size(in[0]->dtype), s->sm_count,
                                   MV_STREAM(x)));
  return INFER_OK;
}

const cuda_op cuda_row_gather = {.name = "RowGather",
                                 .domain = "infer",
                                 .prepare = rg_prepare,
                                 .run = rg_run,
                                 .release = rg_release};
