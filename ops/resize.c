/* resize.c: Resize (opsets 10, 11, 13, 18, 19).
 *
 * The output size comes from `scales` (floor(in * scale)) or `sizes` (then scale =
 * out / in, or one common scale under keep_aspect_ratio_policy), for all axes or the
 * `axes` listed (18+). Each output coordinate maps back to an input coordinate by
 * coordinate_transformation_mode, then:
 *   nearest: one input element chosen by nearest_mode (a byte copy, any dtype);
 *   linear / cubic: a separable filter (optionally antialiased when downscaling,
 *     optionally excluding taps outside the input), applied one axis at a time,
 *     last axis first, in double precision in the workspace.
 * tf_crop_and_resize maps outside the input to extrapolation_value.
 * The formulas follow the ONNX reference implementation (onnx/reference/ops/
 * op_resize.py), including its use of in*scale as the "resized length".
 * Opset 10 behaves as ONNX Runtime does for it: asymmetric coordinates, and nearest
 * rounds down when upsampling and up when downsampling. */
#include <stdlib.h>

#include "pad_resize.h"
#include "reduce_util.h"
#include "resize_plan.h"

static const char *const resize_attrs[] = {"mode",
                                           "coordinate_transformation_mode",
                                           "cubic_coeff_a",
                                           "exclude_outside",
                                           "extrapolation_value",
                                           "nearest_mode",
                                           "antialias",
                                           "axes",
                                           "keep_aspect_ratio_policy",
                                           NULL};

static infer_status pick(const char *attr_name, const char *v, const char *const *names,
                         int count, int *out) {
  for (int i = 0; i < count; i++)
    if (names[i] && strcmp(v, names[i]) == 0) {
      *out = i;
      return INFER_OK;
    }
  return infer_fail(INFER_ERR_INVALID_MODEL, "Resize: %s '%s' is not valid", attr_name, v);
}

static infer_status resize_parse(const node *n, void **params) {
  resize_params t;
  memset(&t, 0, sizeof t);
  int64_t opset = n->opset;
  /* attributes that only exist from a later opset */
  static const struct {
    const char *name;
    int since;
  } late[] = {{"coordinate_transformation_mode", 11}, {"cubic_coeff_a", 11},
              {"exclude_outside", 11},                {"extrapolation_value", 11},
              {"nearest_mode", 11},                   {"antialias", 18},
              {"axes", 18},                           {"keep_aspect_ratio_policy", 18}};
  for (size_t i = 0; i < sizeof late / sizeof late[0]; i++)
    if (opset < late[i].since && node_attr(n, late[i].name))
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "Resize: attribute '%s' does not exist at opset %lld", late[i].name,
                        (long long)opset);
  const char *s;
  int v = 0;
  static const char *const modes[] = {"nearest", "linear", "cubic"};
  TRY(attr_get_string(n, "mode", "nearest", &s));
  TRY(pick("mode", s, modes, opset >= 11 ? 3 : 2, &v));
  t.mode = (enum resize_mode)v;

  static const char *const coords[] = {"half_pixel",        "half_pixel_symmetric",
                                       "pytorch_half_pixel", "align_corners",
                                       "asymmetric",        "tf_half_pixel_for_nn",
                                       "tf_crop_and_resize"};
  TRY(attr_get_string(n, "coordinate_transformation_mode", "half_pixel", &s));
  TRY(pick("coordinate_transformation_mode", s, coords, 7, &v));
  if (v == CT_HALF_PIXEL_SYMMETRIC && opset < 19)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "Resize: half_pixel_symmetric needs opset 19 (model has %lld)",
                      (long long)opset);
  t.coord = opset >= 11 ? (enum resize_coord)v : CT_ASYMMETRIC;

  static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                         "ceil"};
  TRY(attr_get_string(n, "nearest_mode", "round_prefer_floor", &s));
  TRY(pick("nearest_mode", s, nearests, 4, &v));
  t.nearest = opset >= 11 ? (enum resize_nearest)v : NM_SIMPLE;

  static const char *const aspects[] = {"stretch", "not_larger", "not_smaller"};
  TRY(attr_get_string(n, "keep_aspect_ratio_policy", "stretch", &s));
  TRY(pick("keep_aspect_ratio_policy", s, aspects, 3, &v));
  t.aspect = (enum resize_aspect)v;

  float f;
  int64_t i;
  TRY(attr_get_float(n, "cubic_coeff_a", -0.75f, &f));
  t.cubic_a = f;
  TRY(attr_get_float(n, "extrapolation_value", 0.0f, &f));
  t.extrapolation = f;
  TRY(attr_get_int(n, "exclude_outside", 0, &i));
  t.exclude_outside = i != 0;
  TRY(attr_get_int(n, "antialias", 0, &i));
  t.antialias = i != 0 && t.mode != RS_NEAREST; /* nearest has no filter to stretch */

  const int64_t *axes;
  TRY(attr_get_ints(n, "axes", &axes, &t.n_axes));
  if (t.n_axes > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Resize: %d axes, more than any rank",
                      t.n_axes);
  for (int k = 0; k < t.n_axes; k++) t.axes[k] = axes[k];

  resize_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Resize: out of memory");
  *p = t;
  *params = p;
  return INFER_OK;
}

/* ---- the plan: output size, scale and ROI per axis ------------------------------ */

static const tensor *opt_input(const node *n, const tensor *const *in, int i) {
  if (i >= n->n_inputs || !in[i]) return NULL;
  if (dims_count(in[i]->rank, in[i]->dims) == 0) return NULL; /* empty = not given */
  return in[i];
}

infer_status resize_plan_make(const node *n, const resize_params *p, const tensor *x,
                              const tensor *const *in, resize_plan *pl) {
  int r = x->rank;
  pl->rank = r;
  const tensor *roi = NULL, *scales, *sizes = NULL;
  if (n->opset < 11) {
    if (n->n_inputs != 2 || !in[1])
      return infer_fail(INFER_ERR_INVALID_MODEL, "Resize: opset 10 takes inputs X and scales");
    scales = opt_input(n, in, 1);
  } else {
    roi = opt_input(n, in, 1);
    scales = opt_input(n, in, 2);
    sizes = opt_input(n, in, 3);
  }
  if (!scales == !sizes)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "Resize: exactly one of 'scales' and 'sizes' must be given (non-empty)");
  /* axes */
  int axes[INFER_MAX_RANK], na = r;
  bool listed[INFER_MAX_RANK] = {false};
  if (p->n_axes >= 0) {
    na = p->n_axes;
    for (int i = 0; i < na; i++) {
      TRY(axis_normalize(p->axes[i], r, "Resize axes entry", &axes[i]));
      if (listed[axes[i]])
        return infer_fail(INFER_ERR_INVALID_MODEL, "Resize: axis %lld is repeated",
                          (long long)p->axes[i]);
      listed[axes[i]] = true;
    }
  } else {
    for (int i = 0; i < r; i++) axes[i] = i, listed[i] = true;
  }
  const tensor *given = scales ? scales : sizes;
  if (!given->data) return OP_NEEDS_DATA;
  int64_t count = dims_count(given->rank, given->dims);
  if (given->rank != 1 || count != na)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Resize: %s has %lld entries for %d axes",
                      scales ? "scales" : "sizes", (long long)count, na);
  for (int i = 0; i < r; i++) {
    pl->in[i] = pl->out[i] = x->dims[i];
    pl->scale[i] = 1.0;
    pl->roi_start[i] = 0.0;
    pl->roi_end[i] = 1.0;
  }
  if (scales) {
    if (!dtype_is_float(scales->dtype))
      return infer_fail(INFER_ERR_INVALID_MODEL, "Resize: scales must be float, not %s",
                        infer_dtype_name(scales->dtype));
    for (int i = 0; i < na; i++) {
      double s = tensor_get_f64(scales, i);
      int a = axes[i];
      if (!(s > 0.0) || !isfinite(s))
        return infer_fail(INFER_ERR_INVALID_MODEL, "Resize: scale %g for axis %d is not positive",
                          s, a);
      double o = floor(s * (double)pl->in[a]);
      if (!(o < 9.0e18))
        return infer_fail(INFER_ERR_INVALID_MODEL, "Resize: scale %g makes axis %d too large", s,
                          a);
      pl->scale[a] = s;
      pl->out[a] = (int64_t)o;
    }
  } else {
    if (sizes->dtype != INFER_DTYPE_INT64)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Resize: sizes must be int64, not %s",
                        infer_dtype_name(sizes->dtype));
    for (int i = 0; i < na; i++) {
      int64_t o = tensor_get_i64(sizes, i);
      int a = axes[i];
      if (o < 0)
        return infer_fail(INFER_ERR_INVALID_MODEL, "Resize: size %lld for axis %d is negative",
                          (long long)o, a);
      if (pl->in[a] == 0 && o != 0)
        return infer_fail(INFER_ERR_UNSUPPORTED, "Resize: cannot resize the empty axis %d", a);
      pl->out[a] = o;
      pl->scale[a] = pl->in[a] ? (double)o / (double)pl->in[a] : 1.0;
    }
    if (p->aspect != KAR_STRETCH) {
      double common = p->aspect == KAR_NOT_LARGER ? INFINITY : 0.0;
      for (int i = 0; i < na; i++) {
        double s = pl->scale[axes[i]];
        common = p->aspect == KAR_NOT_LARGER ? fmin(common, s) : fmax(common, s);
      }
      for (int i = 0; i < na; i++) {
        int a = axes[i];
        double o = common * (double)pl->in[a] + 0.5;
        if (!(o < 9.0e18))
          return infer_fail(INFER_ERR_INVALID_MODEL, "Resize: axis %d becomes too large", a);
        pl->scale[a] = common;
        pl->out[a] = (int64_t)o; /* round half up, as the reference does */
      }
    }
  }
  if (p->coord == CT_TF_CROP_AND_RESIZE) {
    if (!roi)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Resize: tf_crop_and_resize needs 'roi'");
    if (!roi->data) return OP_NEEDS_DATA;
    if (!dtype_is_float(roi->dtype) || dims_count(roi->rank, roi->dims) != 2 * na)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "Resize: roi must hold %d floats (start and end per axis)", 2 * na);
    for (int i = 0; i < na; i++) {
      pl->roi_start[axes[i]] = tensor_get_f64(roi, i);
      pl->roi_end[axes[i]] = tensor_get_f64(roi, na + i);
    }
  }
  for (int i = 0; i < r; i++) {
    /* with scale 1 every mapping but the crop and tf_half_pixel_for_nn is the identity */
    pl->active[i] = listed[i] && (pl->out[i] != pl->in[i] || pl->scale[i] != 1.0 ||
                                  p->coord == CT_TF_CROP_AND_RESIZE ||
                                  p->coord == CT_TF_HALF_PIXEL_FOR_NN);
    if (pl->active[i] && pl->in[i] == 0 && pl->out[i] != 0)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Resize: cannot resize the empty axis %d", i);
  }
  return INFER_OK;
}

static infer_status resize_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  const resize_params *p = params;
  const tensor *x = in[0];
  TRY(nr_require(x, "Resize", "X"));
  /* nearest copies bytes (any dtype); the filters compute on numbers */
  if (infer_dtype_size(x->dtype) == 0 || (x->dtype == INFER_DTYPE_BOOL && p->mode != RS_NEAREST))
    return infer_fail(INFER_ERR_UNSUPPORTED, "Resize: dtype %s is not supported in this mode",
                      infer_dtype_name(x->dtype));
  TRY(nr_check_count(x, "Resize"));
  resize_plan pl;
  TRY(resize_plan_make(n, p, x, in, &pl));
  out[0]->dtype = x->dtype;
  out[0]->rank = x->rank;
  for (int i = 0; i < x->rank; i++) out[0]->dims[i] = pl.out[i];
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Resize: output size overflows");
  return INFER_OK;
}

/* ---- coordinate mapping and filter taps ----------------------------------------- */

double resize_coord_of(const resize_params *p, const resize_plan *pl, int a, int64_t x,
                       bool *outside) {
  double s = pl->scale[a], in = (double)pl->in[a], ow = s * in, xd = (double)x;
  *outside = false;
  switch (p->coord) {
    case CT_HALF_PIXEL: return (xd + 0.5) / s - 0.5;
    case CT_HALF_PIXEL_SYMMETRIC: {
      double adjustment = (double)pl->out[a] / ow, center = in / 2;
      double offset = center * (1 - adjustment);
      return offset + (xd + 0.5) / s - 0.5;
    }
    case CT_PYTORCH_HALF_PIXEL: return ow == 1 ? -0.5 : (xd + 0.5) / s - 0.5;
    case CT_ALIGN_CORNERS: return ow == 1 ? 0.0 : xd * (in - 1) / (ow - 1);
    case CT_ASYMMETRIC: return xd / s;
    case CT_TF_HALF_PIXEL_FOR_NN: return (xd + 0.5) / s;
    case CT_TF_CROP_AND_RESIZE: {
      double r0 = pl->roi_start[a], r1 = pl->roi_end[a], v;
      if (ow == 1)
        v = (r1 - r0) * (in - 1) / 2;
      else
        v = xd * (r1 - r0) * (in - 1) / (ow - 1);
      v += r0 * (in - 1);
      *outside = !(v >= 0 && v <= in - 1);
      return v;
    }
  }
  return 0.0;
}

int64_t resize_nearest_index(const resize_params *p, const resize_plan *pl, int a, int64_t x) {
  bool outside;
  double xo = resize_coord_of(p, pl, a, x, &outside);
  if (outside) return -1;
  int64_t in = pl->in[a];
  xo = fmax(-2.0, fmin(xo, (double)in + 1.0)); /* keeps the conversion defined */
  double fl = floor(xo), ratio = xo - fl;
  bool up = false;
  if (ratio != 0.0) {
    switch (p->nearest) {
      case NM_ROUND_PREFER_FLOOR: up = ratio > 0.5; break;
      case NM_ROUND_PREFER_CEIL: up = ratio >= 0.5; break;
      case NM_FLOOR: up = false; break;
      case NM_CEIL: up = true; break;
      case NM_SIMPLE: up = pl->scale[a] < 1.0; break;
    }
  }
  int64_t i = (int64_t)fl + (up ? 1 : 0);
  return i < 0 ? 0 : (i >= in ? in - 1 : i);
}

static double cubic_kernel(double x, double A) {
  x = fabs(x);
  double x2 = x * x, x3 = x * x2;
  if (x <= 1) return (A + 2) * x3 - (A + 3) * x2 + 1;
  if (x < 2) return A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
  return 0.0;
}

bool resize_taps(const resize_params *p, const resize_plan *pl, int a, int64_t x, int64_t *idx,
                 double *w, int *n, bool *outside) {
  double xo = resize_coord_of(p, pl, a, x, outside);
  *n = 0;
  if (*outside) return true;
  int64_t in = pl->in[a];
  /* far outside, taps only meet edge copies; the clamp keeps conversions defined */
  xo = fmax(-4.0, fmin(xo, (double)in + 3.0));
  double fl = floor(xo);
  double ratio = xo == fl ? 1.0 : xo - fl; /* in (0, 1]: integers use the left pixel */
  int count;
  double s = fmin(pl->scale[a], 1.0);
  if (p->mode == RS_LINEAR && !p->antialias) {
    count = 2;
    w[0] = 1 - ratio;
    w[1] = ratio;
  } else if (p->mode == RS_CUBIC && !p->antialias) {
    double A = p->cubic_a, r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
    count = 4;
    w[0] = ((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A;
    w[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
    w[2] = ((A + 2) * q - (A + 3)) * q * q + 1;
    w[3] = ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A;
  } else {
    /* antialias: the kernel stretched by 1/s, taps at i - ratio for i in
     * [start, 2 - start) */
    double reach = p->mode == RS_LINEAR ? 1.0 : 2.0;
    double st = floor(-reach / s) + 1;
    if (2 - 2 * st > RESIZE_MAX_TAPS) return false;
    int start = (int)st;
    count = 2 - 2 * start;
    double sum = 0.0;
    for (int k = 0; k < count; k++) {
      double arg = s * ((double)(start + k) - ratio);
      w[k] = p->mode == RS_LINEAR ? fmin(fmax(1 - fabs(arg), 0.0), 1.0)
                                  : cubic_kernel(arg, p->cubic_a);
      sum += w[k];
    }
    for (int k = 0; k < count; k++) w[k] /= sum;
  }
  /* Window of `count` taps around xo in the input padded by count/2 edge copies on
   * each side (as the reference picks neighbours), base = the pixel left of xo. */
  int64_t half = count / 2, base = (int64_t)(xo - ratio);
  int64_t sp = base + 1, limit = in; /* padded start, at most in + 2*half - count */
  if (sp < 0) sp = 0;
  if (sp > limit) sp = limit;
  double kept = 0.0;
  for (int k = 0; k < count; k++) {
    int64_t di = sp + k - half;
    bool out_of_input = di < 0 || di >= in;
    if (p->exclude_outside && out_of_input) w[k] = 0.0;
    kept += w[k];
    idx[k] = di < 0 ? 0 : (di >= in ? in - 1 : di);
  }
  if (p->exclude_outside)
    for (int k = 0; k < count; k++) w[k] /= kept;
  *n = count;
  return true;
}

/* ---- kernels ---------------------------------------------------------------------- */

static int64_t resize_workspace(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  const resize_params *p = params;
  if (p->mode == RS_NEAREST) return 0;
  /* every intermediate shape mixes input and output dims, so the elementwise
   * maximum bounds them all (and needs no scales data) */
  int64_t c = 1;
  for (int i = 0; i < in[0]->rank; i++) {
    int64_t d = in[0]->dims[i] > out[0]->dims[i] ? in[0]->dims[i] : out[0]->dims[i];
    if (!size_mul(c, d, &c)) return INT64_MAX;
  }
  int64_t bytes;
  if (!size_mul(c, 2 * (int64_t)sizeof(double), &bytes)) return INT64_MAX;
  return bytes;
}

static infer_status resize_run_nearest(const resize_params *p, const resize_plan *pl,
                                       const tensor *x, tensor *y) {
  size_t es = infer_dtype_size(x->dtype);
  int r = pl->rank;
  unsigned char ext[16] = {0};
  tensor et = {.dtype = x->dtype, .rank = 0, .data = ext};
  tensor_set_f64(&et, 0, p->extrapolation);
  int64_t total = dims_count(r, pl->out);
  if (total == 0) return INFER_OK;
  if (r == 0) {
    memcpy(y->data, x->data, es);
    return INFER_OK;
  }
  int64_t xs[INFER_MAX_RANK];
  dims_strides(r, pl->in, xs);
  int last = r - 1;
  int64_t row_len = pl->out[last], rows = total / row_len;
  int64_t idx[INFER_MAX_RANK] = {0};
  const unsigned char *src = x->data;
  unsigned char *dst = y->data;
  for (int64_t row = 0; row < rows; row++) {
    unsigned char *orow = dst + (size_t)(row * row_len) * es;
    int64_t off = 0;
    bool outside = false;
    for (int d = 0; d < last && !outside; d++) {
      int64_t s = pl->active[d] ? resize_nearest_index(p, pl, d, idx[d]) : idx[d];
      outside = s < 0;
      off += s * xs[d];
    }
    for (int64_t i = 0; i < row_len; i++) {
      int64_t s = outside ? -1 : (pl->active[last] ? resize_nearest_index(p, pl, last, i) : i);
      memcpy(orow + (size_t)i * es, s < 0 ? ext : src + (size_t)(off + s) * es, es);
    }
    for (int d = last - 1; d >= 0; d--) {
      if (++idx[d] < pl->out[d]) break;
      idx[d] = 0;
    }
  }
  return INFER_OK;
}

/* One separable pass along axis a: src of shape cur -> dst with cur[a] = out[a]. */
static infer_status resize_pass(const resize_params *p, const resize_plan *pl, int a,
                                const int64_t *cur, const double *src, double *dst) {
  int64_t idx[RESIZE_MAX_TAPS];
  double w[RESIZE_MAX_TAPS];
  int64_t outer = nr_span(cur, 0, a), inner = nr_span(cur, a + 1, pl->rank);
  int64_t in_a = cur[a], out_a = pl->out[a];
  for (int64_t o = 0; o < out_a; o++) {
    int count;
    bool outside;
    if (!resize_taps(p, pl, a, o, idx, w, &count, &outside))
      return infer_fail(INFER_ERR_UNSUPPORTED,
                        "Resize: antialiased downscale on axis %d needs more than %d taps", a,
                        RESIZE_MAX_TAPS);
    for (int64_t ob = 0; ob < outer; ob++) {
      double *d = dst + (ob * out_a + o) * inner;
      if (outside) {
        for (int64_t j = 0; j < inner; j++) d[j] = p->extrapolation;
        continue;
      }
      for (int64_t j = 0; j < inner; j++) d[j] = 0.0;
      for (int k = 0; k < count; k++) {
        if (w[k] == 0.0) continue;
        const double *s = src + (ob * in_a + idx[k]) * inner;
        for (int64_t j = 0; j < inner; j++) d[j] += w[k] * s[j];
      }
    }
  }
  return INFER_OK;
}

static infer_status resize_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  const resize_params *p = params;
  const tensor *x = in[0];
  tensor *y = out[0];
  resize_plan pl;
  infer_status st = resize_plan_make(n, p, x, in, &pl);
  if (st == OP_NEEDS_DATA) return infer_fail(INFER_ERR_RUNTIME, "Resize: inputs not available");
  TRY(st);
  if (!dims_equal(y->rank, y->dims, pl.rank, pl.out))
    return infer_fail(INFER_ERR_RUNTIME, "Resize: output shape differs from the inferred one");
  if (p->mode == RS_NEAREST) return resize_run_nearest(p, &pl, x, y);
  int64_t total_in = dims_count(pl.rank, pl.in), total_out = dims_count(pl.rank, pl.out);
  if (total_out == 0) return INFER_OK;
  if (!ws) return infer_fail(INFER_ERR_INTERNAL, "Resize: no workspace");
  int64_t bound = resize_workspace(n, params, in, out) / (2 * (int64_t)sizeof(double));
  double *a = ws, *b = a + bound;
  for (int64_t i = 0; i < total_in; i++) a[i] = nr_load(x, i);
  int64_t cur[INFER_MAX_RANK];
  memcpy(cur, pl.in, sizeof cur);
  for (int ax = pl.rank - 1; ax >= 0; ax--) {
    if (!pl.active[ax]) continue;
    TRY(resize_pass(p, &pl, ax, cur, a, b));
    cur[ax] = pl.out[ax];
    double *t = a;
    a = b;
    b = t;
  }
  for (int64_t i = 0; i < total_out; i++) nr_store(y, i, a[i]);
  return INFER_OK;
}

const op_desc op_resize = {.name = "Resize",
                           .domain = "",
                           .since = 10,
                           .until = OP_OPSET_MAX,
                           .min_inputs = 1,
                           .max_inputs = 4,
                           .min_outputs = 1,
                           .max_outputs = 1,
                           .attrs = resize_attrs,
                           .parse = resize_parse,
                           .infer = resize_infer,
                           .run = resize_run,
                           .workspace = resize_workspace};
