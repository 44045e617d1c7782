/* conv_cudnn_graph.c: one 2-D fp16 FusedConv through cuDNN's backend (graph) API. The
 * operation graph is the convolution and its epilogue as pointwise operations,
 *   y = act(conv(x, w) + bias + z)     act: none, ReLU, clip(0, beta) (ReLU with an
 *                                      upper clip), sigmoid, tanh, swish (SiLU), GELU
 * through virtual fp32 intermediates, so cuDNN's fusion engines (runtime-compiled
 * ones among them: the ConvBiasAddAct pattern) run it as one kernel. With
 * cuda.nan_exact the activation leaves the graph and follows as one pass of our epilogue
 * kernel, which keeps NaN (whether cuDNN's pointwise ops do is cuDNN's). At build the
 * heuristics' first engine configs become plans, each is timed on scratch buffers,
 * and the fastest is kept; cuda_conv.c then times it against its own choices. y may be
 * a slice of a wider channels-last tensor (y_pitch: the y tensor's strides), which the
 * engines that take such strides write in place. An int8 problem (Int8Conv,
 * ops/cuda/conv_int8.c) is the same graph on int8 x and w with the int32 sums scaled per
 * output channel first: the only implementation it has. */
#include <float.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../core/cuda_check.h"
#include "../../kernels/conv_epilogue.h"
#include "../../kernels/k_dtype.h"
#include "../conv_fused.h"
#include "conv_alt.h"
#include "cudnn_backend_util.h"

/* unique ids of the graph's tensors: the bound ones, then the virtual ones */
enum { UID_X = 1, UID_W, UID_B, UID_Z, UID_Y, UID_S, UID_YS, UID_VIRTUAL = 101 };

#define CG_MAX_CFGS 16  /* engine configs asked of the heuristics */
/* The search runs for every convolution of every build (conformance builds thousands
 * of engines), so it is kept short: a few precompiled plans; runtime-compiled ones
 * (about a second each) only when INFER_CUDNN_RTC=1 asks for them. */
#define CG_MAX_PLANS 4  /* plans finalized and timed */
#define CG_MAX_RTC 2    /* of those, runtime-compiled ones, when allowed */
#define CG_BUDGET_S 0.5 /* no further plan after this long, once one is found */
#define CG_MAX_WS ((int64_t)1 << 30)
#define CG_ALIGN 16     /* byte alignment declared for every bound tensor, checked in run */

typedef struct cg_state {
  be_pool pool;                       /* the graph's tensors, descriptors and operations */
  cudnnBackendDescriptor_t cfg, plan; /* the chosen engine config and its plan */
  int64_t ws;                         /* the plan's workspace bytes */
  bool has_bias, has_z;
  const float *scale; /* int8: the per-channel scale (device, the caller's), else NULL */
  const float *y_inv; /* int8 output: the reciprocal of its scale (the caller's), else NULL */
  int kdt;            /* y's dtype (K_F16, or K_F32 for int8) */
  int post_act; /* an activation the graph leaves out, applied after it; else 0 */
  float alpha, beta;
  int64_t count, channels; /* of y, for that pass */
  pthread_mutex_t lock;               /* one execute of the plan at a time (cg_run) */
  bool lock_ok;
} cg_state;

typedef struct cg_cand {
  cudnnBackendDescriptor_t cfg, plan;
  int64_t ws;
  float ms;
} cg_cand;

static void cg_release(void *p) {
  cg_state *s = p;
  if (!s) return;
  if (s->plan) cudnnBackendDestroyDescriptor(s->plan);
  if (s->cfg) cudnnBackendDestroyDescriptor(s->cfg);
  be_pool_release(&s->pool);
  if (s->lock_ok) pthread_mutex_destroy(&s->lock);
  free(s);
}

/* Sizes consistent, and cuDNN's output size ours (pads are symmetric here). */
static bool problem_ok(const conv_problem *p) {
  if (p->n < 1 || p->c < 1 || p->h < 1 || p->w < 1 || p->k < 1 || p->r < 1 || p->s < 1 ||
      p->group < 1 || p->c % p->group || p->k % p->group || p->pad_h < 0 || p->pad_w < 0 ||
      p->stride_h < 1 || p->stride_w < 1 || p->dil_h < 1 || p->dil_w < 1)
    return false;
  int64_t eh = (int64_t)p->h + 2 * (int64_t)p->pad_h - (int64_t)p->dil_h * (p->r - 1) - 1;
  int64_t ew = (int64_t)p->w + 2 * (int64_t)p->pad_w - (int64_t)p->dil_w * (p->s - 1) - 1;
  return eh >= 0 && ew >= 0 && eh / p->stride_h + 1 == p->out_h &&
         ew / p->stride_w + 1 == p->out_w;
}

/* The tensor a stage writes: y for the last one, else the next virtual fp32 tensor. */
static infer_status stage_out(be_pool *pl, int *left, int64_t *vuid, const int64_t *yd, bool cl,
                              cudnnBackendDescriptor_t y, cudnnBackendDescriptor_t *out) {
  if (--*left == 0) {
    *out = y;
    return INFER_OK;
  }
  return be_tensor(pl, (*vuid)++, CUDNN_DATA_FLOAT, yd, cl, true, CG_ALIGN, out);
}

/* The cuDNN pointwise mode and its parameter (be_pointwise) of activation `act` with
 * conv_problem's alpha / beta; false where cuDNN has none that computes the same. */
static bool cg_activation(const conv_problem *p, bool *act, cudnnPointwiseMode_t *mode,
                          double *param) {
  *act = p->act != CONV_ACT_NONE;
  *param = 0;
  switch (p->act) {
    case CONV_ACT_NONE: return true;
    case CONV_ACT_RELU: *mode = CUDNN_POINTWISE_RELU_FWD; *param = FLT_MAX; return true;
    case CONV_ACT_CLIP: /* clip(0, beta) only: ReLU with an upper clip */
      *mode = CUDNN_POINTWISE_RELU_FWD;
      *param = p->beta;
      if (!(p->alpha == 0 && p->beta > 0)) *act = false; /* a general clip: after the graph */
      return true;
    case CONV_ACT_SIGMOID: *mode = CUDNN_POINTWISE_SIGMOID_FWD; return true;
    case CONV_ACT_TANH: *mode = CUDNN_POINTWISE_TANH_FWD; return true;
    case CONV_ACT_SWISH: *mode = CUDNN_POINTWISE_SWISH_FWD; *param = p->alpha; return true;
    case CONV_ACT_GELU: *mode = CUDNN_POINTWISE_GELU_FWD; return true; /* erf form */
    /* the others (HardSwish, HardSigmoid, LeakyRelu, general Clip): after the graph, as
     * one pass of our epilogue kernel (post_act), as with cuda.nan_exact */
    default: *act = false; return p->act > CONV_ACT_NONE && p->act < CONV_ACT_COUNT;
  }
}

/* conv -> [+ bias] -> [+ z] -> [activation], fp16 in and out, fp32 between. An int8
 * problem (Int8Conv) is conv(x, w) in int32 -> * scale (per output channel) -> the same
 * epilogue, int8 in and kdt out: the ConvScaleBiasAct pattern of cuDNN's int8 engines;
 * with y_int8, then * 1 / y_scale into an int8 y (cuDNN rounds and saturates). */
static infer_status cg_graph(cg_state *s, cudnnHandle_t h, const conv_problem *p, bool act,
                             cudnnPointwiseMode_t mode, double param,
                             cudnnBackendDescriptor_t *og) {
  be_pool *pl = &s->pool;
  bool cl = p->channels_last;
  const cudnnDataType_t f16 = p->kdt == K_F32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF,
                        f32 = CUDNN_DATA_FLOAT;
  const cudnnDataType_t xdt = p->int8 ? CUDNN_DATA_INT8 : f16;
  int64_t xd[4] = {p->n, p->c, p->h, p->w};
  int64_t wd[4] = {p->k, p->c / p->group, p->r, p->s};
  int64_t yd[4] = {p->n, p->k, p->out_h, p->out_w};
  int64_t bd[4] = {1, p->k, 1, 1};
  int64_t pad[2] = {p->pad_h, p->pad_w}, str[2] = {p->stride_h, p->stride_w};
  int64_t dil[2] = {p->dil_h, p->dil_w};
  const bool y8 = p->int8 && p->y_int8;
  const cudnnDataType_t ydt = y8 ? CUDNN_DATA_INT8 : f16;
  int left = 1 + p->int8 + p->has_bias + p->has_z + act + y8, n_ops = 0;
  int64_t vuid = UID_VIRTUAL;
  cudnnBackendDescriptor_t tx, tw, ty, tb, tz, ts, tys, cur, out, ops[6];
  TRY(be_tensor(pl, UID_X, xdt, xd, cl, false, CG_ALIGN, &tx));
  TRY(be_tensor(pl, UID_W, xdt, wd, cl, false, CG_ALIGN, &tw));
  if (p->y_pitch) { /* a slice of a wider channels-last tensor: pixels y_pitch apart */
    int64_t ys[4] = {(int64_t)p->out_h * p->out_w * p->y_pitch, 1, p->out_w * p->y_pitch,
                     p->y_pitch};
    TRY(be_tensor_strided(pl, UID_Y, ydt, yd, ys, false, false, CG_ALIGN, &ty));
  } else {
    TRY(be_tensor(pl, UID_Y, ydt, yd, cl, false, CG_ALIGN, &ty));
  }
  if (p->int8) { /* the int32 sums, then their scale */
    left--;
    TRY(be_tensor(pl, vuid++, CUDNN_DATA_INT32, yd, cl, true, CG_ALIGN, &cur));
    TRY(be_conv_fwd(pl, tx, tw, cur, pad, str, dil, CUDNN_DATA_INT32, &ops[n_ops++]));
    TRY(be_tensor(pl, UID_S, f32, bd, cl, false, CG_ALIGN, &ts));
    TRY(stage_out(pl, &left, &vuid, yd, cl, ty, &out));
    TRY(be_pointwise(pl, CUDNN_POINTWISE_MUL, f32, 0, cur, ts, out, &ops[n_ops++]));
    cur = out;
  } else {
    TRY(stage_out(pl, &left, &vuid, yd, cl, ty, &cur));
    TRY(be_conv_fwd(pl, tx, tw, cur, pad, str, dil, f32, &ops[n_ops++]));
  }
  if (p->has_bias) {
    TRY(be_tensor(pl, UID_B, f16, bd, cl, false, CG_ALIGN, &tb));
    TRY(stage_out(pl, &left, &vuid, yd, cl, ty, &out));
    TRY(be_pointwise(pl, CUDNN_POINTWISE_ADD, f32, 0, cur, tb, out, &ops[n_ops++]));
    cur = out;
  }
  if (p->has_z) {
    TRY(be_tensor(pl, UID_Z, f16, yd, cl, false, CG_ALIGN, &tz));
    TRY(stage_out(pl, &left, &vuid, yd, cl, ty, &out));
    TRY(be_pointwise(pl, CUDNN_POINTWISE_ADD, f32, 0, cur, tz, out, &ops[n_ops++]));
    cur = out;
  }
  if (act) {
    TRY(stage_out(pl, &left, &vuid, yd, cl, ty, &out));
    TRY(be_pointwise(pl, mode, f32, param, cur, NULL, out, &ops[n_ops++]));
    cur = out;
  }
  if (y8) { /* quantized: times 1 / y_scale into the int8 y */
    TRY(be_tensor(pl, UID_YS, f32, bd, cl, false, CG_ALIGN, &tys));
    TRY(stage_out(pl, &left, &vuid, yd, cl, ty, &out));
    TRY(be_pointwise(pl, CUDNN_POINTWISE_MUL, f32, 0, cur, tys, out, &ops[n_ops++]));
  }
  return be_graph(pl, h, ops, n_ops, og);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Whether an engine config may run: fp16 data accumulates in fp32 as on the legacy
 * path (no reduced-precision reductions, no inputs narrowed further), no reordered
 * weights, and at most CG_MAX_RTC runtime-compiled engines per problem. With
 * cuda.nan_exact no FFT or Winograd engine either: their transforms mix the pixels of a
 * tile or of the whole image, so one NaN or infinity in the input spreads over outputs
 * that a plain sum of products keeps finite (the H200 gave such NaNs on a 1x1
 * convolution). */
/* Why the configs heuristics offered were not taken, counted for the refusal message. */
typedef struct cg_refusals {
  int offered, precision, nan_exact, reorder, rtc, plan_failed, over_ws;
} cg_refusals;

static bool cfg_allowed(cudnnBackendDescriptor_t cfg, bool rtc_ok, bool nan_exact, int *n_rtc,
                        cg_refusals *why) {
  uint32_t num = 0, beh = 0;
  if (be_config_notes(cfg, &num, &beh) != INFER_OK) {
    why->plan_failed++;
    return false;
  }
  if (num & (1u << CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION |
             1u << CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)) {
    why->precision++;
    return false;
  }
  if (nan_exact && (num & (1u << CUDNN_NUMERICAL_NOTE_FFT | 1u << CUDNN_NUMERICAL_NOTE_WINOGRAD |
                           1u << CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4 |
                           1u << CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6 |
                           1u << CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13))) {
    why->nan_exact++;
    return false;
  }
  if (beh & (1u << CUDNN_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8x32_REORDER |
             1u << CUDNN_BEHAVIOR_NOTE_REQUIRES_BIAS_INT8x32_REORDER)) {
    why->reorder++;
    return false;
  }
  if (beh & 1u << CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) {
    if (!rtc_ok || *n_rtc >= CG_MAX_RTC) {
      why->rtc++;
      return false;
    }
    (*n_rtc)++;
  }
  return true;
}

/* Plans of the first allowed configs of heuristics mode A (FALLBACK's when A yields
 * none) into c[0..return), within the limits above. Configs that fail are skipped. */
static int cg_search(cudnnHandle_t h, cudnnBackendDescriptor_t og, bool rtc_ok, bool nan_exact,
                     cg_cand *c, cg_refusals *why) {
  static const cudnnBackendHeurMode_t modes[2] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};
  int nc = 0, n_rtc = 0;
  double t0 = now_s();
  for (int m = 0; m < 2 && nc == 0; m++) {
    cudnnBackendDescriptor_t cfgs[CG_MAX_CFGS];
    int n = 0;
    if (be_heuristics(og, modes[m], CG_MAX_CFGS, cfgs, &n) != INFER_OK) continue;
    why->offered += n;
    for (int i = 0; i < n; i++) {
      bool keep = false;
      if (nc < CG_MAX_PLANS && (nc == 0 || now_s() - t0 < CG_BUDGET_S) &&
          cfg_allowed(cfgs[i], rtc_ok, nan_exact, &n_rtc, why)) {
        cudnnBackendDescriptor_t plan = NULL;
        int64_t ws = 0;
        if (be_plan(h, cfgs[i], &plan, &ws) == INFER_OK) {
          if (ws <= CG_MAX_WS) {
            c[nc++] = (cg_cand){.cfg = cfgs[i], .plan = plan, .ws = ws, .ms = -1};
            keep = true;
          } else {
            why->over_ws++;
            cudnnBackendDestroyDescriptor(plan);
          }
        } else {
          why->plan_failed++;
        }
      }
      if (!keep) cudnnBackendDestroyDescriptor(cfgs[i]);
    }
  }
  return nc;
}

/* The tensors a run binds, in order x, w, [bias], [z], y; their count. */
static int cg_io(const cg_state *s, const void *in, const void *w, const void *bias,
                 const void *z, void *y, int64_t *uids, void **ptrs) {
  int n = 0;
  uids[n] = UID_X;
  ptrs[n++] = (void *)in;
  uids[n] = UID_W;
  ptrs[n++] = (void *)w;
  if (s->scale) {
    uids[n] = UID_S;
    ptrs[n++] = (void *)s->scale;
  }
  if (s->has_bias) {
    uids[n] = UID_B;
    ptrs[n++] = (void *)bias;
  }
  if (s->has_z) {
    uids[n] = UID_Z;
    ptrs[n++] = (void *)z;
  }
  if (s->y_inv) {
    uids[n] = UID_YS;
    ptrs[n++] = (void *)s->y_inv;
  }
  uids[n] = UID_Y;
  ptrs[n++] = y;
  return n;
}

static int64_t round256(int64_t b) { return (b + 255) / 256 * 256; }

static infer_status cg_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                               int64_t *ws_bytes) {
  *state = NULL;
  *ws_bytes = 0;
  bool act = false;
  cudnnPointwiseMode_t mode = CUDNN_POINTWISE_RELU_FWD;
  double param = 0;
  if (!(p->kdt == K_F16 || (p->int8 && p->kdt == K_F32)) || p->has_x_max ||
      (p->int8 && (!p->scale_dev || !p->channels_last || p->y_pitch)) ||
      (p->y_int8 && (!p->int8 || !p->y_inv_dev)))
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "cudnn-graph: float16 (or channels-last int8) convolutions without an "
                      "input clamp only");
  if (!cg_activation(p, &act, &mode, &param))
    return infer_fail(INFER_ERR_UNSUPPORTED, "cudnn-graph: activation %d is not supported",
                      p->act);
  /* cuda.nan_exact: every activation leaves the graph for our epilogue pass */
  if (p->nan_exact) act = false;
  if (p->y_int8 && p->act != CONV_ACT_NONE && !act) /* no pass after an int8 y */
    return infer_fail(INFER_ERR_UNSUPPORTED, "cudnn-graph: an int8 output needs the "
                      "activation inside the graph");
  /* a slice of a wider tensor (y_pitch): only the graph writes it, channels-last */
  if (p->y_pitch && (!p->channels_last || p->y_pitch < p->k || p->y_pitch % 8 ||
                     (p->act != CONV_ACT_NONE && !act)))
    return infer_fail(INFER_ERR_UNSUPPORTED, "cudnn-graph: a strided output needs a "
                      "channels-last graph that ends in its own activation");
  if (!problem_ok(p))
    return infer_fail(INFER_ERR_UNSUPPORTED, "cudnn-graph: inconsistent convolution sizes");
  cg_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  if (pthread_mutex_init(&s->lock, NULL) != 0) {
    free(s);
    return infer_fail(INFER_ERR_INTERNAL, "cudnn-graph: cannot create a mutex");
  }
  s->lock_ok = true;
  s->has_bias = p->has_bias;
  s->has_z = p->has_z;
  s->scale = p->int8 ? p->scale_dev : NULL;
  s->y_inv = p->y_int8 ? p->y_inv_dev : NULL;
  s->kdt = p->kdt;
  s->post_act = p->act != CONV_ACT_NONE && !act ? p->act : 0;
  s->alpha = p->alpha;
  s->beta = p->beta;
  s->channels = p->k;
  s->count = (int64_t)p->n * p->k * p->out_h * p->out_w;
  cudnnHandle_t h = (cudnnHandle_t)x->cudnn;
  cudaStream_t stream = (cudaStream_t)x->stream;
  cudnnBackendDescriptor_t og = NULL;
  cg_cand c[CG_MAX_PLANS];
  int nc = 0, best = -1, n_io;
  char *scratch = NULL;
  int64_t uids[8];
  void *ptrs[8];
  /* the search's scratch tensors (zeros; an int8 problem's scales are its own) and a
   * workspace for the largest plan */
  int64_t xe = p->int8 ? 1 : 2, ye = p->kdt == K_F32 ? 4 : 2;
  int64_t xb = round256((int64_t)p->n * p->c * p->h * p->w * xe);
  int64_t wb = round256((int64_t)p->k * (p->c / p->group) * p->r * p->s * xe);
  int64_t bb = round256((int64_t)p->k * ye);
  int64_t yb = round256((int64_t)p->n * (p->y_pitch ? p->y_pitch : p->k) * p->out_h *
                        p->out_w * (p->y_int8 ? 1 : ye));
  int64_t zb = round256((int64_t)p->n * p->k * p->out_h * p->out_w * ye); /* dense, kdt */
  int64_t data = xb + wb + bb + zb + yb, ws_max = 0;
  infer_status st = cg_graph(s, h, p, act, mode, param, &og);
  if (st != INFER_OK) goto fail;
  cg_refusals why = {0};
  /* An int8 problem allows runtime-compiled engines unless cuda.cudnn_rtc=0: cuDNN 9.19
   * offers the fused int8 graph only as such (H100, seventeenth session: 7-13 configs,
   * all runtime-compiled, for every ResNet-50 convolution), and int8=1 is asked for. */
  nc = cg_search(h, og, config_flag(x->cfg, "cuda.cudnn_rtc", p->int8), p->nan_exact, c, &why);
  if (nc == 0) { /* what heuristics offered and why none was taken: the way to one */
    st = infer_fail(INFER_ERR_UNSUPPORTED,
                    "cudnn-graph: no cuDNN engine takes this convolution (of %d configs "
                    "offered: %d runtime-compiled not tried (cuda.cudnn_rtc=1 tries them); %d of "
                    "reduced precision; %d FFT/Winograd under cuda.nan_exact; %d needing "
                    "int8x32 reordering; %d failed to build; %d over the workspace cap)",
                    why.offered, why.rtc, why.precision, why.nan_exact, why.reorder,
                    why.plan_failed, why.over_ws);
    goto fail;
  }
  for (int i = 0; i < nc; i++)
    if (c[i].ws > ws_max) ws_max = c[i].ws;
  if (cudaMalloc((void **)&scratch, (size_t)(data + round256(ws_max))) != cudaSuccess) {
    cudaGetLastError();
    scratch = NULL;
    st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "cudnn-graph: no device memory for the search");
    goto fail;
  }
  if (cudaMemsetAsync(scratch, 0, (size_t)data, stream) != cudaSuccess) {
    st = infer_fail(INFER_ERR_DEVICE, "cudnn-graph: cudaMemsetAsync failed");
    goto fail;
  }
  n_io = cg_io(s, scratch, scratch + xb, scratch + xb + wb, scratch + xb + wb + bb,
               scratch + xb + wb + bb + zb, uids, ptrs);
  for (int i = 0; i < nc; i++) {
    c[i].ms = be_time(h, x->stream, c[i].plan, n_io, uids, ptrs,
                      ws_max > 0 ? scratch + data : NULL);
    if (c[i].ms >= 0 && (best < 0 || c[i].ms < c[best].ms)) best = i;
  }
  if (cudaStreamSynchronize(stream) != cudaSuccess) {
    st = infer_fail(INFER_ERR_DEVICE, "cudnn-graph: the search failed on the device");
    goto fail;
  }
  cudaFree(scratch);
  scratch = NULL;
  if (best < 0) {
    st = infer_fail(INFER_ERR_UNSUPPORTED, "cudnn-graph: no plan ran");
    goto fail;
  }
  s->cfg = c[best].cfg;
  s->plan = c[best].plan;
  s->ws = c[best].ws;
  c[best].cfg = c[best].plan = NULL;
  for (int i = 0; i < nc; i++) {
    if (c[i].plan) cudnnBackendDestroyDescriptor(c[i].plan);
    if (c[i].cfg) cudnnBackendDestroyDescriptor(c[i].cfg);
  }
  *state = s;
  *ws_bytes = s->ws;
  return INFER_OK;
fail:
  if (scratch) {
    cudaStreamSynchronize(stream);
    cudaFree(scratch);
    cudaGetLastError();
  }
  for (int i = 0; i < nc; i++) {
    if (c[i].plan) cudnnBackendDestroyDescriptor(c[i].plan);
    if (c[i].cfg) cudnnBackendDestroyDescriptor(c[i].cfg);
  }
  cg_release(s);
  return st;
}

static infer_status cg_run(const cuda_exec *x, const void *state, const void *in, const void *w,
                           const void *bias, const void *z, void *y, void *ws) {
  const cg_state *s = state;
  if (!s || !s->plan) return infer_fail(INFER_ERR_INTERNAL, "cudnn-graph: run without a plan");
  /* exactly the tensors the graph was built with */
  if (!in || !w || !y || !bias != !s->has_bias || !z != !s->has_z || (s->ws > 0 && !ws))
    return infer_fail(INFER_ERR_INTERNAL, "cudnn-graph: the tensors differ from the graph's");
  int64_t uids[8];
  void *ptrs[8];
  int n = cg_io(s, in, w, bias, z, y, uids, ptrs);
  for (int i = 0; i < n; i++)
    if ((uintptr_t)ptrs[i] % CG_ALIGN)
      return infer_fail(INFER_ERR_RUNTIME, "cudnn-graph: a tensor is not %d-byte aligned",
                        CG_ALIGN);
  /* The engine's contexts share this plan, and cuDNN's backend has had known limits on
   * executing one plan from several threads at once: one enqueue at a time (host side
   * only; the GPU work of different streams still overlaps). The lock is the only
   * thing run touches in the state. */
  pthread_mutex_t *lock = (pthread_mutex_t *)&s->lock;
  if (pthread_mutex_lock(lock) != 0)
    return infer_fail(INFER_ERR_RUNTIME, "cudnn-graph: cannot take the plan's lock");
  infer_status st = be_execute((cudnnHandle_t)x->cudnn, s->plan, n, uids, ptrs,
                               s->ws > 0 ? ws : NULL);
  pthread_mutex_unlock(lock);
  if (st == INFER_OK && s->post_act) /* elementwise: the layout does not matter */
    CUDA_LAUNCH_TRY(k_conv_epilogue(s->kdt, y, NULL, NULL, s->count, s->channels, 1, s->post_act,
                                    s->alpha, s->beta, (cudaStream_t)x->stream));
  return st;
}

const conv_alt conv_alt_cudnn_graph = {
    .name = "cudnn-graph", .prepare = cg_prepare, .run = cg_run, .release = cg_release,
    .y_pitch = true};
