/* conv.c: Conv and ConvTranspose (N-D spatial up to 3-D, groups, dilations,
 * strides, asymmetric pads, auto_pad).
 *
 * float32 runs as im2col + cpu_sgemm per image and group (1x1 stride-1 unpadded
 * convolutions skip im2col: the input already is the column matrix);
 * ConvTranspose as GEMM + col2im. float64 uses the same path with a plain double
 * GEMM; float16/bfloat16 are staged to float32 in the workspace. */
#include <stdlib.h>
#include <string.h>

#include "conv_util.h"
#include "cpu_gemm.h"

#include "conv_fused.h"

static const char *const conv_attr_names[] = {"auto_pad", "dilations", "group", "kernel_shape",
                                              "pads",     "strides",   NULL};
static const char *const convt_attr_names[] = {"auto_pad",     "dilations",      "group",
                                               "kernel_shape", "output_padding", "output_shape",
                                               "pads",         "strides",        NULL};

/* size: of the params block, which may extend conv_params (FusedConv). */
infer_status conv_parse_common(const node *n, const char *op, bool transpose, size_t size,
                               void **params) {
  conv_params *p = calloc(1, size);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  infer_status s = win_attrs_parse(n, op, &p->w);
  if (s == INFER_OK) s = attr_get_int(n, "group", 1, &p->group);
  if (s == INFER_OK && p->group < 1)
    s = infer_fail(INFER_ERR_INVALID_MODEL, "%s: attribute 'group' = %lld must be >= 1", op,
                   (long long)p->group);
  p->n_output_padding = p->n_output_shape = -1;
  if (s == INFER_OK && transpose) {
    const int64_t *v;
    int c;
    s = attr_get_ints(n, "output_padding", &v, &c);
    if (s == INFER_OK && c > WIN_MAX_SPATIAL)
      s = infer_fail(INFER_ERR_UNSUPPORTED, "%s: output_padding has %d entries", op, c);
    for (int i = 0; s == INFER_OK && i < c; i++) {
      if (v[i] < 0)
        s = infer_fail(INFER_ERR_INVALID_MODEL, "%s: output_padding[%d] = %lld is negative", op, i,
                       (long long)v[i]);
      p->output_padding[i] = v[i];
    }
    if (s == INFER_OK) p->n_output_padding = c;
    if (s == INFER_OK) s = attr_get_ints(n, "output_shape", &v, &c);
    if (s == INFER_OK && c > WIN_MAX_SPATIAL + 2)
      s = infer_fail(INFER_ERR_UNSUPPORTED, "%s: output_shape has %d entries", op, c);
    for (int i = 0; s == INFER_OK && i < c; i++) {
      if (v[i] < 1)
        s = infer_fail(INFER_ERR_INVALID_MODEL, "%s: output_shape[%d] = %lld must be >= 1", op, i,
                       (long long)v[i]);
      p->output_shape[i] = v[i];
    }
    if (s == INFER_OK) p->n_output_shape = c;
  }
  if (s != INFER_OK) {
    free(p);
    return s;
  }
  *params = p;
  return INFER_OK;
}

static infer_status conv_parse(const node *n, void **params) {
  return conv_parse_common(n, "Conv", false, sizeof(conv_params), params);
}
static infer_status convt_parse(const node *n, void **params) {
  return conv_parse_common(n, "ConvTranspose", true, sizeof(conv_params), params);
}

static bool shape_known(const tensor *t) {
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0) return false;
  return true;
}

/* The float convolutions: X, W (and B) of one float dtype. */
static infer_status check_float_dtypes(const char *op, const tensor *const *in) {
  const tensor *x = in[0], *w = in[1], *b = in[2];
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: input dtype %s", op, infer_dtype_name(x->dtype));
  if (w->dtype != x->dtype || (b && b->dtype != x->dtype))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: X is %s but W is %s%s%s", op,
                      infer_dtype_name(x->dtype), infer_dtype_name(w->dtype), b ? " and B " : "",
                      b ? infer_dtype_name(b->dtype) : "");
  return INFER_OK;
}

/* Checks the ranks shared by both ops (not dtypes); W's spatial dims give the kernel. */
static infer_status check_inputs(const char *op, const conv_params *p, const tensor *const *in,
                                 int64_t *kernel) {
  const tensor *x = in[0], *w = in[1];
  char s1[96], s2[96];
  if (x->rank < 3 || w->rank != x->rank)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: X %s and W %s must have the same rank >= 3", op,
                      dims_format(x->rank, x->dims, s1, sizeof s1),
                      dims_format(w->rank, w->dims, s2, sizeof s2));
  int nsp = x->rank - 2;
  if (nsp > WIN_MAX_SPATIAL)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: %d spatial dims (supported: up to %d)", op, nsp,
                      WIN_MAX_SPATIAL);
  for (int i = 0; i < nsp; i++) kernel[i] = w->dims[2 + i];
  if (p->w.n_kernel >= 0) {
    if (p->w.n_kernel != nsp)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "%s: kernel_shape has %d entries for %d spatial dims", op, p->w.n_kernel,
                        nsp);
    for (int i = 0; i < nsp; i++)
      if (p->w.kernel[i] != kernel[i])
        return infer_fail(INFER_ERR_INVALID_MODEL, "%s: kernel_shape does not match W %s", op,
                          dims_format(w->rank, w->dims, s2, sizeof s2));
  }
  return INFER_OK;
}

infer_status conv_dims_make(const char *op, const conv_params *p, const tensor *const *in,
                            conv_dims *d) {
  const tensor *x = in[0], *w = in[1], *b = in[2];
  int64_t kernel[WIN_MAX_SPATIAL];
  TRY(check_inputs(op, p, in, kernel));
  memset(d, 0, sizeof *d);
  d->n = x->dims[0];
  d->c = x->dims[1];
  d->m = w->dims[0];
  d->group = p->group;
  char s1[96], s2[96];
  if (d->c % d->group != 0 || d->m % d->group != 0 || w->dims[1] * d->group != d->c)
    return infer_fail(
        INFER_ERR_INVALID_MODEL,
        "%s: X %s and W %s do not match with group %lld (W must be M x C/group x k...)", op,
        dims_format(x->rank, x->dims, s1, sizeof s1), dims_format(w->rank, w->dims, s2, sizeof s2),
        (long long)d->group);
  if (b && (b->rank != 1 || b->dims[0] != d->m))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: B %s must be 1-D of size M = %lld", op,
                      dims_format(b->rank, b->dims, s1, sizeof s1), (long long)d->m);
  d->cg = d->c / d->group;
  d->mg = d->m / d->group;
  TRY(win_geom_forward(&p->w, x->rank - 2, x->dims + 2, kernel, false, op, &d->g));
  d->kernel = win_kernel_count(&d->g);
  const win_geom *g = &d->g;
  d->pointwise = true;
  for (int j = 0; j < 3; j++)
    if (g->k[j] != 1 || g->s[j] != 1 || g->pb[j] != 0 || g->pe[j] != 0) d->pointwise = false;
  return INFER_OK;
}

static infer_status conv_float_dims_make(const conv_params *p, const tensor *const *in,
                                        conv_dims *d) {
  TRY(check_float_dtypes("Conv", in));
  return conv_dims_make("Conv", p, in, d);
}

/* The engine passes NULL for an omitted optional input; B may also be absent
 * from the node altogether, so only n_inputs slots are read. */
#define CONV_INPUTS(n, in)                                                        \
  const tensor *ins_[3] = {(in)[0], (in)[1], (n)->n_inputs > 2 ? (in)[2] : NULL}; \
  in = ins_

infer_status conv_infer(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out) {
  const conv_params *p = params;
  CONV_INPUTS(n, in);
  if (!shape_known(in[0]) || !shape_known(in[1]) || (in[2] && !shape_known(in[2])))
    return OP_NEEDS_DATA;
  conv_dims d;
  TRY(conv_float_dims_make(p, in, &d));
  int64_t cnt;
  if (!size_mul(d.kernel, d.cg, &cnt) || win_out_count(&d.g) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Conv: sizes overflow");
  tensor *y = out[0];
  y->dtype = in[0]->dtype;
  y->rank = in[0]->rank;
  y->dims[0] = d.n;
  y->dims[1] = d.m;
  for (int i = 0; i < y->rank - 2; i++) y->dims[2 + i] = d.g.out[3 - (y->rank - 2) + i];
  if (tensor_nbytes(y) < 0) return infer_fail(INFER_ERR_INVALID_MODEL, "Conv: output too large");
  return INFER_OK;
}

/* Workspace: the im2col buffer (element type: double for float64, else float),
 * then for half types the float32 copies of X, W, B and Y. */
static int64_t ws_bytes_with_col(int64_t col, const tensor *const *in, const tensor *y) {
  infer_dtype dt = in[0]->dtype;
  int64_t elem = dt == INFER_DTYPE_FLOAT64 ? 8 : 4, total = 0;
  ws_add(&total, col, elem);
  if (dt == INFER_DTYPE_FLOAT16 || dt == INFER_DTYPE_BFLOAT16) {
    ws_add(&total, dims_count(in[0]->rank, in[0]->dims), 4);
    ws_add(&total, dims_count(in[1]->rank, in[1]->dims), 4);
    ws_add(&total, in[2] ? in[2]->dims[0] : 0, 4);
    ws_add(&total, dims_count(y->rank, y->dims), 4);
  }
  return total;
}

static int64_t conv_ws_bytes(const conv_dims *d, const tensor *const *in, const tensor *y) {
  int64_t col = 0;
  if (!d->pointwise && !size_mul(d->cg * d->kernel, win_out_count(&d->g), &col)) return -1;
  return ws_bytes_with_col(col, in, y);
}

int64_t conv_workspace(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  CONV_INPUTS(n, in);
  conv_dims d;
  if (conv_float_dims_make(params, in, &d) != INFER_OK) return -1;
  return conv_ws_bytes(&d, in, out[0]);
}

#define DEFINE_CONV_CORE(NAME, T, IM2COL, GEMM)                                                   \
  static void NAME(const conv_dims *d, const T *x, const T *w, const T *b, T *y, T *col) {        \
    const int64_t in_sz = win_in_count(&d->g), out_sz = win_out_count(&d->g);                     \
    const int64_t kk = d->cg * d->kernel;                                                         \
    for (int64_t n = 0; n < d->n; n++)                                                            \
      for (int64_t g = 0; g < d->group; g++) {                                                    \
        const T *xg = x + (n * d->c + g * d->cg) * in_sz;                                         \
        T *yg = y + (n * d->m + g * d->mg) * out_sz;                                              \
        const T *cols = xg;                                                                       \
        if (!d->pointwise) {                                                                      \
          IM2COL(xg, d->cg, &d->g, col);                                                          \
          cols = col;                                                                             \
        }                                                                                         \
        if (b)                                                                                    \
          for (int64_t m = 0; m < d->mg; m++) {                                                   \
            T bv = b[g * d->mg + m], *row = yg + m * out_sz;                                      \
            for (int64_t i = 0; i < out_sz; i++) row[i] = bv;                                     \
          }                                                                                       \
        GEMM(false, false, d->mg, out_sz, kk, 1, w + g * d->mg * kk, kk, cols, out_sz, b ? 1 : 0, \
             yg, out_sz);                                                                         \
      }                                                                                           \
  }

DEFINE_CONV_CORE(conv_core_f32, float, im2col_f32, cpu_sgemm)
DEFINE_CONV_CORE(conv_core_f64, double, im2col_f64, ref_dgemm)

infer_status conv_run(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out, void *ws) {
  CONV_INPUTS(n, in);
  conv_dims d;
  TRY(conv_float_dims_make(params, in, &d));
  const tensor *x = in[0], *w = in[1], *b = in[2];
  tensor *y = out[0];
  char *cur = ws;
  int64_t elem = x->dtype == INFER_DTYPE_FLOAT64 ? 8 : 4;
  int64_t col_n = d.pointwise ? 0 : d.cg * d.kernel * win_out_count(&d.g);
  void *col = ws_take(&cur, col_n, elem);
  switch (x->dtype) {
    case INFER_DTYPE_FLOAT32:
      conv_core_f32(&d, x->data, w->data, b ? b->data : NULL, y->data, col);
      return INFER_OK;
    case INFER_DTYPE_FLOAT64:
      conv_core_f64(&d, x->data, w->data, b ? b->data : NULL, y->data, col);
      return INFER_OK;
    default: {
      int64_t nx = dims_count(x->rank, x->dims), nw = dims_count(w->rank, w->dims);
      int64_t nb = b ? b->dims[0] : 0, ny = dims_count(y->rank, y->dims);
      float *xs = ws_take(&cur, nx, 4), *wsf = ws_take(&cur, nw, 4);
      float *bs = ws_take(&cur, nb, 4), *ys = ws_take(&cur, ny, 4);
      stage_to_f32(x->data, x->dtype, nx, xs);
      stage_to_f32(w->data, w->dtype, nw, wsf);
      if (b) stage_to_f32(b->data, b->dtype, nb, bs);
      conv_core_f32(&d, xs, wsf, b ? bs : NULL, ys, col);
      stage_from_f32(ys, y->dtype, ny, y->data);
      return INFER_OK;
    }
  }
}

/* ---- ConvTranspose ------------------------------------------------------------ */

static infer_status convt_dims_make(const conv_params *p, const tensor *const *in, conv_dims *d) {
  const tensor *x = in[0], *w = in[1], *b = in[2];
  int64_t kernel[WIN_MAX_SPATIAL];
  TRY(check_float_dtypes("ConvTranspose", in));
  TRY(check_inputs("ConvTranspose", p, in, kernel));
  memset(d, 0, sizeof *d);
  int nsp = x->rank - 2;
  d->n = x->dims[0];
  d->c = x->dims[1];
  d->group = p->group;
  char s1[96], s2[96];
  if (w->dims[0] != d->c || d->c % d->group != 0)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "ConvTranspose: X %s and W %s do not match with group %lld (W must be C x "
                      "M/group x k...)",
                      dims_format(x->rank, x->dims, s1, sizeof s1),
                      dims_format(w->rank, w->dims, s2, sizeof s2), (long long)d->group);
  d->cg = d->c / d->group;
  d->mg = w->dims[1];
  if (!size_mul(d->mg, d->group, &d->m))
    return infer_fail(INFER_ERR_INVALID_MODEL, "ConvTranspose: sizes overflow");
  if (b && (b->rank != 1 || b->dims[0] != d->m))
    return infer_fail(INFER_ERR_INVALID_MODEL, "ConvTranspose: B %s must be 1-D of size M = %lld",
                      dims_format(b->rank, b->dims, s1, sizeof s1), (long long)d->m);
  const win_attrs *a = &p->w;
  if ((a->n_strides >= 0 && a->n_strides != nsp) ||
      (a->n_dilations >= 0 && a->n_dilations != nsp) || (a->n_pads >= 0 && a->n_pads != 2 * nsp) ||
      (p->n_output_padding >= 0 && p->n_output_padding != nsp))
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "ConvTranspose: strides/dilations/pads/output_padding do not match %d "
                      "spatial dims",
                      nsp);
  const int64_t *oshape = NULL;
  if (p->n_output_shape >= 0) {
    if (p->n_output_shape == nsp)
      oshape = p->output_shape;
    else if (p->n_output_shape == nsp + 2)
      oshape = p->output_shape + 2; /* some exporters write the full N, C, ... shape */
    else
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "ConvTranspose: output_shape has %d entries for %d spatial dims",
                        p->n_output_shape, nsp);
  }
  win_geom *g = &d->g;
  g->nsp = nsp;
  for (int j = 0; j < 3; j++) {
    g->in[j] = g->k[j] = g->s[j] = g->d[j] = g->out[j] = 1;
    g->pb[j] = g->pe[j] = 0;
  }
  for (int i = 0; i < nsp; i++) {
    int j = 3 - nsp + i;
    int64_t xi = x->dims[2 + i], k = kernel[i];
    int64_t s = a->n_strides > 0 ? a->strides[i] : 1;
    int64_t dl = a->n_dilations > 0 ? a->dilations[i] : 1;
    int64_t op = p->n_output_padding > 0 ? p->output_padding[i] : 0;
    if (xi < 1 || k < 1 || xi > INT64_MAX / 8 / s || k > INT64_MAX / 8 / dl || op > INT64_MAX / 8)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "ConvTranspose: spatial dim %d: input %lld, kernel %lld", i, (long long)xi,
                        (long long)k);
    int64_t ek = (k - 1) * dl + 1, full = s * (xi - 1) + op + ek, out, pb, pe;
    if (oshape || a->auto_pad == AUTO_PAD_SAME_UPPER || a->auto_pad == AUTO_PAD_SAME_LOWER) {
      out = oshape ? oshape[i] : xi * s;
      if (out > INT64_MAX / 8)
        return infer_fail(INFER_ERR_INVALID_MODEL, "ConvTranspose: output_shape too large");
      /* may be negative: the output is larger than the scatter reaches. Halves
       * round down (floor, as the ONNX reference does), the odd one goes to the end
       * for SAME_UPPER and to the beginning otherwise. */
      int64_t total = full - out, half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      if (a->auto_pad == AUTO_PAD_SAME_UPPER) {
        pb = half;
        pe = total - half;
      } else {
        pe = half;
        pb = total - half;
      }
    } else {
      pb = (a->auto_pad == AUTO_PAD_NOTSET && a->n_pads > 0) ? a->pads[i] : 0;
      pe = (a->auto_pad == AUTO_PAD_NOTSET && a->n_pads > 0) ? a->pads[i + nsp] : 0;
      out = full - pb - pe;
    }
    if (out < 1)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "ConvTranspose: spatial dim %d gives output size %lld", i, (long long)out);
    /* forward view: Y (size out) is the input of a Conv whose output is X */
    g->in[j] = out;
    g->out[j] = xi;
    g->k[j] = k;
    g->s[j] = s;
    g->d[j] = dl;
    g->pb[j] = pb;
    g->pe[j] = pe;
  }
  d->kernel = win_kernel_count(g);
  if (d->kernel < 0 || win_in_count(g) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "ConvTranspose: sizes overflow");
  return INFER_OK;
}

static infer_status convt_infer(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  CONV_INPUTS(n, in);
  if (!shape_known(in[0]) || !shape_known(in[1]) || (in[2] && !shape_known(in[2])))
    return OP_NEEDS_DATA;
  conv_dims d;
  TRY(convt_dims_make(params, in, &d));
  tensor *y = out[0];
  y->dtype = in[0]->dtype;
  y->rank = in[0]->rank;
  y->dims[0] = d.n;
  y->dims[1] = d.m;
  int nsp = y->rank - 2;
  for (int i = 0; i < nsp; i++) y->dims[2 + i] = d.g.in[3 - nsp + i];
  if (tensor_nbytes(y) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "ConvTranspose: output too large");
  return INFER_OK;
}

static int64_t convt_ws_bytes(const conv_dims *d, const tensor *const *in, const tensor *y) {
  int64_t col;
  if (!size_mul(d->mg * d->kernel, win_out_count(&d->g), &col)) return -1;
  return ws_bytes_with_col(col, in, y);
}

static int64_t convt_workspace(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out) {
  CONV_INPUTS(n, in);
  conv_dims d;
  if (convt_dims_make(params, in, &d) != INFER_OK) return -1;
  return convt_ws_bytes(&d, in, out[0]);
}

/* Per image and group: col (Mg*K x in) = W_g^T (W_g is Cg x Mg*K) * X_g (Cg x in),
 * then col2im scatters col into Y_g, which starts as the bias. */
#define DEFINE_CONVT_CORE(NAME, T, COL2IM, GEMM)                                               \
  static void NAME(const conv_dims *d, const T *x, const T *w, const T *b, T *y, T *col) {     \
    const int64_t x_sz = win_out_count(&d->g), y_sz = win_in_count(&d->g);                     \
    const int64_t mk = d->mg * d->kernel;                                                      \
    for (int64_t n = 0; n < d->n; n++)                                                         \
      for (int64_t g = 0; g < d->group; g++) {                                                 \
        const T *xg = x + (n * d->c + g * d->cg) * x_sz;                                       \
        T *yg = y + (n * d->m + g * d->mg) * y_sz;                                             \
        GEMM(true, false, mk, x_sz, d->cg, 1, w + g * d->cg * mk, mk, xg, x_sz, 0, col, x_sz); \
        for (int64_t m = 0; m < d->mg; m++) {                                                  \
          T bv = b ? b[g * d->mg + m] : 0, *row = yg + m * y_sz;                               \
          for (int64_t i = 0; i < y_sz; i++) row[i] = bv;                                      \
        }                                                                                      \
        COL2IM(col, d->mg, &d->g, yg);                                                         \
      }                                                                                        \
  }

DEFINE_CONVT_CORE(convt_core_f32, float, col2im_f32, cpu_sgemm)
DEFINE_CONVT_CORE(convt_core_f64, double, col2im_f64, ref_dgemm)

static infer_status convt_run(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out, void *ws) {
  CONV_INPUTS(n, in);
  conv_dims d;
  TRY(convt_dims_make(params, in, &d));
  const tensor *x = in[0], *w = in[1], *b = in[2];
  tensor *y = out[0];
  char *cur = ws;
  int64_t elem = x->dtype == INFER_DTYPE_FLOAT64 ? 8 : 4;
  void *col = ws_take(&cur, d.mg * d.kernel * win_out_count(&d.g), elem);
  switch (x->dtype) {
    case INFER_DTYPE_FLOAT32:
      convt_core_f32(&d, x->data, w->data, b ? b->data : NULL, y->data, col);
      return INFER_OK;
    case INFER_DTYPE_FLOAT64:
      convt_core_f64(&d, x->data, w->data, b ? b->data : NULL, y->data, col);
      return INFER_OK;
    default: {
      int64_t nx = dims_count(x->rank, x->dims), nw = dims_count(w->rank, w->dims);
      int64_t nb = b ? b->dims[0] : 0, ny = dims_count(y->rank, y->dims);
      float *xs = ws_take(&cur, nx, 4), *wsf = ws_take(&cur, nw, 4);
      float *bs = ws_take(&cur, nb, 4), *ys = ws_take(&cur, ny, 4);
      stage_to_f32(x->data, x->dtype, nx, xs);
      stage_to_f32(w->data, w->dtype, nw, wsf);
      if (b) stage_to_f32(b->data, b->dtype, nb, bs);
      convt_core_f32(&d, xs, wsf, b ? bs : NULL, ys, col);
      stage_from_f32(ys, y->dtype, ny, y->data);
      return INFER_OK;
    }
  }
}

const op_desc op_conv = {.name = "Conv",
                         .domain = "",
                         .since = 1,
                         .until = OP_OPSET_MAX,
                         .min_inputs = 2,
                         .max_inputs = 3,
                         .min_outputs = 1,
                         .max_outputs = 1,
                         .attrs = conv_attr_names,
                         .parse = conv_parse,
                         .infer = conv_infer,
                         .run = conv_run,
                         .workspace = conv_workspace};

const op_desc op_conv_transpose = {.name = "ConvTranspose",
                                   .domain = "",
                                   .since = 1,
                                   .until = OP_OPSET_MAX,
                                   .min_inputs = 2,
                                   .max_inputs = 3,
                                   .min_outputs = 1,
                                   .max_outputs = 1,
                                   .attrs = convt_attr_names,
                                   .parse = convt_parse,
                                   .infer = convt_infer,
                                   .run = convt_run,
                                   .workspace = convt_workspace};


