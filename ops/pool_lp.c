/* pool_lp.c: LpPool (1, 2, 11, 18, 22): y = (sum over the window of |x|^p)^(1/p),
 * 1-D to 3-D, with Conv's window attributes (conv_util.h; ceil_mode and dilations
 * exist from opset 18). Padding holds zeros, so it adds nothing to the sum. p is a
 * float attribute at opset 1 and an int from 2 (default 2 in both). Sums in double. */
#include <stdlib.h>

#include "conv_util.h"
#include "reduce_util.h"

typedef struct lp_pool_params {
  win_attrs w;
  int64_t ceil_mode;
  double p;
} lp_pool_params;

static const char *const lp_pool_attrs[] = {"auto_pad", "ceil_mode", "dilations", "kernel_shape",
                                            "p",        "pads",      "strides",   NULL};

static infer_status lp_pool_parse(const node *n, void **params) {
  lp_pool_params t;
  TRY(win_attrs_parse(n, "LpPool", &t.w));
  if (t.w.n_kernel < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "LpPool: attribute 'kernel_shape' is required");
  if (n->opset < 18 && (node_attr(n, "ceil_mode") || node_attr(n, "dilations")))
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "LpPool: ceil_mode and dilations do not exist before opset 18");
  TRY(attr_get_int(n, "ceil_mode", 0, &t.ceil_mode));
  if (t.ceil_mode != 0 && t.ceil_mode != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "LpPool: ceil_mode = %lld must be 0 or 1",
                      (long long)t.ceil_mode);
  if (n->opset < 2) {
    float pf;
    TRY(attr_get_float(n, "p", 2.0f, &pf));
    t.p = pf;
  } else {
    int64_t pi;
    TRY(attr_get_int(n, "p", 2, &pi));
    t.p = (double)pi;
  }
  if (!(t.p > 0) || !isfinite(t.p))
    return infer_fail(INFER_ERR_INVALID_MODEL, "LpPool: p = %g must be positive", t.p);
  lp_pool_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "LpPool: out of memory");
  *p = t;
  *params = p;
  return INFER_OK;
}

static infer_status lp_pool_geom(const lp_pool_params *p, const tensor *x, win_geom *g) {
  char sb[96];
  if (x->rank < 3 || x->rank - 2 > WIN_MAX_SPATIAL)
    return infer_fail(x->rank < 3 ? INFER_ERR_INVALID_MODEL : INFER_ERR_UNSUPPORTED,
                      "LpPool: input %s must be N x C x 1 to 3 spatial dims",
                      dims_format(x->rank, x->dims, sb, sizeof sb));
  int nsp = x->rank - 2;
  if (p->w.n_kernel != nsp)
    return infer_fail(INFER_ERR_INVALID_MODEL, "LpPool: kernel_shape has %d entries for %d "
                      "spatial dims", p->w.n_kernel, nsp);
  return win_geom_forward(&p->w, nsp, x->dims + 2, p->w.kernel, p->ceil_mode != 0, "LpPool", g);
}

static infer_status lp_pool_infer(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out) {
  const tensor *x = in[0];
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "LpPool: dtype %s is not supported",
                      infer_dtype_name(x->dtype));
  for (int i = 0; i < x->rank; i++)
    if (x->dims[i] < 0) return OP_NEEDS_DATA;
  win_geom g;
  TRY(lp_pool_geom(params, x, &g));
  tensor *y = out[0];
  y->dtype = x->dtype;
  y->rank = x->rank;
  y->dims[0] = x->dims[0];
  y->dims[1] = x->dims[1];
  for (int i = 0; i < g.nsp; i++) y->dims[2 + i] = g.out[3 - g.nsp + i];
  if (tensor_nbytes(y) < 0) return infer_fail(INFER_ERR_INVALID_MODEL, "LpPool: output too large");
  return INFER_OK;
}

static infer_status lp_pool_run(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out, void *ws) {
  const lp_pool_params *p = params;
  const tensor *x = in[0];
  tensor *y = out[0];
  win_geom g;
  TRY(lp_pool_geom(p, x, &g));
  const int64_t ID = g.in[0], IH = g.in[1], IW = g.in[2], in_sz = ID * IH * IW;
  int64_t planes = x->dims[0] * x->dims[1], yi = 0;
  for (int64_t pl = 0; pl < planes; pl++)
    for (int64_t od = 0; od < g.out[0]; od++) {
      int64_t d0 = od * g.s[0] - g.pb[0], dlo, dhi;
      win_range(d0, g.d[0], ID, g.k[0], &dlo, &dhi);
      for (int64_t oh = 0; oh < g.out[1]; oh++) {
        int64_t h0 = oh * g.s[1] - g.pb[1], hlo, hhi;
        win_range(h0, g.d[1], IH, g.k[1], &hlo, &hhi);
        for (int64_t ow = 0; ow < g.out[2]; ow++) {
          int64_t w0 = ow * g.s[2] - g.pb[2], wlo, whi;
          win_range(w0, g.d[2], IW, g.k[2], &wlo, &whi);
          double s = 0;
          for (int64_t kd = dlo; kd < dhi; kd++)
            for (int64_t kh = hlo; kh < hhi; kh++) {
              int64_t row = pl * in_sz + ((d0 + kd * g.d[0]) * IH + h0 + kh * g.d[1]) * IW;
              for (int64_t kw = wlo; kw < whi; kw++) {
                double v = fabs(nr_load(x, row + w0 + kw * g.d[2]));
                s += p->p == 2 ? v * v : p->p == 1 ? v : pow(v, p->p);
              }
            }
          nr_store(y, yi++, p->p == 2 ? sqrt(s) : p->p == 1 ? s : pow(s, 1.0 / p->p));
        }
      }
    }
  return INFER_OK;
}

const op_desc op_lp_pool = {.name = "LpPool",
                            .domain = "",
                            .since = 1,
                            .until = OP_OPSET_MAX,
                            .min_inputs = 1,
                            .max_inputs = 1,
                            .min_outputs = 1,
                            .max_outputs = 1,
                            .attrs = lp_pool_attrs,
                            .parse = lp_pool_parse,
                            .infer = lp_pool_infer,
                            .run = lp_pool_run};
