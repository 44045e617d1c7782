/* pool.c: MaxPool (with optional Indices), AveragePool, GlobalAveragePool,
 * GlobalMaxPool and LRN, for 1-D to 3-D spatial inputs.
 *
 * MaxPool and AveragePool take an internal attribute channels_last (default 0),
 * written by the to-channels-last pass (engine/pass_channels_last.c): X and Y are
 * then N x H x W x C (2-D pooling only; MaxPool without Indices). On the CPU that is a
 * reference path, not a fast one: X is permuted to NCHW in the workspace, pooled, and
 * the result permuted back.
 *
 * The window loops are written once as macros and instantiated per element type:
 * float32 reads directly; float16/bfloat16 convert on load/store; int8/uint8
 * (MaxPool) compare as integers; float64 in double. Windows are clipped to the
 * input once per output position (win_range), so the inner loops have no bounds
 * tests. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/k_nan.h"
#include "pool_params.h"

/* channels_last: internal, see above */
static const char *const maxpool_attr_names[] = {
    "auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides",
    "channels_last", NULL};
static const char *const avgpool_attr_names[] = {
    "auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides",
    "channels_last", NULL};

static infer_status pool_parse_common(const node *n, const char *op, void **params) {
  pool_params *p = calloc(1, sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  infer_status s = win_attrs_parse(n, op, &p->w);
  if (s == INFER_OK && p->w.n_kernel < 1)
    s = infer_fail(INFER_ERR_INVALID_MODEL, "%s: attribute 'kernel_shape' is required", op);
  if (s == INFER_OK) s = attr_get_int(n, "ceil_mode", 0, &p->ceil_mode);
  if (s == INFER_OK) s = attr_get_int(n, "count_include_pad", 0, &p->count_include_pad);
  if (s == INFER_OK) s = attr_get_int(n, "storage_order", 0, &p->storage_order);
  if (s == INFER_OK) s = attr_get_int(n, "channels_last", 0, &p->channels_last);
  if (s == INFER_OK && (p->ceil_mode < 0 || p->ceil_mode > 1))
    s = infer_fail(INFER_ERR_INVALID_MODEL, "%s: ceil_mode = %lld must be 0 or 1", op,
                   (long long)p->ceil_mode);
  if (s == INFER_OK && (p->count_include_pad < 0 || p->count_include_pad > 1))
    s = infer_fail(INFER_ERR_INVALID_MODEL, "%s: count_include_pad = %lld must be 0 or 1", op,
                   (long long)p->count_include_pad);
  if (s == INFER_OK && (p->storage_order < 0 || p->storage_order > 1))
    s = infer_fail(INFER_ERR_INVALID_MODEL, "%s: storage_order = %lld must be 0 or 1", op,
                   (long long)p->storage_order);
  if (s == INFER_OK && (p->channels_last < 0 || p->channels_last > 1))
    s = infer_fail(INFER_ERR_INVALID_MODEL, "%s: channels_last = %lld must be 0 or 1", op,
                   (long long)p->channels_last);
  if (s != INFER_OK) {
    free(p);
    return s;
  }
  *params = p;
  return INFER_OK;
}

static infer_status maxpool_parse(const node *n, void **params) {
  return pool_parse_common(n, "MaxPool", params);
}
static infer_status avgpool_parse(const node *n, void **params) {
  return pool_parse_common(n, "AveragePool", params);
}

static bool shape_known(const tensor *t) {
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0) return false;
  return true;
}

static infer_status pool_geom(const char *op, const pool_params *p, const tensor *x, win_geom *g) {
  char sb[96];
  if (x->rank < 3)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input %s must have rank >= 3 (N, C, ...)", op,
                      dims_format(x->rank, x->dims, sb, sizeof sb));
  int nsp = x->rank - 2;
  if (nsp > WIN_MAX_SPATIAL)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: %d spatial dims (supported: up to %d)", op, nsp,
                      WIN_MAX_SPATIAL);
  if (p->w.n_kernel != nsp)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "%s: kernel_shape has %d entries, input %s has %d spatial dims", op,
                      p->w.n_kernel, dims_format(x->rank, x->dims, sb, sizeof sb), nsp);
  return win_geom_forward(&p->w, nsp, x->dims + 2, p->w.kernel, p->ceil_mode != 0, op, g);
}

static infer_status pool_infer_common(const char *op, const pool_params *p, bool ints_ok,
                                      const tensor *const *in, tensor *const *out, int n_out) {
  const tensor *x = in[0];
  infer_dtype dt = x->dtype;
  if (!dtype_is_float(dt) && !(ints_ok && (dt == INFER_DTYPE_INT8 || dt == INFER_DTYPE_UINT8)))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: input dtype %s", op, infer_dtype_name(dt));
  if (!shape_known(x)) return OP_NEEDS_DATA;
  win_geom g;
  TRY(pool_geom(op, p, x, &g));
  for (int o = 0; o < n_out; o++) {
    tensor *y = out[o];
    if (!y) continue;
    y->dtype = o == 0 ? dt : INFER_DTYPE_INT64;
    y->rank = x->rank;
    y->dims[0] = x->dims[0];
    y->dims[1] = x->dims[1];
    for (int i = 0; i < g.nsp; i++) y->dims[2 + i] = g.out[3 - g.nsp + i];
    if (tensor_nbytes(y) < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: output too large", op);
  }
  return INFER_OK;
}

/* ---- channels_last = 1 ---------------------------------------------------------- */

/* t with its dims permuted (data and the rest unchanged). */
static void permuted_view(const tensor *t, const int *perm, tensor *v) {
  *v = *t;
  for (int i = 0; i < 4; i++) v->dims[i] = t->dims[perm[i]];
}

/* What channels_last = 1 supports: 4-D X (2-D pooling), no Indices output. */
static infer_status cl_check(const char *op, const node *n, const tensor *x) {
  char sb[96];
  if (x->rank != 4)
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "%s: channels_last = 1 supports 2-D pooling only (4-D N x H x W x C "
                      "input), the input is %s",
                      op, dims_format(x->rank, x->dims, sb, sizeof sb));
  if (n->n_outputs > 1 && n->outputs[1] >= 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: channels_last = 1 has no Indices output", op);
  return INFER_OK;
}

/* Shapes of the channels-last form: the NCHW inference on permuted dims. */
static infer_status pool_infer_cl(const char *op, const pool_params *p, bool ints_ok,
                                  const node *n, const tensor *const *in, tensor *const *out) {
  TRY(cl_check(op, n, in[0]));
  tensor xv, yv;
  memset(&yv, 0, sizeof yv);
  permuted_view(in[0], perm_nhwc_to_nchw, &xv);
  const tensor *ins[1] = {&xv};
  tensor *outs[1] = {&yv};
  TRY(pool_infer_common(op, p, ints_ok, ins, outs, 1));
  tensor *y = out[0];
  y->dtype = yv.dtype;
  y->rank = 4;
  for (int i = 0; i < 4; i++) y->dims[i] = yv.dims[perm_nchw_to_nhwc[i]];
  return INFER_OK;
}

static infer_status maxpool_infer(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out) {
  const pool_params *p = params;
  if (p->channels_last) return pool_infer_cl("MaxPool", p, true, n, in, out);
  return pool_infer_common("MaxPool", params, true, in, out, n->n_outputs > 1 ? 2 : 1);
}
static infer_status avgpool_infer(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out) {
  const pool_params *p = params;
  if (p->channels_last) return pool_infer_cl("AveragePool", p, false, n, in, out);
  return pool_infer_common("AveragePool", params, false, in, out, 1);
}

/* Workspace: NCHW copies of X and Y when channels-last, else none. */
static int64_t pool_workspace(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  const pool_params *p = params;
  if (!p->channels_last) return 0;
  int64_t total = 0, es = (int64_t)infer_dtype_size(in[0]->dtype);
  ws_add(&total, dims_count(in[0]->rank, in[0]->dims), es);
  ws_add(&total, dims_count(out[0]->rank, out[0]->dims), es);
  return total;
}

#define F32_LOAD(v) (v)
#define F32_STORE(v) (v)
#define F16_LOAD(v) half_to_float(v)
#define F16_STORE(v) float_to_half(v)
#define BF16_LOAD(v) bf16_to_float(v)
#define BF16_STORE(v) float_to_bf16(v)
#define ID_LOAD(v) (v)
#define ID_STORE(v) (v)
#define I8_STORE(v) ((int8_t)(v))
#define U8_STORE(v) ((uint8_t)(v))

/* Max over each window, NaN when the window holds one (as PyTorch's max_pool and numpy's
 * max; the ONNX reference's pool() drops NaN only because it pads with NaN, which our
 * windows never read). idx (may be NULL): flat input index of the maximum (the first NaN),
 * counting batch and channel, row-major or (col_major) column-major within the
 * spatial dims. The 3-D view puts size-1 dims first, so the column-major formula
 * d + h*D + w*D*H also holds for 1-D and 2-D inputs. */
#define DEFINE_MAXPOOL(NAME, T, ACC, LOAD, STORE, LOWEST)                                    \
  static void NAME(const win_geom *g, int64_t planes, const T *x, T *y, int64_t *idx,        \
                   bool col_major) {                                                         \
    const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];                               \
    const int64_t in_sz = ID * IH * IW;                                                      \
    for (int64_t p = 0; p < planes; p++) {                                                   \
      const T *xp = x + p * in_sz;                                                           \
      for (int64_t od = 0; od < g->out[0]; od++) {                                           \
        int64_t d0 = od * g->s[0] - g->pb[0], dlo, dhi;                                      \
        win_range(d0, g->d[0], ID, g->k[0], &dlo, &dhi);                                     \
        for (int64_t oh = 0; oh < g->out[1]; oh++) {                                         \
          int64_t h0 = oh * g->s[1] - g->pb[1], hlo, hhi;                                    \
          win_range(h0, g->d[1], IH, g->k[1], &hlo, &hhi);                                   \
          for (int64_t ow = 0; ow < g->out[2]; ow++) {                                       \
            int64_t w0 = ow * g->s[2] - g->pb[2], wlo, whi;                                  \
            win_range(w0, g->d[2], IW, g->k[2], &wlo, &whi);                                 \
            ACC best = LOWEST;                                                               \
            int64_t bi = -1;                                                                 \
            for (int64_t kd = dlo; kd < dhi; kd++) {                                         \
              int64_t id = d0 + kd * g->d[0];                                                \
              for (int64_t kh = hlo; kh < hhi; kh++) {                                       \
                int64_t ih = h0 + kh * g->d[1];                                              \
                const T *xr = xp + (id * IH + ih) * IW;                                      \
                for (int64_t kw = wlo; kw < whi; kw++) {                                     \
                  int64_t iw = w0 + kw * g->d[2];                                            \
                  ACC v = LOAD(xr[iw]);                                                      \
                  if (bi < 0 || K_NAN_BEATS_MAX(v, best)) {                                  \
                    best = v;                                                                \
                    bi = col_major ? id + ih * ID + iw * ID * IH : (id * IH + ih) * IW + iw; \
                  }                                                                          \
                }                                                                            \
              }                                                                              \
            }                                                                                \
            *y++ = STORE(best);                                                              \
            if (idx) *idx++ = bi < 0 ? -1 : p * in_sz + bi;                                  \
          }                                                                                  \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }

DEFINE_MAXPOOL(maxpool_f32, float, float, F32_LOAD, F32_STORE, -INFINITY)
DEFINE_MAXPOOL(maxpool_f64, double, double, ID_LOAD, ID_STORE, -INFINITY)
DEFINE_MAXPOOL(maxpool_f16, uint16_t, float, F16_LOAD, F16_STORE, -INFINITY)
DEFINE_MAXPOOL(maxpool_bf16, uint16_t, float, BF16_LOAD, BF16_STORE, -INFINITY)
DEFINE_MAXPOOL(maxpool_i8, int8_t, int, ID_LOAD, I8_STORE, INT8_MIN)
DEFINE_MAXPOOL(maxpool_u8, uint8_t, int, ID_LOAD, U8_STORE, 0)

/* Mean over each window. The divisor counts the taps inside the input
 * (count_include_pad 0) or inside the padded input [-pad_begin, in + pad_end)
 * (count_include_pad 1); taps past the end padding, which ceil_mode can add, are
 * never counted. */
#define DEFINE_AVGPOOL(NAME, T, ACC, LOAD, STORE)                                               \
  static void NAME(const win_geom *g, int64_t planes, const T *x, T *y, bool include_pad) {     \
    const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];                                  \
    const int64_t in_sz = ID * IH * IW;                                                         \
    for (int64_t p = 0; p < planes; p++) {                                                      \
      const T *xp = x + p * in_sz;                                                              \
      for (int64_t od = 0; od < g->out[0]; od++) {                                              \
        int64_t d0 = od * g->s[0] - g->pb[0], dlo, dhi, dplo, dphi;                             \
        win_range(d0, g->d[0], ID, g->k[0], &dlo, &dhi);                                        \
        win_range(d0 + g->pb[0], g->d[0], ID + g->pb[0] + g->pe[0], g->k[0], &dplo, &dphi);     \
        for (int64_t oh = 0; oh < g->out[1]; oh++) {                                            \
          int64_t h0 = oh * g->s[1] - g->pb[1], hlo, hhi, hplo, hphi;                           \
          win_range(h0, g->d[1], IH, g->k[1], &hlo, &hhi);                                      \
          win_range(h0 + g->pb[1], g->d[1], IH + g->pb[1] + g->pe[1], g->k[1], &hplo, &hphi);   \
          for (int64_t ow = 0; ow < g->out[2]; ow++) {                                          \
            int64_t w0 = ow * g->s[2] - g->pb[2], wlo, whi, wplo, wphi;                         \
            win_range(w0, g->d[2], IW, g->k[2], &wlo, &whi);                                    \
            win_range(w0 + g->pb[2], g->d[2], IW + g->pb[2] + g->pe[2], g->k[2], &wplo, &wphi); \
            ACC sum = 0;                                                                        \
            for (int64_t kd = dlo; kd < dhi; kd++) {                                            \
              int64_t id = d0 + kd * g->d[0];                                                   \
              for (int64_t kh = hlo; kh < hhi; kh++) {                                          \
                const T *xr = xp + (id * IH + h0 + kh * g->d[1]) * IW + w0;                     \
                for (int64_t kw = wlo; kw < whi; kw++) sum += LOAD(xr[kw * g->d[2]]);           \
              }                                                                                 \
            }                                                                                   \
            int64_t cnt = include_pad ? (dphi - dplo) * (hphi - hplo) * (wphi - wplo)           \
                                      : (dhi - dlo) * (hhi - hlo) * (whi - wlo);                \
            *y++ = STORE(cnt > 0 ? sum / (ACC)cnt : (ACC)0);                                    \
          }                                                                                     \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
  }

DEFINE_AVGPOOL(avgpool_f32, float, float, F32_LOAD, F32_STORE)
DEFINE_AVGPOOL(avgpool_f64, double, double, ID_LOAD, ID_STORE)
DEFINE_AVGPOOL(avgpool_f16, uint16_t, float, F16_LOAD, F16_STORE)
DEFINE_AVGPOOL(avgpool_bf16, uint16_t, float, BF16_LOAD, BF16_STORE)

static infer_status maxpool_run_nchw(const node *n, const void *params, const tensor *const *in,
                                     tensor *const *out, void *ws) {
  const pool_params *p = params;
  const tensor *x = in[0];
  win_geom g;
  TRY(pool_geom("MaxPool", p, x, &g));
  int64_t planes = x->dims[0] * x->dims[1];
  int64_t *idx = (n->n_outputs > 1 && out[1]) ? out[1]->data : NULL;
  bool cm = p->storage_order == 1;
  void *y = out[0]->data;
  switch (x->dtype) {
    case INFER_DTYPE_FLOAT32:
      maxpool_f32(&g, planes, x->data, y, idx, cm);
      break;
    case INFER_DTYPE_FLOAT64:
      maxpool_f64(&g, planes, x->data, y, idx, cm);
      break;
    case INFER_DTYPE_FLOAT16:
      maxpool_f16(&g, planes, x->data, y, idx, cm);
      break;
    case INFER_DTYPE_BFLOAT16:
      maxpool_bf16(&g, planes, x->data, y, idx, cm);
      break;
    case INFER_DTYPE_INT8:
      maxpool_i8(&g, planes, x->data, y, idx, cm);
      break;
    case INFER_DTYPE_UINT8:
      maxpool_u8(&g, planes, x->data, y, idx, cm);
      break;
    default:
      return infer_fail(INFER_ERR_UNSUPPORTED, "MaxPool: input dtype %s",
                        infer_dtype_name(x->dtype));
  }
  return INFER_OK;
}

static infer_status avgpool_run_nchw(const node *n, const void *params, const tensor *const *in,
                                     tensor *const *out, void *ws) {
  const pool_params *p = params;
  const tensor *x = in[0];
  win_geom g;
  TRY(pool_geom("AveragePool", p, x, &g));
  int64_t planes = x->dims[0] * x->dims[1];
  bool inc = p->count_include_pad != 0;
  void *y = out[0]->data;
  switch (x->dtype) {
    case INFER_DTYPE_FLOAT32:
      avgpool_f32(&g, planes, x->data, y, inc);
      break;
    case INFER_DTYPE_FLOAT64:
      avgpool_f64(&g, planes, x->data, y, inc);
      break;
    case INFER_DTYPE_FLOAT16:
      avgpool_f16(&g, planes, x->data, y, inc);
      break;
    case INFER_DTYPE_BFLOAT16:
      avgpool_bf16(&g, planes, x->data, y, inc);
      break;
    default:
      return infer_fail(INFER_ERR_UNSUPPORTED, "AveragePool: input dtype %s",
                        infer_dtype_name(x->dtype));
  }
  return INFER_OK;
}

typedef infer_status (*pool_run_fn)(const node *, const void *, const tensor *const *,
                                    tensor *const *, void *);

/* channels_last = 1: X permuted to NCHW in the workspace, pooled, Y permuted back. */
static infer_status pool_run_cl(const char *op, pool_run_fn run, const node *n,
                                const void *params, const tensor *const *in, tensor *const *out,
                                void *ws) {
  TRY(cl_check(op, n, in[0]));
  if (out[0]->rank != 4)
    return infer_fail(INFER_ERR_INTERNAL, "%s: channels_last = 1 needs a 4-D output", op);
  tensor xv, yv;
  permuted_view(in[0], perm_nhwc_to_nchw, &xv);
  permuted_view(out[0], perm_nhwc_to_nchw, &yv);
  int64_t es = (int64_t)infer_dtype_size(xv.dtype);
  char *cur = ws;
  xv.data = ws_take(&cur, dims_count(4, xv.dims), es);
  yv.data = ws_take(&cur, dims_count(4, yv.dims), es);
  permute4(in[0]->data, in[0]->dims, perm_nhwc_to_nchw, xv.data, (size_t)es);
  const tensor *ins[1] = {&xv};
  tensor *outs[2] = {&yv, NULL};
  TRY(run(n, params, ins, outs, cur));
  permute4(yv.data, yv.dims, perm_nchw_to_nhwc, out[0]->data, (size_t)es);
  return INFER_OK;
}

static infer_status maxpool_run(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out, void *ws) {
  const pool_params *p = params;
  if (p->channels_last) return pool_run_cl("MaxPool", maxpool_run_nchw, n, params, in, out, ws);
  return maxpool_run_nchw(n, params, in, out, ws);
}

static infer_status avgpool_run(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out, void *ws) {
  const pool_params *p = params;
  if (p->channels_last)
    return pool_run_cl("AveragePool", avgpool_run_nchw, n, params, in, out, ws);
  return avgpool_run_nchw(n, params, in, out, ws);
}

/* ---- global pooling ------------------------------------------------------------- */

static infer_status global_infer(const char *op, const tensor *const *in, tensor *const *out) {
  const tensor *x = in[0];
  char sb[96];
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: input dtype %s", op, infer_dtype_name(x->dtype));
  if (x->rank < 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input %s must have rank >= 2 (N, C, ...)", op,
                      dims_format(x->rank, x->dims, sb, sizeof sb));
  tensor *y = out[0];
  y->dtype = x->dtype;
  y->rank = x->rank;
  y->dims[0] = x->dims[0];
  y->dims[1] = x->dims[1];
  for (int i = 2; i < x->rank; i++) y->dims[i] = 1;
  return INFER_OK;
}

static infer_status gap_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  return global_infer("GlobalAveragePool", in, out);
}
static infer_status gmp_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  return global_infer("GlobalMaxPool", in, out);
}

static infer_status global_run(const tensor *x, tensor *y, bool is_max) {
  int64_t planes = x->dims[0] * x->dims[1];
  int64_t sz = dims_count(x->rank - 2, x->dims + 2);
  if (x->dtype == INFER_DTYPE_FLOAT32) {
    const float *xp = x->data;
    float *yp = y->data;
    for (int64_t p = 0; p < planes; p++, xp += sz) {
      if (is_max) {
        float m = sz > 0 ? xp[0] : -INFINITY;
        for (int64_t i = 1; i < sz; i++) m = K_NAN_MAX(m, xp[i]); /* np.max: NaN stays */
        yp[p] = m;
      } else {
        double s = 0; /* double: a 224x224 plane summed in float loses digits */
        for (int64_t i = 0; i < sz; i++) s += xp[i];
        yp[p] = sz > 0 ? (float)(s / (double)sz) : 0.0f;
      }
    }
    return INFER_OK;
  }
  for (int64_t p = 0; p < planes; p++) {
    double acc = is_max ? -INFINITY : 0;
    for (int64_t i = 0; i < sz; i++) {
      double v = tensor_get_f64(x, p * sz + i);
      if (is_max)
        acc = i == 0 ? v : K_NAN_MAX(acc, v);
      else
        acc += v;
    }
    if (!is_max) acc = sz > 0 ? acc / (double)sz : 0;
    tensor_set_f64(y, p, acc);
  }
  return INFER_OK;
}

static infer_status gap_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  return global_run(in[0], out[0], false);
}
static infer_status gmp_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  return global_run(in[0], out[0], true);
}

/* ---- LRN ---------------------------------------------------------------------------- */

static const char *const lrn_attr_names[] = {"alpha", "beta", "bias", "size", NULL};

static infer_status lrn_parse(const node *n, void **params) {
  lrn_params *p = calloc(1, sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "LRN: out of memory");
  infer_status s = attr_get_float(n, "alpha", 1e-4f, &p->alpha);
  if (s == INFER_OK) s = attr_get_float(n, "beta", 0.75f, &p->beta);
  if (s == INFER_OK) s = attr_get_float(n, "bias", 1.0f, &p->bias);
  if (s == INFER_OK) s = attr_get_int(n, "size", -1, &p->size);
  if (s == INFER_OK && !node_attr(n, "size"))
    s = infer_fail(INFER_ERR_INVALID_MODEL, "LRN: attribute 'size' is required");
  if (s == INFER_OK && p->size < 1)
    s = infer_fail(INFER_ERR_INVALID_MODEL, "LRN: attribute 'size' = %lld must be >= 1",
                   (long long)p->size);
  if (s != INFER_OK) {
    free(p);
    return s;
  }
  *params = p;
  return INFER_OK;
}

static infer_status lrn_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  const tensor *x = in[0];
  char sb[96];
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "LRN: input dtype %s", infer_dtype_name(x->dtype));
  if (x->rank < 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "LRN: input %s must have rank >= 2 (N, C, ...)",
                      dims_format(x->rank, x->dims, sb, sizeof sb));
  tensor *y = out[0];
  y->dtype = x->dtype;
  y->rank = x->rank;
  memcpy(y->dims, x->dims, sizeof y->dims);
  return INFER_OK;
}

/* y = x / (bias + alpha/size * sum of x^2 over channels
 *          [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta */
static infer_status lrn_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  const lrn_params *p = params;
  const tensor *x = in[0];
  tensor *y = out[0];
  int64_t nb = x->dims[0], c = x->dims[1], sz = dims_count(x->rank - 2, x->dims + 2);
  int64_t before = (p->size - 1) / 2, after = p->size - 1 - before;
  double scale = (double)p->alpha / (double)p->size;
  bool f32 = x->dtype == INFER_DTYPE_FLOAT32;
  const float *xf = x->data;
  float *yf = y->data;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t ch = 0; ch < c; ch++) {
      int64_t lo = ch - before < 0 ? 0 : ch - before, hi = ch + after >= c ? c - 1 : ch + after;
      int64_t base = (b * c + ch) * sz;
      for (int64_t i = 0; i < sz; i++) {
        double sq = 0;
        for (int64_t k = lo; k <= hi; k++) {
          int64_t j = (b * c + k) * sz + i;
          double v = f32 ? xf[j] : tensor_get_f64(x, j);
          sq += v * v;
        }
        double v = f32 ? xf[base + i] : tensor_get_f64(x, base + i);
        double r = v / pow((double)p->bias + scale * sq, (double)p->beta);
        if (f32)
          yf[base + i] = (float)r;
        else
          tensor_set_f64(y, base + i, r);
      }
    }
  return INFER_OK;
}

const op_desc op_maxpool = {.name = "MaxPool",
                            .domain = "",
                            .since = 1,
                            .until = OP_OPSET_MAX,
                            .min_inputs = 1,
                            .max_inputs = 1,
                            .min_outputs = 1,
                            .max_outputs = 2,
                            .attrs = maxpool_attr_names,
                            .parse = maxpool_parse,
                            .infer = maxpool_infer,
                            .run = maxpool_run,
                            .workspace = pool_workspace};

const op_desc op_averagepool = {.name = "AveragePool",
                                .domain = "",
                                .since = 1,
                                .until = OP_OPSET_MAX,
                                .min_inputs = 1,
                                .max_inputs = 1,
                                .min_outputs = 1,
                                .max_outputs = 1,
                                .attrs = avgpool_attr_names,
                                .parse = avgpool_parse,
                                .infer = avgpool_infer,
                                .run = avgpool_run,
                                .workspace = pool_workspace};

const op_desc op_global_average_pool = {.name = "GlobalAveragePool",
                                        .domain = "",
                                        .since = 1,
                                        .until = OP_OPSET_MAX,
                                        .min_inputs = 1,
                                        .max_inputs = 1,
                                        .min_outputs = 1,
                                        .max_outputs = 1,
                                        .infer = gap_infer,
                                        .run = gap_run};

const op_desc op_global_max_pool = {.name = "GlobalMaxPool",
                                    .domain = "",
                                    .since = 1,
                                    .until = OP_OPSET_MAX,
                                    .min_inputs = 1,
                                    .max_inputs = 1,
                                    .min_outputs = 1,
                                    .max_outputs = 1,
                                    .infer = gmp_infer,
                                    .run = gmp_run};

const op_desc op_lrn = {.name = "LRN",
                        .domain = "",
                        .since = 1,
                        .until = OP_OPSET_MAX,
                        .min_inputs = 1,
                        .max_inputs = 1,
                        .min_outputs = 1,
                        .max_outputs = 1,
                        .attrs = lrn_attr_names,
                        .parse = lrn_parse,
                        .infer = lrn_infer,
                        .run = lrn_run};

const op_desc *const ops_pool[] = {&op_maxpool,         &op_averagepool, &op_global_average_pool,
                                   &op_global_max_pool, &op_lrn,         NULL};
