/* signal.c: the signal-processing ops of speech front ends, CPU reference: DFT (17, 20:
 * axis as an input), STFT, HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix.
 * Complex values are a trailing dim of 2 (real, imaginary); a trailing 1 is a real
 * signal. The transforms are direct sums over a table of the N-th roots of unity (each
 * twiddle exact to double, no accumulated rotation), in double:
 *   forward  Y[k] = sum_t x[t] e^(-2 pi i k t / N)        (onesided: k <= N / 2)
 *   inverse  y[t] = 1/N sum_k X[k] e^(+2 pi i k t / N); onesided input (the first N / 2 + 1
 *            bins, N = dft_length or 2 (bins - 1)) is completed by Hermitian symmetry and
 *            the result is real (trailing dim 1), as numpy's irfft
 * with the signal cut or zero-padded to dft_length. STFT frames the signal (frame_step,
 * frame_length or the window's length), multiplies by the window and transforms each
 * frame. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

static const double TWO_PI = 6.283185307179586476925286766559;

/* An integer scalar input (int32 or int64) read at build; OP_NEEDS_DATA before. */
static infer_status scalar_i64(const char *op, const char *what, const tensor *t, int64_t *v) {
  if ((t->dtype != INFER_DTYPE_INT64 && t->dtype != INFER_DTYPE_INT32) ||
      dims_count(t->rank, t->dims) != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: %s must be one int32 or int64", op, what);
  if (!t->data) return OP_NEEDS_DATA;
  *v = tensor_get_i64(t, 0);
  return INFER_OK;
}

/* The N roots of unity e^(-2 pi i j / N), j < N, as (cos, sin) pairs. */
static void roots(double *w, int64_t n) {
  for (int64_t j = 0; j < n; j++) {
    const double a = -TWO_PI * (double)j / (double)n;
    w[2 * j] = cos(a);
    w[2 * j + 1] = sin(a);
  }
}

/* out[k] = sum_t in[t] * root^(sign * k t) over t < n, for k < bins; complex pairs. */
static void dft_line(const double *in, double *out, int64_t n, int64_t bins, const double *w,
                     int sign) {
  for (int64_t k = 0; k < bins; k++) {
    double re = 0, im = 0;
    for (int64_t t = 0; t < n; t++) {
      const int64_t j = (k * t) % n;
      const double c = w[2 * j], s = sign * w[2 * j + 1];
      re += in[2 * t] * c - in[2 * t + 1] * s;
      im += in[2 * t] * s + in[2 * t + 1] * c;
    }
    out[2 * k] = re;
    out[2 * k + 1] = im;
  }
}

/* ---- DFT ----------------------------------------------------------------------- */

typedef struct dft_params {
  int64_t axis, inverse, onesided; /* axis: opset < 20 only */
} dft_params;

static const char *const dft_attrs[] = {"axis", "inverse", "onesided", NULL};

static infer_status dft_parse(const node *n, void **params) {
  dft_params v;
  TRY(attr_get_int(n, "axis", 1, &v.axis));
  TRY(attr_get_int(n, "inverse", 0, &v.inverse));
  TRY(attr_get_int(n, "onesided", 0, &v.onesided));
  if (n->opset >= 20 && node_attr(n, "axis"))
    return infer_fail(INFER_ERR_INVALID_MODEL, "DFT: axis is an input from opset 20");
  dft_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "DFT: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

typedef struct dft_geom {
  int axis;
  int64_t n_in, len, n_out, c_in, c_out, outer, inner;
} dft_geom;

static infer_status dft_geom_of(const node *n, const dft_params *p, const tensor *const *in,
                                dft_geom *g) {
  const tensor *x = in[0];
  const tensor *len_t = n->n_inputs > 1 ? in[1] : NULL, *axis_t = n->n_inputs > 2 ? in[2] : NULL;
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "DFT: input of dtype %s", infer_dtype_name(x->dtype));
  if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
    return infer_fail(INFER_ERR_INVALID_MODEL, "DFT: the last dim must be 1 (real) or 2 (complex)");
  int64_t axis = n->opset >= 20 ? -2 : p->axis;
  if (n->opset >= 20 && axis_t) TRY(scalar_i64("DFT", "axis", axis_t, &axis));
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis > x->rank - 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "DFT: axis outside the signal dims");
  g->axis = (int)axis;
  g->n_in = x->dims[axis];
  g->c_in = x->dims[x->rank - 1];
  const bool irfft = p->inverse && p->onesided;
  g->len = irfft ? 2 * (g->n_in - 1) : g->n_in;
  if (len_t) TRY(scalar_i64("DFT", "dft_length", len_t, &g->len));
  if (g->len < 1) return infer_fail(INFER_ERR_INVALID_MODEL, "DFT: dft_length %lld", (long long)g->len);
  g->n_out = irfft ? g->len : p->onesided ? g->len / 2 + 1 : g->len;
  g->c_out = irfft ? 1 : 2;
  g->outer = dims_count(g->axis, x->dims);
  g->inner = dims_count(x->rank - 1 - g->axis - 1, x->dims + g->axis + 1);
  return INFER_OK;
}

static infer_status dft_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  dft_geom g = {0};
  TRY(dft_geom_of(n, params, in, &g));
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = in[0]->rank;
  memcpy(out[0]->dims, in[0]->dims, sizeof in[0]->dims[0] * in[0]->rank);
  out[0]->dims[g.axis] = g.n_out;
  out[0]->dims[in[0]->rank - 1] = g.c_out;
  return INFER_OK;
}

static int64_t dft_workspace(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out) {
  (void)out;
  dft_geom g = {0};
  if (dft_geom_of(n, params, in, &g) != INFER_OK) return 0;
  return 6 * g.len * (int64_t)sizeof(double); /* roots, the line in, the line out */
}

static infer_status dft_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  const dft_params *p = params;
  dft_geom g = {0};
  TRY(dft_geom_of(n, p, in, &g));
  const tensor *x = in[0];
  tensor *y = out[0];
  double *w = ws, *line = w + 2 * g.len, *res = line + 2 * g.len;
  roots(w, g.len);
  const bool irfft = p->inverse && p->onesided;
  for (int64_t o = 0; o < g.outer; o++)
    for (int64_t i = 0; i < g.inner; i++) {
      for (int64_t t = 0; t < g.len; t++) { /* the line, cut or zero-padded to len */
        double re = 0, im = 0;
        int64_t src = t, conj = 0;
        if (irfft && t >= g.n_in) { /* Hermitian completion: X[N - t]* */
          src = g.len - t;
          conj = 1;
        }
        if (src < g.n_in) {
          const int64_t e = ((o * g.n_in + src) * g.inner + i) * g.c_in;
          re = tensor_get_f64(x, e);
          im = g.c_in == 2 ? tensor_get_f64(x, e + 1) : 0;
          if (conj) im = -im;
        }
        line[2 * t] = re;
        line[2 * t + 1] = im;
      }
      dft_line(line, res, g.len, g.n_out, w, p->inverse ? -1 : 1);
      for (int64_t k = 0; k < g.n_out; k++) {
        const int64_t e = ((o * g.n_out + k) * g.inner + i) * g.c_out;
        const double scale = p->inverse ? 1.0 / (double)g.len : 1.0;
        tensor_set_f64(y, e, res[2 * k] * scale);
        if (g.c_out == 2) tensor_set_f64(y, e + 1, res[2 * k + 1] * scale);
      }
    }
  return INFER_OK;
}

/* ---- STFT ---------------------------------------------------------------------- */

static const char *const stft_attrs[] = {"onesided", NULL};

static infer_status stft_parse(const node *n, void **params) {
  int64_t *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "STFT: out of memory");
  infer_status st = attr_get_int(n, "onesided", 1, p);
  if (st != INFER_OK) {
    free(p);
    return st;
  }
  *params = p;
  return INFER_OK;
}

typedef struct stft_geom {
  int64_t batch, length, c, step, frame, frames, bins;
} stft_geom;

static infer_status stft_geom_of(const node *n, const int64_t *onesided, const tensor *const *in,
                                 stft_geom *g) {
  const tensor *x = in[0], *win = n->n_inputs > 2 ? in[2] : NULL;
  const tensor *fl = n->n_inputs > 3 ? in[3] : NULL;
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "STFT: signal of dtype %s", infer_dtype_name(x->dtype));
  if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
    return infer_fail(INFER_ERR_INVALID_MODEL, "STFT: signal must be [batch, length, 1 or 2]");
  g->batch = x->dims[0];
  g->length = x->dims[1];
  g->c = x->dims[2];
  TRY(scalar_i64("STFT", "frame_step", in[1], &g->step));
  if (win && (win->rank != 1 || win->dtype != x->dtype))
    return infer_fail(INFER_ERR_INVALID_MODEL, "STFT: window must be 1-D of the signal's dtype");
  if (fl) {
    TRY(scalar_i64("STFT", "frame_length", fl, &g->frame));
    if (win && win->dims[0] != g->frame)
      return infer_fail(INFER_ERR_INVALID_MODEL, "STFT: the window has %lld values, frame_length "
                        "%lld", (long long)win->dims[0], (long long)g->frame);
  } else if (win) {
    g->frame = win->dims[0];
  } else {
    return infer_fail(INFER_ERR_INVALID_MODEL, "STFT: needs a window or a frame_length");
  }
  if (g->step < 1 || g->frame < 1 || g->frame > g->length)
    return infer_fail(INFER_ERR_INVALID_MODEL, "STFT: frame_step %lld and frame_length %lld for "
                      "a signal of %lld", (long long)g->step, (long long)g->frame,
                      (long long)g->length);
  g->frames = (g->length - g->frame) / g->step + 1;
  g->bins = *onesided ? g->frame / 2 + 1 : g->frame;
  return INFER_OK;
}

static infer_status stft_infer(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out) {
  stft_geom g = {0};
  TRY(stft_geom_of(n, params, in, &g));
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = 4;
  const int64_t d[4] = {g.batch, g.frames, g.bins, 2};
  memcpy(out[0]->dims, d, sizeof d);
  return INFER_OK;
}

static int64_t stft_workspace(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  (void)out;
  stft_geom g = {0};
  if (stft_geom_of(n, params, in, &g) != INFER_OK) return 0;
  return 6 * g.frame * (int64_t)sizeof(double);
}

static infer_status stft_run(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out, void *ws) {
  stft_geom g = {0};
  TRY(stft_geom_of(n, params, in, &g));
  const tensor *x = in[0], *win = n->n_inputs > 2 ? in[2] : NULL;
  double *w = ws, *line = w + 2 * g.frame, *res = line + 2 * g.frame;
  roots(w, g.frame);
  for (int64_t b = 0; b < g.batch; b++)
    for (int64_t f = 0; f < g.frames; f++) {
      for (int64_t t = 0; t < g.frame; t++) {
        const int64_t e = (b * g.length + f * g.step + t) * g.c;
        const double wt = win ? tensor_get_f64(win, t) : 1;
        line[2 * t] = tensor_get_f64(x, e) * wt;
        line[2 * t + 1] = g.c == 2 ? tensor_get_f64(x, e + 1) * wt : 0;
      }
      dft_line(line, res, g.frame, g.bins, w, 1);
      for (int64_t k = 0; k < g.bins; k++) {
        const int64_t e = ((b * g.frames + f) * g.bins + k) * 2;
        tensor_set_f64(out[0], e, res[2 * k]);
        tensor_set_f64(out[0], e + 1, res[2 * k + 1]);
      }
    }
  return INFER_OK;
}

/* ---- windows ------------------------------------------------------------------- */

typedef enum window_kind { WIN_HANN, WIN_HAMMING, WIN_BLACKMAN } window_kind;

typedef struct window_params {
  int64_t periodic;
  infer_dtype out;
  window_kind kind; /* from the op's name, at parse */
} window_params;

static const char *const window_attrs[] = {"periodic", "output_datatype", NULL};

static infer_status window_parse(const node *n, void **params) {
  window_params v;
  int64_t dt;
  TRY(attr_get_int(n, "periodic", 1, &v.periodic));
  TRY(attr_get_int(n, "output_datatype", INFER_DTYPE_FLOAT32, &dt));
  if (dt < 1 || dt > 16 || infer_dtype_size((infer_dtype)dt) == 0 ||
      dt == INFER_DTYPE_BOOL || dt == INFER_DTYPE_STRING)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: output_datatype %lld", n->op_type, (long long)dt);
  v.out = (infer_dtype)dt;
  v.kind = strcmp(n->op_type, "BlackmanWindow") == 0 ? WIN_BLACKMAN
           : strcmp(n->op_type, "HammingWindow") == 0 ? WIN_HAMMING
                                                      : WIN_HANN; /* MelWeightMatrix: unused */
  window_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", n->op_type);
  *p = v;
  *params = p;
  return INFER_OK;
}

static infer_status window_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  int64_t size = 0;
  TRY(scalar_i64(n->op_type, "size", in[0], &size));
  if (size < 0) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: size %lld", n->op_type, (long long)size);
  out[0]->dtype = ((const window_params *)params)->out;
  out[0]->rank = 1;
  out[0]->dims[0] = size;
  return INFER_OK;
}

static infer_status window_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  (void)ws;
  const window_params *p = params;
  const int64_t size = out[0]->dims[0], m = p->periodic ? size : size - 1;
  const double alpha = 25.0 / 46.0; /* Hamming's */
  for (int64_t i = 0; i < size; i++) {
    const double a = m > 0 ? TWO_PI * (double)i / (double)m : 0;
    const double v = p->kind == WIN_BLACKMAN  ? 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a)
                     : p->kind == WIN_HAMMING ? alpha - (1 - alpha) * cos(a)
                                              : 0.5 - 0.5 * cos(a);
    tensor_set_f64(out[0], i, m > 0 ? v : 1);
  }
  return INFER_OK;
}

/* ---- MelWeightMatrix ----------------------------------------------------------- */

static const char *const mel_attrs[] = {"output_datatype", NULL};

typedef struct mel_args {
  int64_t bins, dft, rate;
  double lo, hi;
} mel_args;

static infer_status mel_args_of(const tensor *const *in, mel_args *a) {
  TRY(scalar_i64("MelWeightMatrix", "num_mel_bins", in[0], &a->bins));
  TRY(scalar_i64("MelWeightMatrix", "dft_length", in[1], &a->dft));
  TRY(scalar_i64("MelWeightMatrix", "sample_rate", in[2], &a->rate));
  for (int k = 3; k < 5; k++) {
    if (!dtype_is_float(in[k]->dtype) || dims_count(in[k]->rank, in[k]->dims) != 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "MelWeightMatrix: the edge frequencies must be "
                        "float scalars");
    if (!in[k]->data) return OP_NEEDS_DATA;
  }
  a->lo = tensor_get_f64(in[3], 0);
  a->hi = tensor_get_f64(in[4], 0);
  if (a->bins < 1 || a->dft < 1 || a->rate < 1 || !(a->lo >= 0) || !(a->hi > a->lo))
    return infer_fail(INFER_ERR_INVALID_MODEL, "MelWeightMatrix: %lld bins, dft_length %lld, "
                      "sample_rate %lld, edges %g..%g", (long long)a->bins, (long long)a->dft,
                      (long long)a->rate, a->lo, a->hi);
  return INFER_OK;
}

static infer_status mel_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  (void)n;
  mel_args a = {0};
  TRY(mel_args_of(in, &a));
  out[0]->dtype = ((const window_params *)params)->out;
  out[0]->rank = 2;
  out[0]->dims[0] = a.dft / 2 + 1;
  out[0]->dims[1] = a.bins;
  return INFER_OK;
}

/* Triangles between the mel-spaced edges, as the ONNX reference computes them: the edges
 * are num_mel_bins + 2 points, mel step (high - low) / (num_mel_bins + 2), each mapped
 * to the spectrogram bin floor((dft_length + 1) * f / sample_rate). */
static infer_status mel_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  (void)n;
  (void)params;
  (void)ws;
  mel_args a = {0};
  TRY(mel_args_of(in, &a));
  const int64_t rows = a.dft / 2 + 1;
  const double lo = 2595 * log10(1 + a.lo / 700), hi = 2595 * log10(1 + a.hi / 700);
  const double step = (hi - lo) / (double)(a.bins + 2);
  for (int64_t e = 0; e < rows * a.bins; e++) tensor_set_f64(out[0], e, 0);
  int64_t prev2 = 0, prev1 = 0;
  for (int64_t i = 0; i < a.bins + 2; i++) {
    const double hz = 700 * (pow(10, ((double)i * step + lo) / 2595) - 1);
    const int64_t edge = (int64_t)floor((double)(a.dft + 1) * hz / (double)a.rate);
    if (i >= 2) { /* the triangle of mel bin i - 2: left prev2, center prev1, right edge */
      const int64_t m = i - 2, left = prev2, center = prev1, right = edge;
      if (center - left == 0) {
        if (center >= 0 && center < rows) tensor_set_f64(out[0], center * a.bins + m, 1);
      } else {
        for (int64_t j = left; j <= center; j++)
          if (j >= 0 && j < rows)
            tensor_set_f64(out[0], j * a.bins + m, (double)(j - left) / (double)(center - left));
      }
      if (right - center > 0)
        for (int64_t j = center; j < right; j++)
          if (j >= 0 && j < rows)
            tensor_set_f64(out[0], j * a.bins + m, (double)(right - j) / (double)(right - center));
    }
    prev2 = prev1;
    prev1 = edge;
  }
  return INFER_OK;
}

#define SIGNAL_OP(NAME, SINCE, MIN_IN, MAX_IN, ATTRS, PARSE, INFER, RUN, WS)                    \
  {.name = NAME, .domain = "", .since = SINCE, .until = OP_OPSET_MAX, .min_inputs = MIN_IN,     \
   .max_inputs = MAX_IN, .min_outputs = 1, .max_outputs = 1, .attrs = ATTRS, .parse = PARSE,   \
   .infer = INFER, .run = RUN, .workspace = WS}
static const op_desc dft_op = SIGNAL_OP("DFT", 17, 1, 3, dft_attrs, dft_parse, dft_infer, dft_run,
                                        dft_workspace);
static const op_desc stft_op = SIGNAL_OP("STFT", 17, 2, 4, stft_attrs, stft_parse, stft_infer,
                                         stft_run, stft_workspace);
static const op_desc hann_op = SIGNAL_OP("HannWindow", 17, 1, 1, window_attrs, window_parse,
                                         window_infer, window_run, NULL);
static const op_desc hamming_op = SIGNAL_OP("HammingWindow", 17, 1, 1, window_attrs, window_parse,
                                            window_infer, window_run, NULL);
static const op_desc blackman_op = SIGNAL_OP("BlackmanWindow", 17, 1, 1, window_attrs,
                                             window_parse, window_infer, window_run, NULL);
static const op_desc mel_op = SIGNAL_OP("MelWeightMatrix", 17, 5, 5, mel_attrs, window_parse,
                                        mel_infer, mel_run, NULL);
#undef SIGNAL_OP

const op_desc *const ops_signal[] = {&dft_op, &stft_op, &hann_op, &hamming_op, &blackman_op,
                                     &mel_op, NULL};
