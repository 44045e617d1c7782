/* conv_int8.c: Int8Conv (ops/conv_int8.c) on the GPU: one channels-last 2-D convolution
 * of int8 X and W on int8 tensor cores through cuDNN's graph API (conv_cudnn_graph.c's
 * int8 problem: int32 sums, times the per-channel scale S, + bias, + Z, activation, in
 * one fused engine), writing Y in the engine's float dtype. S is read on the host at
 * build (float32, whatever the engine stores floats as) and kept in a device copy.
 * Where cuDNN takes no int8 engine for the problem, the step still runs on the GPU
 * ("cudnn-graph-dequant" in --profile): X is converted to float16 in the workspace (its
 * integers, exactly), W is q * S in float16 from the build on, and the float16 graph of
 * the same epilogue runs them, as the model's dequantized form would; its --profile name
 * carries cuDNN's reason for refusing the int8 graph. Asymmetric pads,
 * groups and non-channels-last nodes are refused (the host fallback then runs the CPU
 * reference), naming what. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../../core/cuda_check.h"
#include "../../kernels/k_dtype.h"
#include "../../kernels/quantize.h"
#include "../conv_fused.h"
#include "conv_alt.h"

extern const conv_alt conv_alt_cudnn_graph; /* conv_cudnn_graph.c */

typedef struct int8_state {
  float *scale; /* device, one per output channel */
  void *alt_state;
  /* the float16 fallback: W as q * S (device), the workspace bytes of X's copy first */
  void *w16;
  int64_t x_count, x_bytes;
  /* y_scale (int8 Y): y_inv (device, 1 / y_scale per output channel) where cuDNN's graph
   * writes int8; else (quantize_after) the float result goes to the workspace after X's
   * copy, y_bytes of it, and our QuantizeLinear kernel writes Y from it */
  float *y_inv;
  bool quantize_after;
  int kdt_float;  /* the float result's dtype (S's) */
  float y_scale;
  int64_t y_count, y_bytes;
  /* with w16: "cudnn-graph-dequant (int8: why cuDNN refused)", the name --profile and
   * --verbose print, so a run says why the int8 engines were not taken; with
   * quantize_after "...+quantize" */
  char impl[256];
} int8_state;

static void int8_release(void *p) {
  int8_state *s = p;
  if (!s) return;
  if (s->alt_state) conv_alt_cudnn_graph.release(s->alt_state);
  if (s->scale) cudaFree(s->scale);
  if (s->w16) cudaFree(s->w16);
  if (s->y_inv) cudaFree(s->y_inv);
  free(s);
}

/* bytes of host data h into a new device allocation *dev (build time); what names it in
 * the out-of-memory message. */
static infer_status upload(const void *h, size_t bytes, void **dev, const char *what) {
  cudaError_t e = cudaMalloc(dev, bytes);
  if (e == cudaSuccess) e = cudaMemcpy(*dev, h, bytes, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Int8Conv: no device memory for its %s", what);
  }
  return INFER_OK;
}

/* A per-tensor QuantizeLinear / DequantizeLinear layout of count elements, its scale in
 * the arguments and zero point 0 (kernels/quantize.h); lo / hi: the quantized range. */
static k_quant_layout per_tensor(int64_t count, float scale, int32_t lo, int32_t hi) {
  k_quant_layout l;
  memset(&l, 0, sizeof l);
  l.dim = l.inner = l.block = 1;
  l.count = count;
  l.params_in_args = 1;
  l.scale0 = scale;
  l.lo = lo;
  l.hi = hi;
  return l;
}

/* The conv_problem of this node: X N x H x W x C, W K x R x S x C, Y N x OH x OW x K;
 * y (the float result's dtype) is Y's, or S's where Y is int8 (y_scale). */
static infer_status int8_problem(const cuda_exec *x, const node *n, const fused_conv_params *fp,
                                 const tensor *const *in, const tensor *Y, infer_dtype y,
                                 conv_problem *q) {
  const tensor *X = in[0], *W = in[1];
  if (!fp || !fp->channels_last || X->rank != 4 || W->rank != 4 || Y->rank != 4)
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "Int8Conv on the GPU: channels-last 2-D convolutions only");
  if (fp->conv.group != 1)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Int8Conv on the GPU: group %lld (1 only)",
                      (long long)fp->conv.group);
  if (y != INFER_DTYPE_FLOAT16 && y != INFER_DTYPE_FLOAT32)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Int8Conv on the GPU: output %s",
                      infer_dtype_name(y));
  int64_t xl[2] = {X->dims[1], X->dims[2]}, kl[2] = {W->dims[1], W->dims[2]};
  win_geom g;
  TRY(win_geom_forward(&fp->conv.w, 2, xl, kl, false, "Int8Conv", &g));
  for (int j = 1; j < 3; j++) /* right-aligned in 3 dims */
    if (g.pb[j] != g.pe[j])
      return infer_fail(INFER_ERR_UNSUPPORTED, "Int8Conv on the GPU: asymmetric pads");
  memset(q, 0, sizeof *q);
  q->n = (int)X->dims[0];
  q->h = (int)X->dims[1];
  q->w = (int)X->dims[2];
  q->c = (int)X->dims[3];
  q->k = (int)W->dims[0];
  q->r = (int)W->dims[1];
  q->s = (int)W->dims[2];
  q->group = 1;
  q->out_h = (int)Y->dims[1];
  q->out_w = (int)Y->dims[2];
  q->pad_h = (int)g.pb[1];
  q->pad_w = (int)g.pb[2];
  q->stride_h = (int)g.s[1];
  q->stride_w = (int)g.s[2];
  q->dil_h = (int)g.d[1];
  q->dil_w = (int)g.d[2];
  q->channels_last = true;
  q->kdt = y == INFER_DTYPE_FLOAT16 ? K_F16 : K_F32;
  q->precision = x->precision;
  q->act = fp->act;
  q->alpha = fp->alpha;
  q->beta = fp->beta;
  q->has_bias = n->n_inputs > 3 && in[3];
  q->bias_dev = q->has_bias ? in[3]->data : NULL;
  q->has_z = n->n_inputs > 4 && in[4];
  q->w_dev = W->data;
  q->x_max = INFINITY;
  q->nan_exact = cuda_nan_exact(x);
  q->int8 = true;
  if (q->c % 4 || q->k % 4)
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "Int8Conv on the GPU: %d input and %d output channels (multiples of 4 "
                      "only)", q->c, q->k);
  return INFER_OK;
}

/* The float16 fallback's weights q * S and its graph (see the top). */
static infer_status dequant_prepare(const cuda_exec *x, const tensor *const *in,
                                    const tensor *const *host_in, conv_problem *q,
                                    int8_state *s, int64_t *ws_bytes) {
  const tensor *hw = host_in[1], *hs = host_in[2];
  if (!hw || hw->dtype != INFER_DTYPE_INT8)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Int8Conv on the GPU: W must be a constant");
  int64_t nw = dims_count(hw->rank, hw->dims), per = nw / q->k;
  uint16_t *h = malloc(sizeof(uint16_t) * (size_t)(nw > 0 ? nw : 1));
  if (!h) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  const int8_t *wq = hw->data;
  for (int64_t c = 0; c < q->k; c++) {
    float sc = (float)tensor_get_f64(hs, c);
    for (int64_t i = 0; i < per; i++) h[c * per + i] = float_to_half((float)wq[c * per + i] * sc);
  }
  infer_status st = upload(h, sizeof(uint16_t) * (size_t)nw, &s->w16, "weights");
  free(h);
  TRY(st);
  q->int8 = false;
  q->scale_dev = NULL;
  q->w_dev = s->w16;
  s->x_count = dims_count(in[0]->rank, in[0]->dims);
  s->x_bytes = (s->x_count * 2 + 255) / 256 * 256;
  int64_t alt_ws = 0;
  TRY(conv_alt_cudnn_graph.prepare(x, q, &s->alt_state, &alt_ws));
  *ws_bytes = s->x_bytes + alt_ws;
  return INFER_OK;
}

/* 1 / y_scale per output channel on the device, for the graph that writes int8 Y. */
static infer_status make_y_inv(int8_state *s, int k) {
  float *h = malloc(sizeof(float) * (size_t)k);
  if (!h) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int c = 0; c < k; c++) h[c] = 1.0f / s->y_scale;
  infer_status st = upload(h, sizeof(float) * (size_t)k, (void **)&s->y_inv, "output scale");
  free(h);
  return st;
}

static infer_status int8_prepare(const cuda_exec *x, const node *n, const void *params,
                                 const tensor *const *in, const tensor *const *host_in,
                                 tensor *const *out, void **state, int64_t *ws_bytes) {
  const int8_conv_params *ip = params;
  const tensor *hs = host_in[2];
  if (!hs || hs->rank != 1 || !dtype_is_float(hs->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "Int8Conv on the GPU: S must be a constant");
  const bool y8 = ip->y_scale > 0;
  if (y8 && out[0]->dtype != INFER_DTYPE_INT8)
    return infer_fail(INFER_ERR_INTERNAL, "Int8Conv: y_scale with a %s output",
                      infer_dtype_name(out[0]->dtype));
  conv_problem q;
  TRY(int8_problem(x, n, &ip->f, in, out[0], y8 ? in[2]->dtype : out[0]->dtype, &q));
  if (hs->dims[0] != q.k)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Int8Conv: S has %lld entries for %d channels",
                      (long long)hs->dims[0], q.k);
  int8_state *s = calloc(1, sizeof *s);
  float *h = malloc(sizeof(float) * (size_t)q.k);
  if (!s || !h) {
    free(s);
    free(h);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  *state = s;
  for (int c = 0; c < q.k; c++) h[c] = (float)tensor_get_f64(hs, c);
  infer_status st = upload(h, sizeof(float) * (size_t)q.k, (void **)&s->scale, "scale");
  free(h);
  TRY(st);
  q.scale_dev = s->scale;
  s->y_scale = ip->y_scale;
  char why8[160] = "";
  if (y8) { /* int8 Y from the graph itself, where cuDNN takes that */
    TRY(make_y_inv(s, q.k));
    conv_problem q8 = q;
    q8.y_int8 = true;
    q8.y_inv_dev = s->y_inv;
    st = conv_alt_cudnn_graph.prepare(x, &q8, &s->alt_state, ws_bytes);
    if (st == INFER_OK) return INFER_OK;
    if (st != INFER_ERR_UNSUPPORTED) return st;
    snprintf(why8, sizeof why8, "%s", infer_last_error());
    /* else the float result, then our QuantizeLinear kernel */
    s->quantize_after = true;
    s->kdt_float = q.kdt;
    s->y_count = dims_count(out[0]->rank, out[0]->dims);
    s->y_bytes = (s->y_count * (q.kdt == K_F16 ? 2 : 4) + 255) / 256 * 256;
  }
  int64_t alt_ws = 0;
  st = conv_alt_cudnn_graph.prepare(x, &q, &s->alt_state, &alt_ws);
  if (st == INFER_ERR_UNSUPPORTED && q.kdt == K_F16) {
    snprintf(s->impl, sizeof s->impl, "cudnn-graph-dequant%s (int8: %s)",
             s->quantize_after ? "+quantize" : "", infer_last_error());
    st = dequant_prepare(x, in, host_in, &q, s, &alt_ws); /* X's copy, then the graph's */
  } else if (st == INFER_OK && s->quantize_after) {
    snprintf(s->impl, sizeof s->impl, "cudnn-graph-int8+quantize (int8 output: %s)", why8);
  }
  if (st != INFER_OK) { /* the message names the problem and the way out */
    char why[256];
    snprintf(why, sizeof why, "%s", infer_last_error());
    return infer_fail(st, "Int8Conv on the GPU (%dx%d, %d -> %d channels, stride %d): %s; "
                      "config int8=0 runs it on dequantized floats", q.r, q.s, q.c, q.k,
                      q.stride_h, why);
  }
  /* the workspace: [X's float16 copy (dequant)] [the float result (quantize_after)] [the
   * graph's]; alt_ws holds the first and the last */
  *ws_bytes = alt_ws + s->y_bytes;
  return INFER_OK;
}

static infer_status int8_run(const cuda_exec *x, const node *n, const void *params,
                             const void *state, const tensor *const *in, tensor *const *out) {
  (void)params;
  const int8_state *s = state;
  const void *bias = n->n_inputs > 3 && in[3] ? in[3]->data : NULL;
  const void *z = n->n_inputs > 4 && in[4] ? in[4]->data : NULL;
  cudaStream_t st = (cudaStream_t)x->stream;
  char *ws = x->ws;
  const void *xin = in[0]->data, *w = in[1]->data;
  if (s->w16) { /* the float16 fallback: X's integers as float16 into the workspace first */
    const k_quant_layout l = per_tensor(s->x_count, 1.0f, 0, 0);
    CUDA_LAUNCH_TRY(k_dequantize(K_I8, in[0]->data, K_F16, ws, NULL, NULL, &l, st));
    xin = ws;
    w = s->w16;
    ws += s->x_bytes;
  }
  void *y = s->quantize_after ? (void *)ws : out[0]->data;
  char *alt_ws = s->quantize_after ? ws + s->y_bytes : ws;
  TRY(conv_alt_cudnn_graph.run(x, s->alt_state, xin, w, bias, z, y, alt_ws));
  if (s->quantize_after) { /* QuantizeLinear per tensor, zero point 0, into int8 Y */
    const k_quant_layout l = per_tensor(s->y_count, s->y_scale, -128, 127);
    CUDA_LAUNCH_TRY(k_quantize(s->kdt_float, y, K_I8, out[0]->data, NULL, NULL, &l, st));
  }
  return INFER_OK;
}

static const char *int8_impl(const void *state) {
  const int8_state *s = state;
  return s && (s->w16 || s->quantize_after) ? s->impl : "cudnn-graph-int8";
}

static const cuda_op cuda_int8_conv = {.name = "Int8Conv", .domain = "infer",
                                       .prepare = int8_prepare, .run = int8_run,
                                       .release = int8_release, .needs = CUDA_NEEDS_CUDNN,
                                       .impl = int8_impl};
const cuda_op *const cuda_ops_conv_int8[] = {&cuda_int8_conv, NULL};
