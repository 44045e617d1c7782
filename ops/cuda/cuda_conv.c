/* cuda_conv.c: Conv and FusedConv through cuDNN (legacy convolution API), N-D up
 * to 3 spatial dims, groups, dilations; algorithms chosen by measurement at build
 * time (conv_algo_search.c, kept in the algorithm cache: conv_cache_key.c). Asymmetric
 * pads (SAME_UPPER and the like), which cuDNN cannot express, are applied by an
 * explicit zero-pad kernel into the workspace first.
 * FusedConv (act(conv + bias + Z)) runs as one cudnnConvolutionBiasActivationForward
 * call where cuDNN takes the activation and that measures faster, else as the
 * convolution and one epilogue kernel. FusedConv with channels_last = 1 (written
 * by the pass to-channels-last for fp16 GPU builds) has NHWC data and KRSC weights.
 * ConvTranspose runs cuDNN's backward-data convolution. The attributes are the CPU
 * op's params (../conv_fused.h); the descriptors are made in conv_descriptors.c. */
#include <stdlib.h>
#include <string.h>

#include "algo_cache.h"
#include "../../kernels/conv_pad.h"
#include "../../kernels/k_dtype.h"
#include "cuda_conv.h"

static void conv_release(void *p) {
  conv_state *s = p;
  if (!s) return;
  conv_descs_release(&s->d);
  if (s->actd) cudnnDestroyActivationDescriptor(s->actd);
  if (s->alt && s->alt->release) s->alt->release(s->alt_state);
  if (s->zero_bias) cudaFree(s->zero_bias);
  free(s);
}

/* What Conv and ConvTranspose check alike: the spatial rank (1 to 3), the cuDNN data
 * type, and that the CPU op's params p (conv_fused.h: the window attributes, the group
 * count) are there. */
static infer_status conv_read_common(const conv_params *p, const char *op, const tensor *X,
                                     int *nsp, cudnnDataType_t *dt) {
  *nsp = X->rank - 2;
  if (*nsp < 1 || *nsp > 3)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: %d spatial dims", op, *nsp);
  TRY(conv_data_type(X->dtype, dt));
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "%s: attributes were not parsed", op);
  return INFER_OK;
}

/* The cuDNN problem of one Conv / FusedConv step in cuDNN's logical order (N, C,
 * spatial...; at least 4-D: a 1-D problem becomes 2-D with H = 1): the input's dims
 * before (xd) and after (pad_l) the explicit zero padding by a kernel of what cuDNN's
 * symmetric pads cannot express (begin_l in front, the rest at the end), the filter's
 * and the output's dims, and the pads, strides and dilations cuDNN takes. */
typedef struct conv_geometry {
  int r;
  int64_t xd[5], wd[5], yd[5], pad_l[5], begin_l[5];
  int pads[3], strides[3], dil[3];
  bool explicit_pad;
} conv_geometry;

/* Logical N, C, spatial... views of X, W and Y (channels-last data is N, H, W, C). */
static void conv_logical_dims(const tensor *X, const tensor *W, const tensor *Y, bool cl,
                              int64_t *Xl, int64_t *Wl, int64_t *Yl) {
  const int64_t *phys[3] = {X->dims, W->dims, Y->dims};
  int64_t *logi[3] = {Xl, Wl, Yl};
  for (int t = 0; t < 3; t++)
    for (int i = 0; i < X->rank; i++)
      logi[t][i] = !cl ? phys[t][i] : phys[t][i == 0 ? 0 : i == 1 ? 3 : i - 1];
}

/* The cuDNN problem of window geometry g (nsp spatial dims) over the logical dims. */
static void conv_geometry_make(const win_geom *g, int nsp, const int64_t *Xl, const int64_t *Wl,
                               const int64_t *Yl, conv_geometry *cg) {
  memset(cg, 0, sizeof *cg);
  int r = nsp == 1 ? 4 : nsp + 2;
  cg->r = r;
  int lead = r - 2 - nsp; /* 1 for 1-D, else 0 */
  cg->xd[0] = Xl[0]; cg->xd[1] = Xl[1];
  cg->wd[0] = Wl[0]; cg->wd[1] = Wl[1];
  cg->yd[0] = Yl[0]; cg->yd[1] = Yl[1];
  for (int i = 0; i < r - 2; i++) {
    int j = i - lead; /* index into the real spatial dims, or < 0 for the fake H */
    int gi = 3 - nsp + j;  /* win_geom is right-aligned in 3 dims */
    cg->xd[2 + i] = j < 0 ? 1 : Xl[2 + j];
    cg->wd[2 + i] = j < 0 ? 1 : Wl[2 + j];
    cg->yd[2 + i] = j < 0 ? 1 : Yl[2 + j];
    cg->pads[i] = j < 0 ? 0 : (int)(g->pb[gi] < g->pe[gi] ? g->pb[gi] : g->pe[gi]);
    cg->strides[i] = j < 0 ? 1 : (int)g->s[gi];
    cg->dil[i] = j < 0 ? 1 : (int)g->d[gi];
    cg->begin_l[2 + i] = j < 0 ? 0 : g->pb[gi] - cg->pads[i];
    int64_t extra_end = j < 0 ? 0 : g->pe[gi] - cg->pads[i];
    if (cg->begin_l[2 + i] || extra_end) cg->explicit_pad = true;
    cg->pad_l[2 + i] = cg->xd[2 + i] + cg->begin_l[2 + i] + extra_end;
  }
  cg->pad_l[0] = cg->xd[0];
  cg->pad_l[1] = cg->xd[1];
}

/* What the pad kernel needs, in memory order: the input's dims before and after the
 * explicit padding and the begin pads. */
static void conv_set_pad_dims(conv_state *s, const conv_geometry *cg, bool cl) {
  int r = cg->r;
  s->rank = r;
  s->explicit_pad = cg->explicit_pad;
  for (int i = 0; i < r; i++) {
    int li = !cl ? i : i == 0 ? 0 : i == r - 1 ? 1 : i + 1;
    s->in_dims[i] = cg->xd[li];
    s->padded_dims[i] = cg->pad_l[li];
    s->pad_begin[i] = cg->begin_l[li];
  }
}

/* The epilogue y = act(conv + bias + z) (FusedConv's; a plain Conv has none and no z)
 * and the geometry its kernel sees. */
static void conv_set_epilogue(conv_state *s, const node *n, const fused_conv_params *fp,
                              const tensor *const *in, const tensor *Y, cudnnDataType_t dt,
                              const conv_geometry *cg, bool cl) {
  s->channels_last = cl;
  if (fp) {
    s->act = fp->act;
    s->alpha = fp->alpha;
    s->beta = fp->beta;
    s->has_z = n->n_inputs > 3 && in[3];
  }
  s->kdt = dt == CUDNN_DATA_HALF ? K_F16 : dt == CUDNN_DATA_FLOAT ? K_F32 : 0;
  s->channels = cg->yd[1];
  s->count = dims_count(Y->rank, Y->dims);
  s->inner = cl ? 1 : s->count / (cg->yd[0] * cg->yd[1] > 0 ? cg->yd[0] * cg->yd[1] : 1);
}

/* The problem the alternative implementations (conv_alt.h) see; only 2-D problems with
 * an epilogue kernel dtype have one (s->prob_ok). */
static void conv_set_problem(conv_state *s, const cuda_exec *x, const node *n,
                             const fused_conv_params *fp, const tensor *const *in,
                             const conv_geometry *cg, int nsp, int64_t group, bool cl) {
  if (nsp != 2 || !s->kdt) return;
  const int64_t *pad_l = cg->pad_l, *wd = cg->wd, *yd = cg->yd;
  conv_problem *q = &s->prob;
  q->n = (int)pad_l[0]; q->c = (int)pad_l[1]; q->h = (int)pad_l[2]; q->w = (int)pad_l[3];
  q->k = (int)wd[0]; q->r = (int)wd[2]; q->s = (int)wd[3];
  q->group = (int)group;
  q->out_h = (int)yd[2]; q->out_w = (int)yd[3];
  q->pad_h = cg->pads[0]; q->pad_w = cg->pads[1];
  q->stride_h = cg->strides[0]; q->stride_w = cg->strides[1];
  q->dil_h = cg->dil[0]; q->dil_w = cg->dil[1];
  q->channels_last = cl;
  q->kdt = s->kdt;
  q->precision = x->precision;
  q->act = s->act;
  q->alpha = s->alpha;
  q->beta = s->beta;
  q->has_bias = n->n_inputs > 2 && in[2];
  q->bias_dev = q->has_bias ? in[2]->data : NULL;
  q->w_dev = in[1]->data;
  q->has_x_max = fp && !isinf(fp->input_max);
  q->x_max = q->has_x_max ? fp->input_max : 0;
  q->has_z = s->has_z;
  q->nan_exact = s->nan_exact;
  s->prob_ok = true;
}

/* cuDNN's own output shape must be ours. */
static infer_status conv_check_output(const conv_state *s, const conv_geometry *cg,
                                      const char *op) {
  infer_status st = INFER_OK;
  int yo[5];
  cudnnStatus_t cs = cudnnGetConvolutionNdForwardOutputDim(s->d.conv, s->d.x, s->d.w, cg->r, yo);
  for (int i = 0; st == INFER_OK && i < cg->r; i++)
    if (cs != CUDNN_STATUS_SUCCESS || yo[i] != cg->yd[i])
      st = infer_fail(INFER_ERR_INTERNAL, "%s on the GPU: cuDNN's output shape differs from "
                      "the inferred one at dim %d", op, i);
  return st;
}

/* cuDNN fuses identity (bias only), ReLU and ReLU6-like clips: for those, the
 * activation descriptor of the fused call and, without a bias (has_b), device zeros
 * standing in for it (channels elements of dtype dt). The descriptor asks cuDNN to
 * propagate NaN (as the Relu op does); whether its fused kernels do is cuDNN's, so with
 * cuda.nan_exact only the identity is fused and our epilogue kernel applies the rest. */
static infer_status conv_make_fused_act(conv_state *s, bool has_b, int64_t channels,
                                        infer_dtype dt, const char *op) {
  bool lib_act = !s->nan_exact && (s->act == CONV_ACT_RELU ||
                                   (s->act == CONV_ACT_CLIP && s->alpha == 0 && s->beta > 0));
  bool fusable = s->kdt && (s->act == CONV_ACT_NONE || lib_act);
  if (!fusable) return INFER_OK;
  CUDNN_TRY(cudnnCreateActivationDescriptor(&s->actd));
  cudnnActivationMode_t mode = s->act == CONV_ACT_RELU   ? CUDNN_ACTIVATION_RELU
                               : s->act == CONV_ACT_CLIP ? CUDNN_ACTIVATION_CLIPPED_RELU
                                                         : CUDNN_ACTIVATION_IDENTITY;
  CUDNN_TRY(cudnnSetActivationDescriptor(s->actd, mode, CUDNN_PROPAGATE_NAN,
                                         s->act == CONV_ACT_CLIP ? s->beta : 0.0));
  if (!has_b) {
    size_t bb = (size_t)channels * infer_dtype_size(dt);
    if (cudaMalloc(&s->zero_bias, bb) != cudaSuccess || cudaMemset(s->zero_bias, 0, bb) != cudaSuccess) {
      cudaGetLastError();
      return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: no device memory for a zero bias", op);
    }
  }
  return INFER_OK;
}

/* The algorithm and implementation: the algorithm cache's choice where it has one this
 * cuDNN takes (never with a forced implementation), else the measured search, whose
 * result the cache then keeps. */
static infer_status conv_pick_algo(const cuda_exec *x, conv_state *s, const conv_geometry *cg,
                                   int64_t group, cudnnDataType_t dt, const tensor *const *in,
                                   const tensor *Y) {
  int64_t y_bytes = tensor_nbytes(Y);
  char key[ALGO_CACHE_KEY_MAX + 1];
  conv_cache_key(s, cg->pad_l, cg->wd, cg->pads, cg->strides, cg->dil, group, dt, x->precision,
                 key, sizeof key);
  bool forced = conv_forced_impl(x) != NULL;
  /* a slice to write (y_pitch_req) is searched each build: the cache keeps dense choices */
  if (forced || s->y_pitch_req || !conv_cached_algo(x, s, key)) {
    TRY(conv_choose_algo(x, s, in, y_bytes > 0 ? y_bytes : 1));
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    cudnnGetConvolutionMathType(s->d.conv, &math);
    int64_t v[4] = {s->algo, math, (int64_t)s->algo_ws, conv_variant_code(s)};
    if (!forced && !s->y_pitched) algo_cache_put(x->algo_cache, key, v);
  }
  return INFER_OK;
}

/* The scratch one run needs: the explicitly padded input (sizing s->padded_bytes), then
 * the algorithm's or the alternative's workspace. */
static int64_t conv_ws_bytes(conv_state *s, infer_dtype dt) {
  if (s->explicit_pad) {
    int64_t cnt = 1;
    for (int i = 0; i < s->rank; i++) cnt *= s->padded_dims[i];
    s->padded_bytes = (cnt * (int64_t)infer_dtype_size(dt) + 255) / 256 * 256;
  }
  return s->padded_bytes + (s->alt ? s->alt_ws : (int64_t)s->algo_ws);
}

/* Conv (cp its params), and FusedConv when fp is set (cp = &fp->conv; its epilogue, Z,
 * channels_last). */
static infer_status conv_prepare_common(const cuda_exec *x, const node *n, const conv_params *cp,
                                        const fused_conv_params *fp, const tensor *const *in,
                                        tensor *const *out, void **state, int64_t *ws_bytes) {
  const char *op = fp ? "FusedConv" : "Conv";
  const tensor *X = in[0], *W = in[1];
  bool cl = fp && fp->channels_last;
  if (cl && X->rank != 4)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: channels_last needs 2-D data", op);
  int64_t Xl[5], Wl[5], Yl[5];
  conv_logical_dims(X, W, out[0], cl, Xl, Wl, Yl);
  int nsp;
  cudnnDataType_t dt = CUDNN_DATA_FLOAT;
  TRY(conv_read_common(cp, op, X, &nsp, &dt));
  int64_t group = cp->group;
  if (fp && dt == CUDNN_DATA_DOUBLE)
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedConv on the GPU: float64 is not supported");
  win_geom g;
  TRY(win_geom_forward(&cp->w, nsp, Xl + 2, Wl + 2, false, op, &g));
  conv_geometry cg;
  conv_geometry_make(&g, nsp, Xl, Wl, Yl, &cg);
  conv_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  s->nan_exact = cuda_nan_exact(x);
  s->bias_first = config_flag(x->cfg, "cuda.conv_bias_first", true);
  conv_set_pad_dims(s, &cg, cl);
  conv_set_epilogue(s, n, fp, in, out[0], dt, &cg, cl);
  conv_set_problem(s, x, n, fp, in, &cg, nsp, group, cl);
  /* the engine may have this output written into its Concat's output (fp16, channels-
   * last, no residual: the alternatives write z dense) */
  if (s->prob_ok && cl && s->kdt == K_F16 && !s->has_z && x->out_pitch > s->prob.k)
    s->y_pitch_req = x->out_pitch;
  infer_status st = INFER_OK;
  bool has_b = n->n_inputs > 2 && in[2];
  if (fp && !isinf(fp->input_max) && !s->prob_ok)
    st = infer_fail(INFER_ERR_UNSUPPORTED, "FusedConv with input_max: only 2-D float "
                    "convolutions on the GPU clamp their input");
  /* the fused call always takes a bias descriptor */
  if (st == INFER_OK)
    st = conv_descs_make(&s->d, x, dt, cg.r, cg.pad_l, cg.wd, cg.yd, cg.pads, cg.strides, cg.dil,
                         group, has_b || s->kdt, cl);
  if (st == INFER_OK) st = conv_check_output(s, &cg, op);
  if (st == INFER_OK) st = conv_make_fused_act(s, has_b, cg.yd[1], X->dtype, op);
  if (st == INFER_OK) st = conv_pick_algo(x, s, &cg, group, dt, in, out[0]);
  if (st != INFER_OK) {
    conv_release(s);
    *state = NULL;
    return st;
  }
  *ws_bytes = conv_ws_bytes(s, X->dtype);
  if (x->out_pitch_taken) *x->out_pitch_taken = s->y_pitched;
  return INFER_OK;
}

static infer_status cuda_conv_prepare(const cuda_exec *x, const node *n, const void *params,
                                 const tensor *const *in, const tensor *const *host_in,
                                 tensor *const *out, void **state, int64_t *ws_bytes) {
  return conv_prepare_common(x, n, params, NULL, in, out, state, ws_bytes);
}

static infer_status fused_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  const fused_conv_params *fp = params;
  return conv_prepare_common(x, n, fp ? &fp->conv : NULL, fp, in, out, state, ws_bytes);
}

static infer_status cuda_conv_run(const cuda_exec *x, const node *n, const void *params,
                             const void *state, const tensor *const *in, tensor *const *out) {
  const conv_state *s = state;
  const void *src = in[0]->data;
  char *ws = x->ws;
  cudaStream_t stream = (cudaStream_t)x->stream;
  if (s->explicit_pad) {
    CUDA_LAUNCH_TRY(k_pad_zero((int)infer_dtype_size(in[0]->dtype), s->rank, s->in_dims,
                               s->padded_dims, s->pad_begin, src, ws, stream));
    src = ws;
    ws += s->padded_bytes;
  }
  const conv_descs *d = &s->d;
  const void *bias = n->n_inputs > 2 && in[2] ? in[2]->data : NULL;
  const void *z = s->has_z ? in[3]->data : NULL;
  if (s->alt) return s->alt->run(x, s->alt_state, src, in[1]->data, bias, z, out[0]->data, ws);
  if (s->use_fused) {
    CUDNN_TRY(cudnnConvolutionBiasActivationForward(
        x->cudnn, DESCS_ONE(d), d->x, src, d->w, in[1]->data, d->conv, s->algo,
        s->algo_ws ? ws : NULL, s->algo_ws, z ? DESCS_ONE(d) : DESCS_ZERO(d), d->y,
        z ? z : out[0]->data, d->b, bias ? bias : s->zero_bias, s->actd, d->y, out[0]->data));
    return INFER_OK;
  }
  if (!s->kdt) { /* float64: cuDNN's convolution and its own bias addition */
    CUDNN_TRY(cudnnConvolutionForward(x->cudnn, DESCS_ONE(d), d->x, src, d->w, in[1]->data,
                                      d->conv, s->algo, s->algo_ws ? ws : NULL, s->algo_ws,
                                      DESCS_ZERO(d), d->y, out[0]->data));
    return conv_add_bias(x, d, in, out);
  }
  return conv_then_epilogue(x, s, src, in[1]->data, bias, z, out[0]->data, ws);
}

/* ---- ConvTranspose: cuDNN's backward-data convolution ------------------------ */

typedef struct convt_state {
  conv_descs d;
  cudnnConvolutionBwdDataAlgo_t algo;
  size_t algo_ws;
} convt_state;

static void convt_release(void *p) {
  convt_state *s = p;
  if (!s) return;
  conv_descs_release(&s->d);
  free(s);
}

static infer_status convt_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  const tensor *X = in[0], *W = in[1];
  int nsp;
  cudnnDataType_t dt = CUDNN_DATA_FLOAT;
  const conv_params *p = params;
  TRY(conv_read_common(p, "ConvTranspose", X, &nsp, &dt));
  const win_attrs *w = &p->w;
  int64_t group = p->group;
  const int64_t *opad = p->output_padding;
  int n_opad = p->n_output_padding;
  int r = nsp == 1 ? 4 : nsp + 2, lead = r - 2 - nsp;
  int64_t xd[5], wd[5], yd[5];
  int pads[3], strides[3], dil[3];
  xd[0] = X->dims[0]; xd[1] = X->dims[1];
  wd[0] = W->dims[0]; wd[1] = W->dims[1];
  yd[0] = out[0]->dims[0]; yd[1] = out[0]->dims[1];
  for (int i = 0; i < r - 2; i++) {
    int j = i - lead;
    xd[2 + i] = j < 0 ? 1 : X->dims[2 + j];
    wd[2 + i] = j < 0 ? 1 : W->dims[2 + j];
    yd[2 + i] = j < 0 ? 1 : out[0]->dims[2 + j];
    strides[i] = j < 0 || w->n_strides < 0 ? 1 : (int)w->strides[j];
    dil[i] = j < 0 || w->n_dilations < 0 ? 1 : (int)w->dilations[j];
    if (j < 0) {
      pads[i] = 0;
      continue;
    }
    /* total padding follows from the output size; cuDNN takes it symmetric */
    int64_t k_eff = (wd[2 + i] - 1) * dil[i] + 1, op = n_opad > j ? opad[j] : 0;
    int64_t total = strides[i] * (xd[2 + i] - 1) + op + k_eff - yd[2 + i];
    bool explicit_asym = w->n_pads > 0 && w->pads[j] != w->pads[j + nsp];
    if (total < 0 || total % 2 || explicit_asym)
      return infer_fail(INFER_ERR_UNSUPPORTED,
                        "ConvTranspose on the GPU: asymmetric padding is not supported");
    pads[i] = (int)(total / 2);
  }
  convt_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  infer_status st = conv_descs_make(&s->d, x, dt, r, xd, wd, yd, pads, strides, dil, group,
                                    n->n_inputs > 2 && in[2], false);
  if (st != INFER_OK) goto fail;
  /* heuristics rather than a measured search: transposed convolutions are rare
   * in the models this engine targets */
  cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  int found = 0;
  cudnnStatus_t cs = cudnnGetConvolutionBackwardDataAlgorithm_v7(
      x->cudnn, s->d.w, s->d.x, s->d.conv, s->d.y, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found,
      perf);
  if (cs != CUDNN_STATUS_SUCCESS) found = 0;
  st = infer_fail(INFER_ERR_UNSUPPORTED, "ConvTranspose: cuDNN has no algorithm for this case%s",
                  x->ws_limit > 0 ? " within the workspace limit" : "");
  for (int i = 0; i < found; i++) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS ||
        (x->ws_limit > 0 && (int64_t)perf[i].memory > x->ws_limit))
      continue;
    if (x->precision == INFER_PRECISION_FP32 && dt == CUDNN_DATA_FLOAT &&
        perf[i].mathType == CUDNN_TENSOR_OP_MATH)
      continue;
    s->algo = perf[i].algo;
    s->algo_ws = perf[i].memory;
    cudnnSetConvolutionMathType(s->d.conv, perf[i].mathType);
    st = INFER_OK;
    break;
  }
  if (st != INFER_OK) goto fail;
  *ws_bytes = (int64_t)s->algo_ws;
  return INFER_OK;
fail:
  convt_release(s);
  *state = NULL;
  return st;
}

static infer_status convt_run(const cuda_exec *x, const node *n, const void *params,
                              const void *state, const tensor *const *in, tensor *const *out) {
  const convt_state *s = state;
  const conv_descs *d = &s->d;
  /* The bias first (y = b, broadcast; beta 0: y is not read), then the convolution
   * accumulated onto it (beta 1) in the float32 compute type: one rounding to float16 of
   * conv + bias, as the CPU's fp16-storage emulation has, where adding the bias after
   * the convolution's float16 store rounded twice (issue 16). */
  bool bias = d->b != NULL;
  if (bias)
    CUDNN_TRY(cudnnAddTensor(x->cudnn, DESCS_ONE(d), d->b, in[2]->data, DESCS_ZERO(d), d->y,
                             out[0]->data));
  CUDNN_TRY(cudnnConvolutionBackwardData(x->cudnn, DESCS_ONE(d), d->w, in[1]->data, d->x,
                                         in[0]->data, d->conv, s->algo,
                                         s->algo_ws ? x->ws : NULL, s->algo_ws,
                                         bias ? DESCS_ONE(d) : DESCS_ZERO(d), d->y,
                                         out[0]->data));
  return INFER_OK;
}

/* The implementation chosen at build, for --profile. */
static const char *conv_impl(const void *state) {
  const conv_state *s = state;
  if (!s) return "cudnn";
  return s->alt ? s->alt->name : s->use_fused ? "cudnn-fused" : s->kdt ? "cudnn+epi" : "cudnn";
}

static const cuda_op cuda_conv = {.name = "Conv", .prepare = cuda_conv_prepare,
                                  .run = cuda_conv_run, .release = conv_release,
                                  .needs = CUDA_NEEDS_CUDNN, .impl = conv_impl};
static const cuda_op cuda_convt = {.name = "ConvTranspose", .prepare = convt_prepare,
                                   .run = convt_run, .release = convt_release,
                                   .needs = CUDA_NEEDS_CUDNN};
static const cuda_op cuda_fused_conv = {.name = "FusedConv", .prepare = fused_prepare,
                                        .run = cuda_conv_run, .release = conv_release,
                                        .needs = CUDA_NEEDS_CUDNN, .domain = "com.microsoft",
                                        .impl = conv_impl};
const cuda_op *const cuda_ops_conv[] = {&cuda_conv, &cuda_convt, &cuda_fused_conv, NULL};
