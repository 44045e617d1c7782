/* conv_col2im.c: Col2Im (18), the adjoint of im2col: input [N, C * prod(block_shape),
 * L] scattered (overlaps summed) into an image [N, C, image_shape...], with the window
 * attributes dilations, pads and strides; L must be the number of block positions.
 * 1 to 3 spatial dims; float32 and float64 (Conv's col2im_f32 / col2im_f64). The
 * output shape comes from image_shape's values. */
#include <stdlib.h>
#include <string.h>

#include "conv_util.h"

typedef struct col2im_params {
  win_attrs w;
} col2im_params;

static const char *const col2im_attrs[] = {"dilations", "pads", "strides", NULL};

static infer_status col2im_parse(const node *n, void **params) {
  col2im_params *p = calloc(1, sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Col2Im: out of memory");
  infer_status s = win_attrs_parse(n, "Col2Im", &p->w);
  if (s != INFER_OK) {
    free(p);
    return s;
  }
  *params = p;
  return INFER_OK;
}

/* The geometry of the forward view (image -> block positions); *c the channels. */
static infer_status col2im_geom(const col2im_params *p, const tensor *const *in, win_geom *g,
                                int64_t *c) {
  const tensor *x = in[0], *img = in[1], *blk = in[2];
  char buf[96];
  if (x->rank != 3)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Col2Im: input %s must be N x (C*K) x L",
                      dims_format(x->rank, x->dims, buf, sizeof buf));
  if (img->rank != 1 || blk->rank != 1 || img->dims[0] != blk->dims[0] ||
      !dtype_is_signed_int(img->dtype) || !dtype_is_signed_int(blk->dtype))
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "Col2Im: image_shape and block_shape must be 1-D integers of one length");
  int nsp = (int)img->dims[0];
  if (nsp < 1 || nsp > WIN_MAX_SPATIAL)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Col2Im: %d spatial dims (supported: 1 to %d)", nsp,
                      WIN_MAX_SPATIAL);
  if (!img->data || !blk->data) return OP_NEEDS_DATA;
  int64_t image[WIN_MAX_SPATIAL], block[WIN_MAX_SPATIAL], k = 1;
  for (int i = 0; i < nsp; i++) {
    image[i] = tensor_get_i64(img, i);
    block[i] = tensor_get_i64(blk, i);
    if (image[i] < 1 || block[i] < 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Col2Im: image_shape / block_shape entry %d "
                        "is not positive", i);
    if (!size_mul(k, block[i], &k)) return infer_fail(INFER_ERR_INVALID_MODEL, "Col2Im: overflow");
  }
  TRY(win_geom_forward(&p->w, nsp, image, block, false, "Col2Im", g));
  if (x->dims[1] % k != 0 || x->dims[2] != win_out_count(g))
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "Col2Im: input %s does not fit %lld-element blocks at %lld positions",
                      dims_format(x->rank, x->dims, buf, sizeof buf), (long long)k,
                      (long long)win_out_count(g));
  *c = x->dims[1] / k;
  return INFER_OK;
}

static infer_status col2im_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  const tensor *x = in[0];
  if (x->dtype != INFER_DTYPE_FLOAT32 && x->dtype != INFER_DTYPE_FLOAT64)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Col2Im: dtype %s (supported: float32, float64)",
                      infer_dtype_name(x->dtype));
  win_geom g;
  int64_t c = 0;
  TRY(col2im_geom(params, in, &g, &c));
  tensor *y = out[0];
  y->dtype = x->dtype;
  y->rank = 2 + g.nsp;
  y->dims[0] = x->dims[0];
  y->dims[1] = c;
  for (int i = 0; i < g.nsp; i++) y->dims[2 + i] = g.in[3 - g.nsp + i];
  if (tensor_nbytes(y) < 0) return infer_fail(INFER_ERR_INVALID_MODEL, "Col2Im: output too large");
  return INFER_OK;
}

static infer_status col2im_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  const tensor *x = in[0];
  tensor *y = out[0];
  win_geom g;
  int64_t c = 0;
  infer_status st = col2im_geom(params, in, &g, &c);
  if (st == OP_NEEDS_DATA) return infer_fail(INFER_ERR_RUNTIME, "Col2Im: shapes not known");
  TRY(st);
  memset(y->data, 0, (size_t)tensor_nbytes(y));
  int64_t xsz = x->dims[1] * x->dims[2], ysz = c * win_in_count(&g);
  for (int64_t b = 0; b < x->dims[0]; b++) {
    if (x->dtype == INFER_DTYPE_FLOAT32)
      col2im_f32((const float *)x->data + b * xsz, c, &g, (float *)y->data + b * ysz);
    else
      col2im_f64((const double *)x->data + b * xsz, c, &g, (double *)y->data + b * ysz);
  }
  return INFER_OK;
}

const op_desc op_col2im = {.name = "Col2Im",
                           .domain = "",
                           .since = 18,
                           .until = OP_OPSET_MAX,
                           .min_inputs = 3,
                           .max_inputs = 3,
                           .min_outputs = 1,
                           .max_outputs = 1,
                           .attrs = col2im_attrs,
                           .parse = col2im_parse,
                           .infer = col2im_infer,
                           .run = col2im_run};
