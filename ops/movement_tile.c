/* movement_tile.c: Tile and Trilu. */
#include <stdlib.h>
#include <string.h>

#include "movement_copy.h"
#include "movement_params.h"

/* ---- Tile (6+): out.dims[i] = in.dims[i] * repeats[i] ------------------------------------
 * As a view, output index (r_i * d_i + j_i) is the pair (r_i, j_i) with source
 * strides (0, stride_i): a rank-2r broadcast view of the input. */

static infer_status tile_infer(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out) {
  const tensor *x = in[0], *rep = in[1];
  size_t es;
  int64_t reps[INFER_MAX_RANK];
  int nr;
  TRY(movement_elem_size("Tile", x->dtype, &es));
  if (rep->dtype != INFER_DTYPE_INT64 || rep->rank != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Tile: repeats must be a 1-D int64 tensor");
  if (rep->dims[0] != x->rank)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Tile: %lld repeats for rank %d",
                      (long long)rep->dims[0], x->rank);
  if (!rep->data) return OP_NEEDS_DATA;
  TRY(tensor_read_ints(rep, "Tile repeats", reps, INFER_MAX_RANK, &nr));
  for (int i = 0; i < x->rank; i++) {
    if (reps[i] < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Tile: negative repeat %lld", (long long)reps[i]);
    if (!size_mul(x->dims[i], reps[i], &out[0]->dims[i]))
      return infer_fail(INFER_ERR_INVALID_MODEL, "Tile: output size overflows");
  }
  out[0]->dtype = x->dtype;
  out[0]->rank = x->rank;
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Tile: output size overflows");
  return INFER_OK;
}

static infer_status tile_run(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out, void *ws) {
  const tensor *x = in[0];
  int64_t in_strides[INFER_MAX_RANK], dims[MOVEMENT_MAX_VIEW_RANK], strides[MOVEMENT_MAX_VIEW_RANK];
  dims_strides(x->rank, x->dims, in_strides);
  for (int i = 0; i < x->rank; i++) {
    /* x->dims[i] == 0 gives an empty output, which the copy skips */
    dims[2 * i] = x->dims[i] ? out[0]->dims[i] / x->dims[i] : 0;
    strides[2 * i] = 0;
    dims[2 * i + 1] = x->dims[i];
    strides[2 * i + 1] = in_strides[i];
  }
  movement_copy_view(out[0]->data, x->data, infer_dtype_size(x->dtype), 2 * x->rank, dims, strides);
  return INFER_OK;
}

const op_desc op_tile = {.name = "Tile",
                         .domain = "",
                         .since = 6,
                         .until = OP_OPSET_MAX,
                         .min_inputs = 2,
                         .max_inputs = 2,
                         .min_outputs = 1,
                         .max_outputs = 1,
                         .infer = tile_infer,
                         .run = tile_run};

/* ---- Trilu (14+): keep the upper (j - i >= k) or lower (j - i <= k) triangle of the
 * last two dims, zero the rest (all-zero bytes are 0 in every dtype). -------------------- */

static const char *const trilu_attrs[] = {"upper", NULL};

static infer_status trilu_parse(const node *n, void **params) {
  trilu_params v;
  TRY(attr_get_int(n, "upper", 1, &v.upper));
  if (v.upper != 0 && v.upper != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Trilu: upper must be 0 or 1, not %lld",
                      (long long)v.upper);
  trilu_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Trilu: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

static infer_status trilu_infer(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  size_t es;
  TRY(movement_elem_size("Trilu", in[0]->dtype, &es));
  if (in[0]->rank < 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Trilu: input rank %d, needs >= 2", in[0]->rank);
  if (n->n_inputs > 1 && in[1]) {
    if (in[1]->dtype != INFER_DTYPE_INT64 || dims_count(in[1]->rank, in[1]->dims) != 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Trilu: k must be one int64");
  }
  movement_same_shape(in[0], out[0]);
  return INFER_OK;
}

static infer_status trilu_run(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out, void *ws) {
  const tensor *x = in[0];
  bool upper = ((const trilu_params *)params)->upper != 0;
  int64_t k = (n->n_inputs > 1 && in[1]) ? *(const int64_t *)in[1]->data : 0;
  int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
  int64_t batch = dims_count(x->rank - 2, x->dims);
  size_t es = infer_dtype_size(x->dtype), row_bytes = (size_t)cols * es;
  /* beyond +-(rows + cols) every k means the same; clamping keeps i + k in range */
  int64_t lim = rows + cols;
  k = k < -lim ? -lim : k > lim ? lim : k;
  const char *src = x->data;
  char *dst = out[0]->data;
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < rows; i++) {
      int64_t off = (b * rows + i) * (int64_t)row_bytes;
      if (dst != src) memcpy(dst + off, src + off, row_bytes);
      /* zero columns [z0, z1) */
      int64_t z0 = upper ? 0 : i + k + 1, z1 = upper ? i + k : cols;
      z0 = z0 < 0 ? 0 : z0 > cols ? cols : z0;
      z1 = z1 < 0 ? 0 : z1 > cols ? cols : z1;
      if (z1 > z0) memset(dst + off + z0 * (int64_t)es, 0, (size_t)(z1 - z0) * es);
    }
  return INFER_OK;
}

const op_desc op_trilu = {.name = "Trilu",
                          .domain = "",
                          .since = 14,
                          .until = OP_OPSET_MAX,
                          .min_inputs = 1,
                          .max_inputs = 2,
                          .min_outputs = 1,
                          .max_outputs = 1,
                          .attrs = trilu_attrs,
                          .parse = trilu_parse,
                          .infer = trilu_infer,
                          .run = trilu_run};
