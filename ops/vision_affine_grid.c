/* vision_affine_grid.c: AffineGrid (opset 20), the sampling grid of a spatial transformer
 * for GridSample: theta [N, 2, 3] (2-D) or [N, 3, 4] (3-D) applied to the normalized
 * coordinates of an output of size [N, C, H, W] or [N, C, D, H, W] (the `size` input,
 * read at build), giving [N, H, W, 2] or [N, D, H, W, 3] (x, y[, z]). A coordinate along
 * a dim of n points is -1 + (2i + 1) / n, or with align_corners -1 + 2i / (n - 1) (-1
 * for n = 1). */
#include <stdlib.h>
#include <string.h>

#include "op.h"

static const char *const ag_attrs[] = {"align_corners", NULL};

static infer_status ag_parse(const node *n, void **params) {
  int64_t ac;
  TRY(attr_get_int(n, "align_corners", 0, &ac));
  int64_t *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "AffineGrid: out of memory");
  *p = ac;
  *params = p;
  return INFER_OK;
}

/* The spatial sizes (2 or 3 of them) from `size`, theta's shape checked against them. */
static infer_status ag_sizes(const tensor *theta, const tensor *size, int *nd, int64_t *sp) {
  if (!dtype_is_float(theta->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "AffineGrid: theta of dtype %s",
                      infer_dtype_name(theta->dtype));
  if (size->dtype != INFER_DTYPE_INT64 || size->rank != 1 ||
      (size->dims[0] != 4 && size->dims[0] != 5))
    return infer_fail(INFER_ERR_INVALID_MODEL, "AffineGrid: size must be int64 [4] or [5]");
  *nd = (int)size->dims[0] - 2;
  if (theta->rank != 3 || theta->dims[1] != *nd || theta->dims[2] != *nd + 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "AffineGrid: theta must be [N, %d, %d]", *nd,
                      *nd + 1);
  if (!size->data) return OP_NEEDS_DATA;
  if (tensor_get_i64(size, 0) != theta->dims[0])
    return infer_fail(INFER_ERR_INVALID_MODEL, "AffineGrid: size's N %lld is not theta's %lld",
                      (long long)tensor_get_i64(size, 0), (long long)theta->dims[0]);
  for (int k = 0; k < *nd; k++) {
    sp[k] = tensor_get_i64(size, 2 + k);
    if (sp[k] < 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "AffineGrid: size %lld", (long long)sp[k]);
  }
  return INFER_OK;
}

static infer_status ag_infer(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out) {
  int nd = 0;
  int64_t sp[3];
  TRY(ag_sizes(in[0], in[1], &nd, sp));
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = nd + 2;
  out[0]->dims[0] = in[0]->dims[0];
  for (int k = 0; k < nd; k++) out[0]->dims[1 + k] = sp[k];
  out[0]->dims[nd + 1] = nd;
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "AffineGrid: output size overflows");
  return INFER_OK;
}

static double coord(int64_t i, int64_t n, bool align) {
  if (align) return n > 1 ? -1 + 2.0 * (double)i / (double)(n - 1) : -1;
  return -1 + (2.0 * (double)i + 1) / (double)n;
}

static infer_status ag_run(const node *n, const void *params, const tensor *const *in,
                           tensor *const *out, void *ws) {
  (void)ws;
  const bool align = *(const int64_t *)params != 0;
  int nd = 0;
  int64_t sp[3];
  TRY(ag_sizes(in[0], in[1], &nd, sp));
  const tensor *th = in[0];
  const int64_t N = th->dims[0], d = nd == 3 ? sp[0] : 1, h = sp[nd - 2], w = sp[nd - 1];
  int64_t o = 0;
  for (int64_t b = 0; b < N; b++)
    for (int64_t z = 0; z < d; z++)
      for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
          /* the homogeneous point (x, y[, z], 1) */
          const double pt[4] = {coord(x, w, align), coord(y, h, align),
                                nd == 3 ? coord(z, d, align) : 1, 1};
          for (int r = 0; r < nd; r++) {
            double acc = 0;
            for (int c = 0; c <= nd; c++)
              acc += tensor_get_f64(th, (b * nd + r) * (nd + 1) + c) * (c == nd ? 1 : pt[c]);
            tensor_set_f64(out[0], o++, acc);
          }
        }
  return INFER_OK;
}

const op_desc op_affine_grid = {.name = "AffineGrid",
                                .domain = "",
                                .since = 20,
                                .until = OP_OPSET_MAX,
                                .min_inputs = 2,
                                .max_inputs = 2,
                                .min_outputs = 1,
                                .max_outputs = 1,
                                .attrs = ag_attrs,
                                .parse = ag_parse,
                                .infer = ag_infer,
                                .run = ag_run};
