/* cuda_conv.c: Conv and FusedConv through cuDNN (legacy convolution API), N-D up
 * to 3 spatial dims, groups, dilations; algorithms chosen by measurement at build
 * time. Asymmetric pads (SAME_UPPER and the like), which cuDNN cannot express, are
 * applied by an explicit zero-pad kernel into the workspace first.
 * FusedConv (act(conv + bias + Z)) runs as one cudnnConvolutionBiasActivationForward
 * call where cuDNN takes the activation and that measures faster, else as the
 * convolution and one epilogue kernel. FusedConv with channels_last = 1 (written
 * by the pass to-channels-last for fp16 GPU builds) has NHWC data and KRSC weights. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo_cache.h"
#include "../../core/cuda_check.h"
#include "../../kernels/conv_epilogue.h"
#include "../../kernels/conv_pad.h"
#include "../../kernels/k_dtype.h"
#include "../conv_fused.h"
#include "../conv_util.h"
#include "../cuda_op.h"
#include "conv_alt.h"

/* The cuDNN descriptors of one convolution problem, forward or transposed. For
 * ConvTranspose, x is our input (cuDNN's dy) and y our output (cuDNN's dx). */
typedef struct conv_descs {
  cudnnTensorDescriptor_t x, y, b; /* b: the bias, NULL without one */
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  bool is_double; /* scaling factors are double for double data, else float */
} conv_descs;

static void descs_release(conv_descs *d) {
  if (d->x) cudnnDestroyTensorDescriptor(d->x);
  if (d->y) cudnnDestroyTensorDescriptor(d->y);
  if (d->b) cudnnDestroyTensorDescriptor(d->b);
  if (d->w) cudnnDestroyFilterDescriptor(d->w);
  if (d->conv) cudnnDestroyConvolutionDescriptor(d->conv);
}

/* The 1 and 0 that cuDNN's alpha/beta point to, in the type it expects. */
static const float one_f = 1, zero_f = 0;
static const double one_d = 1, zero_d = 0;
#define DESCS_ONE(d) ((d)->is_double ? (const void *)&one_d : (const void *)&one_f)
#define DESCS_ZERO(d) ((d)->is_double ? (const void *)&zero_d : (const void *)&zero_f)

typedef struct conv_state {
  conv_descs d;
  cudnnConvolutionFwdAlgo_t algo;
  size_t algo_ws;
  bool explicit_pad;
  int rank; /* of the cuDNN problem (>= 4) */
  int64_t in_dims[5], padded_dims[5], pad_begin[5]; /* in memory order */
  int64_t padded_bytes; /* of the padded input in the workspace */
  /* the epilogue: y = act(conv + bias + z); a plain Conv has CONV_ACT_NONE, no z */
  conv_act act;
  float alpha, beta;
  bool has_z, channels_last;
  bool use_fused;                 /* one cudnnConvolutionBiasActivationForward call */
  cudnnActivationDescriptor_t actd; /* for the fused call */
  void *zero_bias;                /* device zeros standing in for an absent B there */
  int kdt;                        /* K_F32 / K_F16 for the epilogue kernel, 0 otherwise */
  int64_t count, channels, inner; /* of y, for the epilogue kernel */
  /* another implementation (conv_alt.h) when it timed faster at build */
  conv_problem prob;
  bool prob_ok;                   /* 2-D with an epilogue kernel dtype: alternatives apply */
  const conv_alt *alt;
  void *alt_state;
  int64_t alt_ws;
} conv_state;

static void conv_release(void *p) {
  conv_state *s = p;
  if (!s) return;
  descs_release(&s->d);
  if (s->actd) cudnnDestroyActivationDescriptor(s->actd);
  if (s->alt && s->alt->release) s->alt->release(s->alt_state);
  if (s->zero_bias) cudaFree(s->zero_bias);
  free(s);
}

static infer_status data_type(infer_dtype dt, cudnnDataType_t *out) {
  switch (dt) {
    case INFER_DTYPE_FLOAT32: *out = CUDNN_DATA_FLOAT; return INFER_OK;
    case INFER_DTYPE_FLOAT16: *out = CUDNN_DATA_HALF; return INFER_OK;
    case INFER_DTYPE_FLOAT64: *out = CUDNN_DATA_DOUBLE; return INFER_OK;
    default:
      return infer_fail(INFER_ERR_UNSUPPORTED, "Conv on the GPU: dtype %s is not supported",
                        infer_dtype_name(dt));
  }
}

/* dims are logical N, C, spatial...; channels_last: the data is N, spatial..., C. */
static infer_status set_tensor(cudnnTensorDescriptor_t d, cudnnDataType_t dt, int rank,
                               const int64_t *dims, bool channels_last) {
  int di[8], st[8], order[8]; /* order: dims from the fastest-varying in memory */
  int no = 0;
  if (channels_last) order[no++] = 1;
  for (int i = rank - 1; i >= 2; i--) order[no++] = i;
  if (!channels_last) order[no++] = 1;
  order[no++] = 0;
  int64_t s = 1;
  for (int k = 0; k < rank; k++) {
    int i = order[k];
    if (dims[i] > INT32_MAX || s > INT32_MAX)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Conv on the GPU: tensor too large for cuDNN");
    di[i] = (int)dims[i];
    st[i] = (int)s;
    s *= dims[i];
  }
  CUDNN_TRY(cudnnSetTensorNdDescriptor(d, dt, rank, di, st));
  return INFER_OK;
}

/* Creates and sets the descriptors: NCHW tensors x (xd), y (yd), filter (wd) and,
 * when `bias`, a 1 x C x 1... bias; a cross-correlation with fp32 accumulation for
 * half data and FMA math (no TF32) when fp32 precision was asked for. */
static infer_status descs_make(conv_descs *d, const cuda_exec *ex, cudnnDataType_t dt, int r,
                               const int64_t *xd, const int64_t *wd, const int64_t *yd,
                               const int *pads, const int *strides, const int *dil,
                               int64_t group, bool bias, bool cl) {
  d->is_double = dt == CUDNN_DATA_DOUBLE;
  CUDNN_TRY(cudnnCreateTensorDescriptor(&d->x));
  CUDNN_TRY(cudnnCreateTensorDescriptor(&d->y));
  CUDNN_TRY(cudnnCreateFilterDescriptor(&d->w));
  CUDNN_TRY(cudnnCreateConvolutionDescriptor(&d->conv));
  TRY(set_tensor(d->x, dt, r, xd, cl));
  TRY(set_tensor(d->y, dt, r, yd, cl));
  int wdi[5];
  for (int i = 0; i < r; i++) wdi[i] = (int)wd[i];
  CUDNN_TRY(cudnnSetFilterNdDescriptor(d->w, dt, cl ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, r,
                                       wdi));
  CUDNN_TRY(cudnnSetConvolutionNdDescriptor(d->conv, r - 2, pads, strides, dil,
                                            CUDNN_CROSS_CORRELATION,
                                            dt == CUDNN_DATA_HALF ? CUDNN_DATA_FLOAT : dt));
  CUDNN_TRY(cudnnSetConvolutionGroupCount(d->conv, (int)group));
  CUDNN_TRY(cudnnSetConvolutionMathType(
      d->conv, ex->precision == INFER_PRECISION_FP32 && dt == CUDNN_DATA_FLOAT
                   ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
  if (bias) {
    int64_t bd[5] = {1, yd[1], 1, 1, 1};
    CUDNN_TRY(cudnnCreateTensorDescriptor(&d->b));
    TRY(set_tensor(d->b, dt, r, bd, false));
  }
  return INFER_OK;
}

/* y += bias, when the node has one. */
static infer_status add_bias(const cuda_exec *x, const conv_descs *d, const tensor *const *in,
                             tensor *const *out) {
  if (d->b)
    CUDNN_TRY(cudnnAddTensor(x->cudnn, DESCS_ONE(d), d->b, in[2]->data, DESCS_ONE(d), d->y,
                             out[0]->data));
  return INFER_OK;
}

/* Runs the convolution with its epilogue once: the fused cuDNN call, or the
 * convolution and the epilogue kernel. y doubles as z here (build-time scratch). */
static bool run_variant(const cuda_exec *x, const conv_state *s, bool fused, const void *xb,
                        const void *w, const void *bias, void *yb, void *wsb) {
  const conv_descs *d = &s->d;
  cudaStream_t st = (cudaStream_t)x->stream;
  if (fused)
    return cudnnConvolutionBiasActivationForward(
               x->cudnn, DESCS_ONE(d), d->x, xb, d->w, w, d->conv, s->algo, wsb, s->algo_ws,
               s->has_z ? DESCS_ONE(d) : DESCS_ZERO(d), d->y, yb, d->b, bias, s->actd, d->y,
               yb) == CUDNN_STATUS_SUCCESS;
  if (cudnnConvolutionForward(x->cudnn, DESCS_ONE(d), d->x, xb, d->w, w, d->conv, s->algo, wsb,
                              s->algo_ws, DESCS_ZERO(d), d->y, yb) != CUDNN_STATUS_SUCCESS)
    return false;
  return k_conv_epilogue(s->kdt, yb, bias, s->has_z ? yb : NULL, s->count, s->channels, s->inner,
                         s->act, s->alpha, s->beta, st) == cudaSuccess;
}

/* Median-free but warm timing of one variant: 0 cuDNN convolution + epilogue kernel,
 * 1 cuDNN's fused call, 2 the alternative `a` (state as, scratch aws). -1 when it
 * fails. Three runs after one warm-up, on the build's scratch buffers. */
static float time_variant(const cuda_exec *x, const conv_state *s, int variant,
                          const conv_alt *a, void *as, void *aws, const void *xb,
                          const void *w, const void *bias, void *yb, void *wsb) {
  cudaStream_t st = (cudaStream_t)x->stream;
  cudaEvent_t e[2];
  if (cudaEventCreate(&e[0]) != cudaSuccess) return -1;
  if (cudaEventCreate(&e[1]) != cudaSuccess) {
    cudaEventDestroy(e[0]);
    return -1;
  }
  bool ok = true;
  float ms = -1;
  for (int r = 0; r < 4 && ok; r++) {
    if (r == 1) cudaEventRecord(e[0], st);
    if (variant < 2)
      ok = run_variant(x, s, variant == 1, xb, w, bias, yb, wsb);
    else
      ok = a->run(x, as, xb, w, s->prob.has_bias ? bias : NULL, s->has_z ? yb : NULL, yb,
                  aws) == INFER_OK;
  }
  cudaEventRecord(e[1], st);
  if (ok && cudaEventSynchronize(e[1]) == cudaSuccess &&
      cudaEventElapsedTime(&ms, e[0], e[1]) == cudaSuccess)
    ms /= 3;
  else
    ms = -1;
  cudaEventDestroy(e[0]);
  cudaEventDestroy(e[1]);
  cudaGetLastError();
  return ms;
}

/* Test hook: config cuda.conv_impl=<name of an alternative> takes that alternative,
 * untimed, wherever it takes the problem, so that tests reach each implementation
 * whatever the timing on their small shapes would pick. Builds with it set use no
 * algorithm cache. */
static const char *forced_impl(const cuda_exec *x) { return config_get(x->cfg, "cuda.conv_impl"); }

/* Makes alternative a the step's implementation without timing it: false when it does
 * not take the problem or needs more scratch than the workspace limit allows. */
static bool take_alt(const cuda_exec *x, conv_state *s, const conv_alt *a) {
  void *as = NULL;
  int64_t ws = 0;
  if (!s->prob_ok || a->prepare(x, &s->prob, &as, &ws) != INFER_OK ||
      (x->ws_limit > 0 && ws > x->ws_limit)) {
    cudaGetLastError();
    if (as && a->release) a->release(as);
    return false;
  }
  s->alt = a;
  s->alt_state = as;
  s->alt_ws = ws;
  return true;
}

static bool forced_variant(const cuda_exec *x, conv_state *s) {
  const char *f = forced_impl(x);
  for (int i = 0; f && conv_alts[i]; i++)
    if (strcmp(conv_alts[i]->name, f) == 0) return take_alt(x, s, conv_alts[i]);
  return false;
}

/* Picks the fastest of: convolution + epilogue kernel, cuDNN's fused call (where it
 * takes the activation), and each alternative implementation that takes the problem. */
static void choose_variant(const cuda_exec *x, conv_state *s, const void *xb, const void *w,
                           const void *bias, void *yb, void *wsb) {
  if (forced_variant(x, s)) return;
  /* an input clamp (x_max) leaves cuDNN out: only alternatives take it */
  float best = s->prob.has_x_max ? -1 : time_variant(x, s, 0, NULL, NULL, NULL, xb, w, bias, yb, wsb);
  if (s->actd && !s->prob.has_x_max) {
    float f = time_variant(x, s, 1, NULL, NULL, NULL, xb, w, bias, yb, wsb);
    if (f >= 0 && (best < 0 || f <= best)) {
      best = f;
      s->use_fused = true;
    }
  }
  for (int i = 0; s->prob_ok && conv_alts[i]; i++) {
    const conv_alt *a = conv_alts[i];
    void *as = NULL, *aws = NULL;
    int64_t ws = 0;
    if (a->prepare(x, &s->prob, &as, &ws) != INFER_OK) {
      cudaGetLastError();
      continue;
    }
    float t = -1;
    bool fits = x->ws_limit <= 0 || ws <= x->ws_limit;
    if (fits && (ws <= 0 || cudaMalloc(&aws, (size_t)ws) == cudaSuccess))
      t = time_variant(x, s, 2, a, as, aws, xb, w, bias, yb, wsb);
    if (aws) cudaFree(aws);
    cudaGetLastError();
    if (t >= 0 && (best < 0 || t < best)) {
      if (s->alt && s->alt->release) s->alt->release(s->alt_state);
      s->alt = a;
      s->alt_state = as;
      s->alt_ws = ws;
      best = t;
    } else if (a->release) {
      a->release(as);
    }
  }
}

/* The algorithm cache's key: everything the choice depends on (cuDNN's descriptors
 * hold the problem; the epilogue decides whether the fused call is timed). */
static void key_add(char *key, size_t cap, size_t *len, const char *fmt, long long v) {
  if (*len >= cap) return;
  int k = snprintf(key + *len, cap - *len, fmt, v);
  *len = k < 0 ? cap : *len + (size_t)k;
}

static void cache_key(const conv_state *s, const int64_t *xd, const int64_t *wd, const int *pads,
                      const int *strides, const int *dil, int64_t group, cudnnDataType_t dt,
                      infer_precision p, char *key, size_t cap) {
  size_t k = 0;
  key[0] = 0;
  key_add(key, cap, &k, "conv:rank=%lld:x=", s->rank);
  for (int i = 0; i < s->rank; i++) key_add(key, cap, &k, "%lld,", xd[i]);
  key_add(key, cap, &k, ":w=%lld,", wd[0]);
  for (int i = 1; i < s->rank; i++) key_add(key, cap, &k, "%lld,", wd[i]);
  key_add(key, cap, &k, ":g=%lld:p/s/d=", group);
  for (int i = 0; i < s->rank - 2; i++) {
    key_add(key, cap, &k, "%lld/", pads[i]);
    key_add(key, cap, &k, "%lld/", strides[i]);
    key_add(key, cap, &k, "%lld,", dil[i]);
  }
  key_add(key, cap, &k, ":dt=%lld", dt);
  key_add(key, cap, &k, ":prec=%lld", p);
  key_add(key, cap, &k, ":nhwc=%lld", s->channels_last);
  key_add(key, cap, &k, ":act=%lld", s->actd ? (long long)s->act : -1);
  key_add(key, cap, &k, ":z=%lld", s->has_z);
  key_add(key, cap, &k, ":xmax=%lld", s->prob.has_x_max);
  /* a cache written by a build with fewer alternatives never timed the new ones */
  int alts = 0;
  while (conv_alts[alts]) alts++;
  key_add(key, cap, &k, ":alts=%lld", alts);
}

/* A cached choice, checked against cuDNN before use: the workspace query fails
 * for an algorithm this cuDNN or problem does not have. */
static bool cached_algo(const cuda_exec *x, conv_state *s, const char *key) {
  int64_t v[4];
  if (!algo_cache_get(x->algo_cache, key, v)) return false;
  if (v[0] < 0 || v[0] >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT || v[2] < 0) return false;
  size_t ws = 0;
  cudnnSetConvolutionMathType(s->d.conv, (cudnnMathType_t)v[1]);
  if (cudnnGetConvolutionForwardWorkspaceSize(x->cudnn, s->d.x, s->d.w, s->d.conv, s->d.y,
                                              (cudnnConvolutionFwdAlgo_t)v[0],
                                              &ws) != CUDNN_STATUS_SUCCESS ||
      ws != (size_t)v[2] || (x->ws_limit > 0 && (int64_t)ws > x->ws_limit))
    return false;
  s->algo = (cudnnConvolutionFwdAlgo_t)v[0];
  s->algo_ws = ws;
  if (s->prob.has_x_max && v[3] < 2) return false;
  s->use_fused = v[3] == 1 && s->actd;
  if (v[3] >= 2) { /* an alternative implementation, by its index in conv_alts */
    int n = 0;
    while (conv_alts[n]) n++;
    if (v[3] - 2 >= n || !take_alt(x, s, conv_alts[v[3] - 2])) return false;
  }
  return true;
}

/* What the cache keeps of the choice: 0 convolution + epilogue kernel, 1 cuDNN's fused
 * call, 2 + i the alternative conv_alts[i]. */
static int64_t variant_code(const conv_state *s) {
  if (!s->alt) return s->use_fused;
  int i = 0;
  while (conv_alts[i] && conv_alts[i] != s->alt) i++;
  return 2 + i;
}

static infer_status choose_algo(const cuda_exec *x, conv_state *s, const tensor *const *in,
                                int64_t y_bytes) {
  cudnnHandle_t h = x->cudnn;
  /* Measured search on real buffers: scratch input/output allocated only here,
   * at build time. */
  int64_t x_bytes = 1;
  for (int i = 0; i < s->rank; i++) x_bytes *= s->padded_dims[i];
  x_bytes *= (int64_t)infer_dtype_size(in[0]->dtype);
  void *xb = NULL, *yb = NULL, *wsb = NULL, *wb = NULL;
  size_t ws_limit = x->ws_limit > 0 ? (size_t)x->ws_limit : (size_t)1 << 30;
  infer_status st = INFER_OK;
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  /* weights that are a graph input (not constant) get a scratch copy for the search */
  const void *w = in[1]->data;
  if (!w && cudaMalloc(&wb, (size_t)tensor_nbytes(in[1]) + 1) == cudaSuccess) {
    cudaMemsetAsync(wb, 0, (size_t)tensor_nbytes(in[1]) + 1, (cudaStream_t)x->stream);
    w = wb;
  }
  if (!w || cudaMalloc(&xb, (size_t)x_bytes) != cudaSuccess || cudaMalloc(&yb, (size_t)y_bytes) != cudaSuccess) {
    cudaGetLastError();
    st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "Conv: no device memory for the algorithm search");
    goto out;
  }
  /* a workspace as large as the largest algorithm asks, capped */
  size_t want = 0;
  for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; a++) {
    size_t sz = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(h, s->d.x, s->d.w, s->d.conv, s->d.y,
                                                (cudnnConvolutionFwdAlgo_t)a, &sz) == CUDNN_STATUS_SUCCESS &&
        sz > want && sz <= ws_limit)
      want = sz;
  }
  if (want && cudaMalloc(&wsb, want) != cudaSuccess) {
    cudaGetLastError();
    want = 0;
    wsb = NULL;
  }
  cudaMemsetAsync(xb, 0, (size_t)x_bytes, (cudaStream_t)x->stream);
  cudnnStatus_t cs = cudnnFindConvolutionForwardAlgorithmEx(
      h, s->d.x, xb, s->d.w, w, s->d.conv, s->d.y, yb, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found,
      perf, wsb, want);
  if (cs != CUDNN_STATUS_SUCCESS) {
    st = infer_fail(INFER_ERR_DEVICE, "cudnnFindConvolutionForwardAlgorithmEx failed: %s",
                    cudnnGetErrorString(cs));
    goto out;
  }
  /* The measured search can come back empty when other threads hold the device
   * busy (each trial failing); cuDNN's heuristics then choose without running. */
  bool measured = false;
  for (int i = 0; i < found; i++) measured |= perf[i].status == CUDNN_STATUS_SUCCESS;
  if (!measured &&
      cudnnGetConvolutionForwardAlgorithm_v7(h, s->d.x, s->d.w, s->d.conv, s->d.y,
                                             CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found,
                                             perf) != CUDNN_STATUS_SUCCESS)
    found = 0;
  st = infer_fail(INFER_ERR_UNSUPPORTED, "Conv: cuDNN has no algorithm for this convolution");
  for (int i = 0; i < found; i++) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > want) continue;
    /* fp32 means IEEE fp32: results that used TF32 tensor cores are skipped */
    if (x->precision == INFER_PRECISION_FP32 && !s->d.is_double &&
        perf[i].mathType == CUDNN_TENSOR_OP_MATH && in[0]->dtype == INFER_DTYPE_FLOAT32)
      continue;
    s->algo = perf[i].algo;
    s->algo_ws = perf[i].memory;
    cudnnSetConvolutionMathType(s->d.conv, perf[i].mathType);
    st = INFER_OK;
    break;
  }
  if (st == INFER_OK && s->kdt)
    choose_variant(x, s, xb, w, in[2] && in[2]->data ? in[2]->data : s->zero_bias, yb, wsb);
  if (st == INFER_OK && s->prob.has_x_max && !s->alt)
    st = infer_fail(INFER_ERR_UNSUPPORTED, "FusedConv with input_max: none of the GPU "
                    "convolutions that clamp their input takes this one");
out:
  if (wb) cudaFree(wb);
  if (xb) cudaFree(xb);
  if (yb) cudaFree(yb);
  if (wsb) cudaFree(wsb);
  return st;
}

/* What Conv and ConvTranspose read alike: the spatial rank (1 to 3), the cuDNN
 * data type, the window attributes and the group count. */
static infer_status conv_read_common(const node *n, const char *op, const tensor *X, int *nsp,
                                     cudnnDataType_t *dt, win_attrs *w, int64_t *group) {
  *nsp = X->rank - 2;
  if (*nsp < 1 || *nsp > 3)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: %d spatial dims", op, *nsp);
  TRY(data_type(X->dtype, dt));
  TRY(win_attrs_parse(n, op, w));
  return attr_get_int(n, "group", 1, group);
}

/* Conv, and FusedConv when fp is set (its epilogue, Z, channels_last). */
static infer_status conv_prepare_common(const cuda_exec *x, const node *n,
                                        const fused_conv_params *fp, const tensor *const *in,
                                        tensor *const *out, void **state, int64_t *ws_bytes) {
  const char *op = fp ? "FusedConv" : "Conv";
  const tensor *X = in[0], *W = in[1];
  bool cl = fp && fp->channels_last;
  if (cl && X->rank != 4)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: channels_last needs 2-D data", op);
  /* logical N, C, spatial... views of X, W and Y (channels-last data is N, H, W, C) */
  int64_t Xl[5], Wl[5], Yl[5];
  const int64_t *phys[3] = {X->dims, W->dims, out[0]->dims};
  int64_t *logi[3] = {Xl, Wl, Yl};
  for (int t = 0; t < 3; t++)
    for (int i = 0; i < X->rank; i++)
      logi[t][i] = !cl ? phys[t][i] : phys[t][i == 0 ? 0 : i == 1 ? 3 : i - 1];
  int nsp;
  cudnnDataType_t dt = CUDNN_DATA_FLOAT;
  win_attrs w;
  int64_t group;
  TRY(conv_read_common(n, op, X, &nsp, &dt, &w, &group));
  if (fp && dt == CUDNN_DATA_DOUBLE)
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedConv on the GPU: float64 is not supported");
  win_geom g;
  TRY(win_geom_forward(&w, nsp, Xl + 2, Wl + 2, false, op, &g));
  conv_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  /* cuDNN wants at least 4-D: a 1-D problem becomes 2-D with H = 1 */
  int r = nsp == 1 ? 4 : nsp + 2;
  s->rank = r;
  int64_t xd[5], wd[5], yd[5], in_l[5], pad_l[5], begin_l[5] = {0, 0, 0, 0, 0};
  int pads[3], strides[3], dil[3];
  int lead = r - 2 - nsp; /* 1 for 1-D, else 0 */
  xd[0] = Xl[0]; xd[1] = Xl[1];
  wd[0] = Wl[0]; wd[1] = Wl[1];
  yd[0] = Yl[0]; yd[1] = Yl[1];
  for (int i = 0; i < r - 2; i++) {
    int j = i - lead; /* index into the real spatial dims, or < 0 for the fake H */
    int gi = 3 - nsp + j;  /* win_geom is right-aligned in 3 dims */
    xd[2 + i] = j < 0 ? 1 : Xl[2 + j];
    wd[2 + i] = j < 0 ? 1 : Wl[2 + j];
    yd[2 + i] = j < 0 ? 1 : Yl[2 + j];
    pads[i] = j < 0 ? 0 : (int)(g.pb[gi] < g.pe[gi] ? g.pb[gi] : g.pe[gi]);
    strides[i] = j < 0 ? 1 : (int)g.s[gi];
    dil[i] = j < 0 ? 1 : (int)g.d[gi];
    begin_l[2 + i] = j < 0 ? 0 : g.pb[gi] - pads[i];
    int64_t extra_end = j < 0 ? 0 : g.pe[gi] - pads[i];
    if (begin_l[2 + i] || extra_end) s->explicit_pad = true;
    pad_l[2 + i] = xd[2 + i] + begin_l[2 + i] + extra_end;
  }
  pad_l[0] = xd[0];
  pad_l[1] = xd[1];
  memcpy(in_l, xd, sizeof xd);
  /* the pad kernel works in memory order */
  for (int i = 0; i < r; i++) {
    int li = !cl ? i : i == 0 ? 0 : i == r - 1 ? 1 : i + 1;
    s->in_dims[i] = in_l[li];
    s->padded_dims[i] = pad_l[li];
    s->pad_begin[i] = begin_l[li];
  }
  s->channels_last = cl;
  if (fp) {
    s->act = fp->act;
    s->alpha = fp->alpha;
    s->beta = fp->beta;
    s->has_z = n->n_inputs > 3 && in[3];
  }
  s->kdt = dt == CUDNN_DATA_HALF ? K_F16 : dt == CUDNN_DATA_FLOAT ? K_F32 : 0;
  s->channels = yd[1];
  s->count = dims_count(out[0]->rank, out[0]->dims);
  s->inner = cl ? 1 : s->count / (yd[0] * yd[1] > 0 ? yd[0] * yd[1] : 1);
  if (nsp == 2 && s->kdt) {
    conv_problem *q = &s->prob;
    q->n = (int)pad_l[0]; q->c = (int)pad_l[1]; q->h = (int)pad_l[2]; q->w = (int)pad_l[3];
    q->k = (int)wd[0]; q->r = (int)wd[2]; q->s = (int)wd[3];
    q->group = (int)group;
    q->out_h = (int)yd[2]; q->out_w = (int)yd[3];
    q->pad_h = pads[0]; q->pad_w = pads[1];
    q->stride_h = strides[0]; q->stride_w = strides[1];
    q->dil_h = dil[0]; q->dil_w = dil[1];
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
    s->prob_ok = true;
  }
  infer_status st = INFER_OK;
  if (fp && !isinf(fp->input_max) && !s->prob_ok) {
    st = infer_fail(INFER_ERR_UNSUPPORTED, "FusedConv with input_max: only 2-D float "
                    "convolutions on the GPU clamp their input");
    goto fail;
  }
  bool has_b = n->n_inputs > 2 && in[2];
  /* the fused call always takes a bias descriptor */
  st = descs_make(&s->d, x, dt, r, pad_l, wd, yd, pads, strides, dil, group,
                                has_b || s->kdt, cl);
  if (st != INFER_OK) goto fail;
  /* cuDNN's own output shape must be ours */
  int yo[5];
  cudnnStatus_t cs = cudnnGetConvolutionNdForwardOutputDim(s->d.conv, s->d.x, s->d.w, r, yo);
  for (int i = 0; st == INFER_OK && i < r; i++)
    if (cs != CUDNN_STATUS_SUCCESS || yo[i] != yd[i])
      st = infer_fail(INFER_ERR_INTERNAL, "%s on the GPU: cuDNN's output shape differs from "
                      "the inferred one at dim %d", op, i);
  if (st != INFER_OK) goto fail;
  /* cuDNN fuses identity (bias only), ReLU and ReLU6-like clips */
  bool fusable = s->kdt && (s->act == CONV_ACT_NONE || s->act == CONV_ACT_RELU ||
                            (s->act == CONV_ACT_CLIP && s->alpha == 0 && s->beta > 0));
  if (fusable) {
    CUDNN_TRY(cudnnCreateActivationDescriptor(&s->actd));
    cudnnActivationMode_t mode = s->act == CONV_ACT_RELU   ? CUDNN_ACTIVATION_RELU
                                 : s->act == CONV_ACT_CLIP ? CUDNN_ACTIVATION_CLIPPED_RELU
                                                           : CUDNN_ACTIVATION_IDENTITY;
    CUDNN_TRY(cudnnSetActivationDescriptor(s->actd, mode, CUDNN_NOT_PROPAGATE_NAN,
                                           s->act == CONV_ACT_CLIP ? s->beta : 0.0));
    if (!has_b) {
      size_t bb = (size_t)yd[1] * infer_dtype_size(X->dtype);
      if (cudaMalloc(&s->zero_bias, bb) != cudaSuccess || cudaMemset(s->zero_bias, 0, bb) != cudaSuccess) {
        cudaGetLastError();
        st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: no device memory for a zero bias", op);
        goto fail;
      }
    }
  }
  int64_t y_bytes = tensor_nbytes(out[0]);
  char key[ALGO_CACHE_KEY_MAX + 1];
  cache_key(s, pad_l, wd, pads, strides, dil, group, dt, x->precision, key, sizeof key);
  bool forced = forced_impl(x) != NULL;
  if (forced || !cached_algo(x, s, key)) {
    if ((st = choose_algo(x, s, in, y_bytes > 0 ? y_bytes : 1)) != INFER_OK) goto fail;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    cudnnGetConvolutionMathType(s->d.conv, &math);
    int64_t v[4] = {s->algo, math, (int64_t)s->algo_ws, variant_code(s)};
    if (!forced) algo_cache_put(x->algo_cache, key, v);
  }
  if (s->explicit_pad) {
    int64_t cnt = 1;
    for (int i = 0; i < r; i++) cnt *= s->padded_dims[i];
    s->padded_bytes = (cnt * (int64_t)infer_dtype_size(X->dtype) + 255) / 256 * 256;
  }
  *ws_bytes = s->padded_bytes + (s->alt ? s->alt_ws : (int64_t)s->algo_ws);
  return INFER_OK;
fail:
  conv_release(s);
  *state = NULL;
  return st;
}

static infer_status cuda_conv_prepare(const cuda_exec *x, const node *n, const void *params,
                                 const tensor *const *in, const tensor *const *host_in,
                                 tensor *const *out, void **state, int64_t *ws_bytes) {
  return conv_prepare_common(x, n, NULL, in, out, state, ws_bytes);
}

static infer_status fused_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  return conv_prepare_common(x, n, params, in, out, state, ws_bytes);
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
  CUDNN_TRY(cudnnConvolutionForward(x->cudnn, DESCS_ONE(d), d->x, src, d->w, in[1]->data, d->conv,
                                    s->algo, s->algo_ws ? ws : NULL, s->algo_ws, DESCS_ZERO(d),
                                    d->y, out[0]->data));
  if (!s->kdt) return add_bias(x, d, in, out); /* float64 */
  if (!bias && !z && s->act == CONV_ACT_NONE) return INFER_OK;
  CUDA_LAUNCH_TRY(k_conv_epilogue(s->kdt, out[0]->data, bias, z, s->count, s->channels, s->inner,
                                  s->act, s->alpha, s->beta, stream));
  return INFER_OK;
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
  descs_release(&s->d);
  free(s);
}

static infer_status convt_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  const tensor *X = in[0], *W = in[1];
  int nsp;
  cudnnDataType_t dt = CUDNN_DATA_FLOAT;
  win_attrs w;
  int64_t group;
  TRY(conv_read_common(n, "ConvTranspose", X, &nsp, &dt, &w, &group));
  const int64_t *opad;
  int n_opad;
  TRY(attr_get_ints(n, "output_padding", &opad, &n_opad));
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
    strides[i] = j < 0 || w.n_strides < 0 ? 1 : (int)w.strides[j];
    dil[i] = j < 0 || w.n_dilations < 0 ? 1 : (int)w.dilations[j];
    if (j < 0) {
      pads[i] = 0;
      continue;
    }
    /* total padding follows from the output size; cuDNN takes it symmetric */
    int64_t k_eff = (wd[2 + i] - 1) * dil[i] + 1, op = n_opad > j ? opad[j] : 0;
    int64_t total = strides[i] * (xd[2 + i] - 1) + op + k_eff - yd[2 + i];
    bool explicit_asym = w.n_pads > 0 && w.pads[j] != w.pads[j + nsp];
    if (total < 0 || total % 2 || explicit_asym)
      return infer_fail(INFER_ERR_UNSUPPORTED,
                        "ConvTranspose on the GPU: asymmetric padding is not supported");
    pads[i] = (int)(total / 2);
  }
  convt_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  infer_status st = descs_make(&s->d, x, dt, r, xd, wd, yd, pads, strides, dil, group,
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
  CUDNN_TRY(cudnnConvolutionBackwardData(x->cudnn, DESCS_ONE(d), d->w, in[1]->data, d->x,
                                         in[0]->data, d->conv, s->algo,
                                         s->algo_ws ? x->ws : NULL, s->algo_ws, DESCS_ZERO(d),
                                         d->y, out[0]->data));
  return add_bias(x, d, in, out);
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
