/* conv_algo_search.c: the measured choice of one Conv / FusedConv step's algorithm
 * and implementation at build time (cuda_conv.h): cuDNN's search, then the timing of
 * the epilogue variants and of the alternative implementations (conv_alt.h). */
#include <string.h>

#include "cuda_conv.h"
#include "cuda_timing.h"

/* Runs the convolution with its epilogue once: the fused cuDNN call, or the
 * convolution and the epilogue kernel. y doubles as z here (build-time scratch). */
static bool run_variant(const cuda_exec *x, const conv_state *s, bool fused, const void *xb,
                        const void *w, const void *bias, void *yb, void *wsb) {
  const conv_descs *d = &s->d;
  if (fused)
    return cudnnConvolutionBiasActivationForward(
               x->cudnn, DESCS_ONE(d), d->x, xb, d->w, w, d->conv, s->algo, wsb, s->algo_ws,
               s->has_z ? DESCS_ONE(d) : DESCS_ZERO(d), d->y, yb, d->b, bias, s->actd, d->y,
               yb) == CUDNN_STATUS_SUCCESS;
  return conv_then_epilogue(x, s, xb, w, bias, s->has_z ? yb : NULL, yb, wsb) == INFER_OK;
}

typedef struct variant_run {
  const cuda_exec *x;
  const conv_state *s;
  int variant;
  const conv_alt *a;
  void *as, *aws, *yb, *wsb;
  const void *xb, *w, *bias;
} variant_run;

static bool variant_once(void *ctx) {
  const variant_run *r = ctx;
  if (r->variant < 2)
    return run_variant(r->x, r->s, r->variant == 1, r->xb, r->w, r->bias, r->yb, r->wsb);
  return r->a->run(r->x, r->as, r->xb, r->w, r->s->prob.has_bias ? r->bias : NULL,
                   r->s->has_z ? r->yb : NULL, r->yb, r->aws) == INFER_OK;
}

/* Median-free but warm timing of one variant: 0 cuDNN convolution + epilogue kernel,
 * 1 cuDNN's fused call, 2 the alternative `a` (state as, scratch aws). -1 when it
 * fails. Three runs after one warm-up, on the build's scratch buffers. */
static float time_variant(const cuda_exec *x, const conv_state *s, int variant,
                          const conv_alt *a, void *as, void *aws, const void *xb,
                          const void *w, const void *bias, void *yb, void *wsb) {
  variant_run r = {.x = x, .s = s, .variant = variant, .a = a, .as = as, .aws = aws,
                   .yb = yb, .wsb = wsb, .xb = xb, .w = w, .bias = bias};
  return cuda_time_runs(x->stream, variant_once, &r);
}

/* Test hook: config cuda.conv_impl=<name of an alternative> takes that alternative,
 * untimed, wherever it takes the problem (cudnn+epi: the convolution and the epilogue
 * kernel; cudnn-fused: cuDNN's fused call), so that tests reach each implementation
 * whatever the timing on their small shapes would pick. Builds with it set use no
 * algorithm cache. */
const char *conv_forced_impl(const cuda_exec *x) {
  return config_get(x->cfg, "cuda.conv_impl");
}

/* Makes alternative a the step's implementation without timing it: false when it does
 * not take the problem or needs more scratch than the workspace limit allows. */
bool conv_take_alt(const cuda_exec *x, conv_state *s, const conv_alt *a) {
  void *as = NULL;
  int64_t ws = 0;
  /* asked to write a slice of a wider tensor: the alternative's pitched form first */
  if (s->prob_ok && s->y_pitch_req && a->y_pitch) {
    conv_problem q = s->prob;
    q.y_pitch = s->y_pitch_req;
    if (a->prepare(x, &q, &as, &ws) == INFER_OK && (x->ws_limit <= 0 || ws <= x->ws_limit)) {
      s->prob = q;
      s->y_pitched = true;
      s->alt = a;
      s->alt_state = as;
      s->alt_ws = ws;
      return true;
    }
    cudaGetLastError();
    if (as && a->release) a->release(as);
    as = NULL;
  }
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

static bool forced_variant(const cuda_exec *x, conv_state *s, const void *xb, const void *w,
                           const void *bias, void *yb, void *wsb) {
  const char *f = conv_forced_impl(x);
  /* "cudnn+epi": cuDNN's convolution and our epilogue kernel (kernels/conv_epilogue.cu),
   * except where an input clamp needs an alternative */
  if (f && strcmp(f, "cudnn+epi") == 0 && !s->prob.has_x_max) return true;
  /* "cudnn-fused": cuDNN's one fused call, where it takes the epilogue (with
   * cuda.nan_exact: identity only) */
  if (f && strcmp(f, "cudnn-fused") == 0 && s->actd && !s->prob.has_x_max &&
      run_variant(x, s, true, xb, w, bias, yb, wsb)) { /* this algorithm takes the call */
    s->use_fused = true;
    return true;
  }
  cudaGetLastError();
  for (int i = 0; f && conv_alts[i]; i++)
    if (strcmp(conv_alts[i]->name, f) == 0) return conv_take_alt(x, s, conv_alts[i]);
  return false;
}

/* The fastest alternative that takes problem q (with pitched_only, only those that write
 * a slice of a wider tensor), timed on the build's scratch: its time (-1: none ran), its
 * state and scratch size in *a, *as, *ws for the caller to keep or release. The first of
 * equal times wins. */
static float fastest_alt(const cuda_exec *x, const conv_state *s, const conv_problem *q,
                         bool pitched_only, const void *xb, const void *w, const void *bias,
                         void *yb, void *wsb, const conv_alt **a, void **as, int64_t *ws) {
  float best = -1;
  *a = NULL, *as = NULL, *ws = 0;
  for (int i = 0; conv_alts[i]; i++) {
    const conv_alt *c = conv_alts[i];
    void *cs = NULL, *cws = NULL;
    int64_t n = 0;
    if ((pitched_only && !c->y_pitch) || c->prepare(x, q, &cs, &n) != INFER_OK) {
      cudaGetLastError();
      continue;
    }
    float t = -1;
    bool fits = x->ws_limit <= 0 || n <= x->ws_limit;
    if (fits && (n <= 0 || cudaMalloc(&cws, (size_t)n) == cudaSuccess))
      t = time_variant(x, s, 2, c, cs, cws, xb, w, bias, yb, wsb);
    if (cws) cudaFree(cws);
    cudaGetLastError();
    if (t >= 0 && (best < 0 || t < best)) {
      if (*a && (*a)->release) (*a)->release(*as);
      *a = c, *as = cs, *ws = n, best = t;
    } else if (c->release) {
      c->release(cs);
    }
  }
  return best;
}

/* Picks the fastest of: convolution + epilogue kernel, cuDNN's fused call (where it
 * takes the activation), and each alternative implementation that takes the problem.
 * Returns its time (ms; -1 when forced or none ran). */
static float choose_variant(const cuda_exec *x, conv_state *s, const void *xb, const void *w,
                            const void *bias, void *yb, void *wsb) {
  if (forced_variant(x, s, xb, w, bias, yb, wsb)) return -1;
  /* an input clamp (x_max) leaves cuDNN out: only alternatives take it */
  float best = s->prob.has_x_max ? -1 : time_variant(x, s, 0, NULL, NULL, NULL, xb, w, bias, yb, wsb);
  if (s->actd && !s->prob.has_x_max) {
    float f = time_variant(x, s, 1, NULL, NULL, NULL, xb, w, bias, yb, wsb);
    if (f >= 0 && (best < 0 || f <= best)) {
      best = f;
      s->use_fused = true;
    }
  }
  const conv_alt *a = NULL;
  void *as = NULL;
  int64_t ws = 0;
  float t = s->prob_ok ? fastest_alt(x, s, &s->prob, false, xb, w, bias, yb, wsb, &a, &as, &ws)
                       : -1;
  if (t >= 0 && (best < 0 || t < best)) {
    s->alt = a;
    s->alt_state = as;
    s->alt_ws = ws;
    best = t;
  } else if (a && a->release) {
    a->release(as);
  }
  return best;
}

/* Asked to write a slice of a wider tensor (s->y_pitch_req: a Concat's part, engine/cuda/
 * cuda_concat_in_place.c): the fastest alternative that writes so replaces the dense
 * choice (time `best`) where it is no slower than that choice plus the Concat's copy of
 * this part, which writing in place saves (read and written once, estimated at 3 TB/s).
 * ybp: scratch for the pitched output. */
static void choose_pitched(const cuda_exec *x, conv_state *s, const void *xb, const void *w,
                           const void *bias, void *ybp, void *wsb, float best,
                           int64_t y_bytes) {
  conv_problem q = s->prob;
  q.y_pitch = s->y_pitch_req;
  const conv_alt *pa;
  void *ps;
  int64_t pws;
  /* the timing reads only the bias and residual flags from s, which q shares */
  float pbest = fastest_alt(x, s, &q, true, xb, w, bias, ybp, wsb, &pa, &ps, &pws);
  const float copy_ms = (float)(2.0 * (double)y_bytes / 3.0e9);
  if (!pa || (best >= 0 && pbest > best + copy_ms)) {
    if (pa && pa->release) pa->release(ps);
    return;
  }
  if (s->alt && s->alt->release) s->alt->release(s->alt_state);
  s->alt = pa;
  s->alt_state = ps;
  s->alt_ws = pws;
  s->use_fused = false;
  s->prob = q;
  s->y_pitched = true;
}

infer_status conv_choose_algo(const cuda_exec *x, conv_state *s, const tensor *const *in,
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
    /* cuda.nan_exact: no FFT or Winograd algorithm, whose transforms spread a NaN or an
     * infinity of one input pixel over other outputs (conv_cudnn_graph.c's cfg_allowed) */
    cudnnConvolutionFwdAlgo_t al = perf[i].algo;
    if (s->nan_exact && (al == CUDNN_CONVOLUTION_FWD_ALGO_FFT || al == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
                         al == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
                         al == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED))
      continue;
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
  if (st == INFER_OK && s->kdt) {
    const void *bias = in[2] && in[2]->data ? in[2]->data : s->zero_bias;
    float best = choose_variant(x, s, xb, w, bias, yb, wsb);
    void *ybp = NULL; /* the pitched output's scratch */
    int64_t pitched_bytes = s->prob.k > 0 ? y_bytes / s->prob.k * s->y_pitch_req : 0;
    if (s->y_pitch_req && !s->y_pitched && s->prob_ok && !conv_forced_impl(x) &&
        cudaMalloc(&ybp, (size_t)pitched_bytes) == cudaSuccess) {
      choose_pitched(x, s, xb, w, bias, ybp, wsb, best, y_bytes);
      cudaFree(ybp);
    }
    cudaGetLastError();
  }
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
