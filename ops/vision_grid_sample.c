/* vision_grid_sample.c: GridSample (16+). X [N, C, D1..Dr] sampled at the normalized
 * positions grid [N, O1..Or, r] (grid[..., 0] indexes the last dim Dr, as x indexes
 * width) into Y [N, C, O1..Or]. A grid value -1 / 1 is the centre of the first / last
 * pixel with align_corners=1, its outer edge with align_corners=0. Modes: nearest,
 * linear (separable, 2 taps per dim) and cubic (Keys, a = -0.75, 4 taps per dim; up to
 * 3-D). Padding for positions and taps outside X: zeros, border (clamp) or reflection
 * (mirror at the edges, repeatedly). This follows the ONNX reference implementation and
 * ONNX Runtime: a point outside the border or reflection range is first moved inside,
 * then each tap outside X is padded. PyTorch's grid_sample agrees except for cubic with
 * border padding, where it pads only the taps (onnxruntime issue 10607). A non-finite
 * grid value samples 0. Floats of every precision; X and grid may differ in dtype. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reduce_util.h"
#include "vision_params.h"

static const char *const grid_sample_attrs[] = {"mode", "padding_mode", "align_corners", NULL};

static infer_status grid_sample_parse(const node *n, void **params) {
  grid_sample_params v;
  const char *mode, *pad;
  int64_t align;
  TRY(attr_get_string(n, "mode", n->opset < 20 ? "bilinear" : "linear", &mode));
  TRY(attr_get_string(n, "padding_mode", "zeros", &pad));
  TRY(attr_get_int(n, "align_corners", 0, &align));
  if (strcmp(mode, "linear") == 0 || strcmp(mode, "bilinear") == 0)
    v.mode = GS_LINEAR;
  else if (strcmp(mode, "nearest") == 0)
    v.mode = GS_NEAREST;
  else if (strcmp(mode, "cubic") == 0 || strcmp(mode, "bicubic") == 0)
    v.mode = GS_CUBIC;
  else
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "GridSample: mode '%s' is not linear, nearest or cubic", mode);
  if (strcmp(pad, "zeros") == 0)
    v.padding = GS_ZEROS;
  else if (strcmp(pad, "border") == 0)
    v.padding = GS_BORDER;
  else if (strcmp(pad, "reflection") == 0)
    v.padding = GS_REFLECTION;
  else
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "GridSample: padding_mode '%s' is not zeros, border or reflection", pad);
  v.align_corners = align != 0;
  grid_sample_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "GridSample: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

/* x mirrored at lo and hi until it lies in [lo, hi]. */
static double reflect(double x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  double d = x < lo ? lo - x : x - hi;
  double flips = floor(d / range), r = d - flips * range;
  bool even = fmod(flips, 2.0) == 0;
  if (x < lo) return even ? lo + r : hi - r;
  return even ? hi - r : lo + r;
}

/* Keys cubic weights (a = -0.75) of the taps at -1, 0, 1, 2 for fraction t in [0, 1). */
static void cubic_weights(double t, double *w) {
  const double a = -0.75;
  double x0 = t + 1, x1 = t, x2 = 1 - t, x3 = 2 - t;
  w[0] = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a;
  w[1] = ((a + 2) * x1 - (a + 3)) * x1 * x1 + 1;
  w[2] = ((a + 2) * x2 - (a + 3)) * x2 * x2 + 1;
  w[3] = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a;
}

void grid_taps(const grid_sample_params *p, double g, int64_t size, int64_t *idx, double *w,
               bool *valid, int *n) {
  bool ac = p->align_corners;
  double x = ac ? (g + 1) / 2 * (double)(size - 1) : ((g + 1) * (double)size - 1) / 2;
  double lo = ac ? 0 : -0.5, hi = ac ? (double)(size - 1) : (double)size - 0.5;
  if (p->mode == GS_NEAREST) x = nearbyint(x); /* half to even (the default rounding mode) */
  if (x < lo || x > hi) {
    if (p->padding == GS_BORDER) x = x < 0 ? 0 : x > (double)(size - 1) ? (double)(size - 1) : x;
    if (p->padding == GS_REFLECTION) x = isfinite(x) ? reflect(x, lo, hi) : NAN;
  }
  /* only zeros padding (or NaN) leaves x far outside: every tap reads 0 */
  if (!(x >= -(GRID_MAX_TAPS + 1) && x <= (double)size + GRID_MAX_TAPS)) {
    *n = 1;
    idx[0] = 0;
    w[0] = 0;
    valid[0] = false;
    return;
  }
  int64_t i0 = (int64_t)floor(x);
  double t = x - (double)i0;
  if (p->mode == GS_NEAREST) {
    *n = 1;
    idx[0] = (int64_t)x; /* integral already */
    w[0] = 1;
  } else if (p->mode == GS_LINEAR) {
    *n = 2;
    idx[0] = i0;
    idx[1] = i0 + 1;
    w[0] = 1 - t;
    w[1] = t;
  } else {
    *n = 4;
    for (int k = 0; k < 4; k++) idx[k] = i0 - 1 + k;
    cubic_weights(t, w);
  }
  for (int k = 0; k < *n; k++) {
    int64_t i = idx[k];
    valid[k] = true;
    if (i >= 0 && i < size) continue;
    if (p->padding == GS_ZEROS)
      valid[k] = false;
    else if (p->padding == GS_BORDER)
      idx[k] = i < 0 ? 0 : size - 1;
    else
      idx[k] = (int64_t)reflect((double)i, lo, hi);
    if (idx[k] < 0 || idx[k] >= size) valid[k] = false; /* cannot happen; keeps reads inside */
  }
}

static infer_status grid_sample_check(const node *n, const grid_sample_params *p,
                                      const tensor *x, const tensor *grid) {
  char a[160], b[160];
  if (!dtype_is_float(x->dtype) || !dtype_is_float(grid->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "GridSample: X %s and grid %s must be floats",
                      infer_dtype_name(x->dtype), infer_dtype_name(grid->dtype));
  int r = x->rank - 2;
  if (r < 1 || (n->opset < 20 && r != 2))
    return infer_fail(INFER_ERR_INVALID_MODEL, "GridSample: X %s must be N,C,H,W%s",
                      dims_format(x->rank, x->dims, a, sizeof a),
                      n->opset < 20 ? " at opset < 20" : " or have more spatial dims");
  if (grid->rank != r + 2 || grid->dims[0] != x->dims[0] || grid->dims[r + 1] != r)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "GridSample: grid %s must be [N, %d output dims, %d] for X %s",
                      dims_format(grid->rank, grid->dims, a, sizeof a), r, r,
                      dims_format(x->rank, x->dims, b, sizeof b));
  if (p->mode == GS_CUBIC && r > 3)
    return infer_fail(INFER_ERR_UNSUPPORTED, "GridSample: cubic mode on %d spatial dims "
                      "(up to 3 supported)", r);
  for (int d = 0; d < r; d++)
    if (x->dims[2 + d] < 1 && dims_count(grid->rank - 1, grid->dims) > 0 && x->dims[1] > 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "GridSample: X %s has an empty spatial dim",
                        dims_format(x->rank, x->dims, a, sizeof a));
  return INFER_OK;
}

static infer_status grid_sample_infer(const node *n, const void *params, const tensor *const *in,
                                      tensor *const *out) {
  const tensor *x = in[0], *grid = in[1];
  TRY(grid_sample_check(n, params, x, grid));
  int r = x->rank - 2;
  out[0]->dtype = x->dtype;
  out[0]->rank = x->rank;
  out[0]->dims[0] = x->dims[0];
  out[0]->dims[1] = x->dims[1];
  for (int d = 0; d < r; d++) out[0]->dims[2 + d] = grid->dims[1 + d];
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "GridSample: output size overflows");
  return INFER_OK;
}

/* Taps of every spatial dim combined: at most 4^3 (cubic) or 2^6 (linear). */
#define GRID_MAX_COMBOS 64

static infer_status grid_sample_run(const node *n, const void *params, const tensor *const *in,
                                    tensor *const *out, void *ws) {
  const grid_sample_params *p = params;
  const tensor *x = in[0], *grid = in[1];
  tensor *y = out[0];
  int r = x->rank - 2;
  int64_t N = x->dims[0], C = x->dims[1];
  int64_t in_sp = dims_count(r, x->dims + 2), out_sp = dims_count(r, y->dims + 2);
  int64_t xs[INFER_MAX_RANK];
  dims_strides(r, x->dims + 2, xs);
  for (int64_t b = 0; b < N; b++)
    for (int64_t o = 0; o < out_sp; o++) {
      int64_t ti[GRID_MAX_SPATIAL][GRID_MAX_TAPS];
      double tw[GRID_MAX_SPATIAL][GRID_MAX_TAPS];
      bool tv[GRID_MAX_SPATIAL][GRID_MAX_TAPS];
      int tn[GRID_MAX_SPATIAL];
      const int64_t g0 = (b * out_sp + o) * r;
      for (int d = 0; d < r; d++)
        grid_taps(p, nr_load(grid, g0 + (r - 1 - d)), x->dims[2 + d], ti[d], tw[d], tv[d],
                  &tn[d]);
      /* the combined taps: offset into one channel and weight (0 when any tap reads 0) */
      int64_t off[GRID_MAX_COMBOS];
      double wt[GRID_MAX_COMBOS];
      int nc = 0, k[GRID_MAX_SPATIAL] = {0};
      for (;;) {
        int64_t of = 0;
        double wv = 1;
        bool inside = true;
        for (int d = 0; d < r; d++) {
          of += ti[d][k[d]] * xs[d];
          wv *= tw[d][k[d]];
          inside &= tv[d][k[d]];
        }
        if (inside) { /* a tap outside (zeros padding) reads 0, whatever its weight */
          off[nc] = of;
          wt[nc++] = wv;
        }
        int d = r - 1;
        while (d >= 0 && ++k[d] == tn[d]) k[d--] = 0;
        if (d < 0) break;
      }
      for (int64_t c = 0; c < C; c++) {
        int64_t base = (b * C + c) * in_sp;
        double v = 0;
        for (int i = 0; i < nc; i++) v += wt[i] * nr_load(x, base + off[i]);
        nr_store(y, (b * C + c) * out_sp + o, v);
      }
    }
  return INFER_OK;
}

const op_desc op_grid_sample = {.name = "GridSample",
                                .domain = "",
                                .since = 16,
                                .until = OP_OPSET_MAX,
                                .min_inputs = 2,
                                .max_inputs = 2,
                                .min_outputs = 1,
                                .max_outputs = 1,
                                .attrs = grid_sample_attrs,
                                .parse = grid_sample_parse,
                                .infer = grid_sample_infer,
                                .run = grid_sample_run};
