/* conv_int8.c: Int8Conv (domain infer, written by the pass int8-conv,
 * engine/pass_int8_conv.c): a FusedConv over int8 operands,
 *
 *   Y = act(S[m] * Conv(X, W)[m] + B[m] + Z)     X, W int8 (zero points 0), S float
 *
 * inputs X, W, S (1-D of the M output channels: x_scale * w_scale[m]), [B], [Z];
 * FusedConv's attributes (channels_last among them). It is what a QDQ model's
 * DequantizeLinear -> Conv on symmetric int8 tensors computes, in the form the GPU
 * runs as one int8 tensor-core convolution (ops/cuda/conv_int8.c). The output dtype is
 * S's (float32, or float16 where the engine stores floats so). With the attribute
 * y_scale (> 0; the pass's when Y's only reader was a QuantizeLinear to int8 with zero
 * point 0) Y is that QuantizeLinear's output instead: int8, saturate(rint(Y / y_scale)),
 * the quotient in float32 as QuantizeLinear's.
 *
 * The CPU reference stages X as float32 (its integers, exactly) and W as q * S[m], then
 * runs FusedConv's own code on them in float32 (bias, residual and output staged where
 * the engine stores float16): one rounding to the output dtype, as the GPU's int8
 * engines have. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_fused.h"
#include "quant_util.h"

static const char *const int8_attr_names[] = {
    "auto_pad", "dilations", "group", "kernel_shape", "pads", "strides",
    "activation", "activation_params", "channels_last", "y_scale", NULL};

static infer_status int8_parse(const node *n, void **params) {
  TRY(fused_conv_parse_as(n, "Int8Conv", params));
  int8_conv_params *p = realloc(*params, sizeof *p);
  if (!p) {
    free(*params);
    *params = NULL;
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  *params = p;
  infer_status st = attr_get_float(n, "y_scale", 0.0f, &p->y_scale);
  if (st == INFER_OK && (p->y_scale < 0 || !isfinite(p->y_scale)))
    st = infer_fail(INFER_ERR_INVALID_MODEL, "Int8Conv: y_scale %g (internal) must be a "
                    "finite positive number", (double)p->y_scale);
  if (st != INFER_OK) {
    free(p);
    *params = NULL;
  }
  return st;
}

/* float32 views (no data) of X and W and, where Y is another float dtype or quantized
 * (y_scale), of B, Z and Y (staged: the sums are then float32 whatever the engine
 * stores, as on the GPU); ins and outs are FusedConv's lists. */
typedef struct int8_views {
  tensor x, w, b, z, y;
  const tensor *ins[4];
  tensor *outs[1];
  bool staged; /* B, Z, Y through float32 copies */
} int8_views;

static infer_status views_make(const node *n, const int8_conv_params *p,
                               const tensor *const *in, tensor *y, int8_views *v) {
  const tensor *s = in[2];
  if (in[0]->dtype != INFER_DTYPE_INT8 || in[1]->dtype != INFER_DTYPE_INT8)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Int8Conv: X and W must be int8, not %s and %s",
                      infer_dtype_name(in[0]->dtype), infer_dtype_name(in[1]->dtype));
  if (!s || !dtype_is_float(s->dtype) || s->rank != 1 || in[1]->rank < 1 ||
      s->dims[0] != in[1]->dims[0])
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "Int8Conv: S must be a 1-D float of W's %lld output channels",
                      in[1]->rank > 0 ? (long long)in[1]->dims[0] : -1LL);
  memset(v, 0, sizeof *v);
  v->x = *in[0];
  v->w = *in[1];
  v->x.dtype = v->w.dtype = INFER_DTYPE_FLOAT32;
  v->x.data = v->w.data = NULL;
  const tensor *b = n->n_inputs > 3 ? in[3] : NULL, *z = n->n_inputs > 4 ? in[4] : NULL;
  v->staged = s->dtype != INFER_DTYPE_FLOAT32 || p->y_scale > 0;
  v->ins[0] = &v->x;
  v->ins[1] = &v->w;
  v->ins[2] = b;
  v->ins[3] = z;
  v->outs[0] = y;
  if (v->staged) {
    if (b) v->b = *b, v->b.dtype = INFER_DTYPE_FLOAT32, v->ins[2] = &v->b;
    if (z) v->z = *z, v->z.dtype = INFER_DTYPE_FLOAT32, v->ins[3] = &v->z;
    if (y) v->y = *y, v->y.dtype = INFER_DTYPE_FLOAT32, v->outs[0] = &v->y;
  }
  return INFER_OK;
}

static infer_status int8_infer(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out) {
  int8_views v;
  TRY(views_make(n, params, in, NULL, &v));
  TRY(fused_conv_infer(n, params, v.ins, out));
  /* S's: the engine's float dtype, or the QuantizeLinear's int8 */
  out[0]->dtype = ((const int8_conv_params *)params)->y_scale > 0 ? INFER_DTYPE_INT8
                                                                   : in[2]->dtype;
  return INFER_OK;
}

static int64_t count_of(const tensor *t) { return t ? dims_count(t->rank, t->dims) : 0; }

static int64_t int8_workspace(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  int8_views v;
  if (views_make(n, params, in, out[0], &v) != INFER_OK) return -1;
  int64_t conv = fused_conv_workspace(n, params, v.ins, v.outs), total = 0;
  if (conv < 0 || !ws_add(&total, count_of(&v.x), 4) || !ws_add(&total, count_of(&v.w), 4))
    return -1;
  if (v.staged && (!ws_add(&total, count_of(v.ins[2]), 4) ||
                   !ws_add(&total, count_of(v.ins[3]), 4) || !ws_add(&total, count_of(out[0]), 4)))
    return -1;
  return ws_add(&total, conv, 1) ? total : -1;
}

static infer_status int8_run(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out, void *ws) {
  const int8_conv_params *p = params;
  int8_views v;
  TRY(views_make(n, p, in, out[0], &v));
  int64_t nx = count_of(&v.x), nw = count_of(&v.w);
  int64_t m = v.w.dims[0], per = m > 0 ? nw / m : 0; /* output channels lead either layout */
  char *cur = ws;
  float *xd = v.x.data = ws_take(&cur, nx, 4), *wd = v.w.data = ws_take(&cur, nw, 4);
  const int8_t *xq = in[0]->data, *wq = in[1]->data;
  for (int64_t i = 0; i < nx; i++) xd[i] = (float)xq[i];
  for (int64_t c = 0; c < m; c++) {
    float s = (float)tensor_get_f64(in[2], c);
    for (int64_t i = 0; i < per; i++) wd[c * per + i] = (float)wq[c * per + i] * s;
  }
  if (v.staged) {
    tensor *st[3] = {v.ins[2] ? &v.b : NULL, v.ins[3] ? &v.z : NULL, &v.y};
    const tensor *src[3] = {n->n_inputs > 3 ? in[3] : NULL, n->n_inputs > 4 ? in[4] : NULL, NULL};
    for (int k = 0; k < 3; k++) {
      if (!st[k]) continue;
      st[k]->data = ws_take(&cur, count_of(st[k]), 4);
      if (src[k]) stage_to_f32(src[k]->data, src[k]->dtype, count_of(src[k]), st[k]->data);
    }
  }
  TRY(fused_conv_run(n, params, v.ins, v.outs, cur));
  if (p->y_scale > 0) { /* QuantizeLinear's arithmetic (ops/quant_linear.c) */
    const float *yf = v.y.data;
    int8_t *yq = out[0]->data;
    for (int64_t i = 0, c = count_of(out[0]); i < c; i++)
      yq[i] = (int8_t)quant_round_saturate(yf[i] / p->y_scale, 0, -128, 127);
  } else if (v.staged) {
    stage_from_f32(v.y.data, out[0]->dtype, count_of(out[0]), out[0]->data);
  }
  return INFER_OK;
}

const op_desc op_int8_conv = {.name = "Int8Conv",
                              .domain = "infer",
                              .since = 1,
                              .until = 1,
                              .min_inputs = 3,
                              .max_inputs = 5,
                              .min_outputs = 1,
                              .max_outputs = 1,
                              .attrs = int8_attr_names,
                              .parse = int8_parse,
                              .infer = int8_infer,
                              .run = int8_run,
                              .workspace = int8_workspace};
