/* cuda_movement_tile.c: the GPU side of ops/movement_tile.c: Tile (a broadcast view of
 * the input) and Trilu. */
#include "../../kernels/copy.h"
#include "../movement_params.h"
#include "cuda_movement_util.h"

/* ---- Tile -------------------------------------------------------------------------------- */

/* Output index r_i * d_i + j_i is the pair (r_i, j_i) with source strides (0, stride_i). */
static infer_status tile_run(const cuda_exec *x, const node *n, const void *params,
                             const void *state, const tensor *const *in, tensor *const *out) {
  const tensor *t = in[0];
  int64_t own[INFER_MAX_RANK], dims[2 * INFER_MAX_RANK], strides[2 * INFER_MAX_RANK];
  if (dims_count(out[0]->rank, out[0]->dims) == 0) return INFER_OK;
  dims_strides(t->rank, t->dims, own);
  for (int i = 0; i < t->rank; i++) {
    dims[2 * i] = t->dims[i] ? out[0]->dims[i] / t->dims[i] : 0;
    strides[2 * i] = 0;
    dims[2 * i + 1] = t->dims[i];
    strides[2 * i + 1] = own[i];
  }
  CUDA_LAUNCH_TRY(k_copy_view((int64_t)infer_dtype_size(t->dtype), 2 * t->rank, dims, strides,
                              NULL, t->data, out[0]->data, MV_STREAM(x)));
  return INFER_OK;
}

const cuda_op cuda_tile = {.name = "Tile", .prepare = mv_broadcast_view_prepare,
                           .run = tile_run};

/* ---- Trilu: k (optional input) is read on the device ------------------------------------- */

typedef struct trilu_state {
  int upper;
} trilu_state;

static infer_status trilu_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  trilu_state *s;
  int64_t es;
  const trilu_params *p = params;
  TRY(mv_elem_size("Trilu", in[0], &es));
  if (es > 8 || in[0]->rank < 2)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Trilu on the GPU: unsupported input");
  if (mv_input_given(n, in, 1) &&
      (in[1]->dtype != INFER_DTYPE_INT64 || dims_count(in[1]->rank, in[1]->dims) != 1))
    return infer_fail(INFER_ERR_INVALID_MODEL, "Trilu: k must be one int64");
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "Trilu: attributes were not parsed");
  MV_NEW_STATE(s, sizeof *s);
  s->upper = p->upper != 0;
  return INFER_OK;
}

static infer_status trilu_run(const cuda_exec *x, const node *n, const void *params,
                              const void *state, const tensor *const *in, tensor *const *out) {
  const tensor *t = in[0];
  int r = t->rank;
  CUDA_LAUNCH_TRY(k_trilu((int)infer_dtype_size(t->dtype), ((const trilu_state *)state)->upper,
                          mv_input_given(n, in, 1) ? (const int64_t *)in[1]->data : NULL, t->data,
                          out[0]->data, dims_count(r - 2, t->dims), t->dims[r - 2], t->dims[r - 1],
                          MV_STREAM(x)));
  return INFER_OK;
}

const cuda_op cuda_trilu = {.name = "Trilu", .prepare = trilu_prepare, .run = trilu_run};
