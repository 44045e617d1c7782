/* conv_deform.c: DeformConv (opsets 19, 22), 2-D, the deformable convolution of DCN
 * detectors, CPU reference: every kernel tap samples X (bilinearly, zero outside) at its
 * regular position moved by a learned offset, weighted by an optional mask:
 *   y[n, o, p] = B[o] + sum_{c in o's group, tap k} W[o, c, k] m[n, g, k, p]
 *                X[n, c](p * stride - pad + k * dilation + offset[n, g, k, p])
 * with g = c's offset group; offsets are (dy, dx) pairs per tap, [N, G * kH * kW * 2,
 * oH, oW], the mask [N, G * kH * kW, oH, oW]. In double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

typedef struct deform_params {
  int64_t group, offset_group;
  int64_t kernel[2], dil[2], stride[2], pads[4];
  bool has_kernel;
} deform_params;

static const char *const deform_attrs[] = {"dilations", "group", "kernel_shape", "offset_group",
                                           "pads", "strides", NULL};

static infer_status ints2(const node *n, const char *name, int count, int64_t def, int64_t *v,
                          bool *present) {
  const int64_t *a;
  int c;
  TRY(attr_get_ints(n, name, &a, &c));
  if (present) *present = c >= 0;
  if (c >= 0 && c != count)
    return infer_fail(INFER_ERR_UNSUPPORTED, "DeformConv: %s with %d values (2-D only)", name, c);
  for (int i = 0; i < count; i++) v[i] = c >= 0 ? a[i] : def;
  return INFER_OK;
}

static infer_status deform_parse(const node *n, void **params) {
  deform_params v;
  TRY(attr_get_int(n, "group", 1, &v.group));
  TRY(attr_get_int(n, "offset_group", 1, &v.offset_group));
  TRY(ints2(n, "kernel_shape", 2, 0, v.kernel, &v.has_kernel));
  TRY(ints2(n, "dilations", 2, 1, v.dil, NULL));
  TRY(ints2(n, "strides", 2, 1, v.stride, NULL));
  TRY(ints2(n, "pads", 4, 0, v.pads, NULL));
  if (v.group < 1 || v.offset_group < 1 || v.dil[0] < 1 || v.dil[1] < 1 || v.stride[0] < 1 ||
      v.stride[1] < 1 || v.pads[0] < 0 || v.pads[1] < 0 || v.pads[2] < 0 || v.pads[3] < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "DeformConv: group, offset_group, dilations and "
                      "strides must be positive, pads non-negative");
  deform_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "DeformConv: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

typedef struct deform_dims {
  int64_t n, c, h, w, oc, cg, kh, kw, oh, ow;
} deform_dims;

static infer_status deform_dims_of(const node *n, const deform_params *p, const tensor *const *in,
                                   deform_dims *d) {
  const tensor *x = in[0], *w = in[1], *off = in[2];
  const tensor *b = n->n_inputs > 3 ? in[3] : NULL, *m = n->n_inputs > 4 ? in[4] : NULL;
  if (!dtype_is_float(x->dtype) || w->dtype != x->dtype || off->dtype != x->dtype)
    return infer_fail(INFER_ERR_UNSUPPORTED, "DeformConv: X, W and offset must share a float dtype");
  if (x->rank != 4 || w->rank != 4 || off->rank != 4)
    return infer_fail(INFER_ERR_UNSUPPORTED, "DeformConv: 2-D only (X, W, offset of rank 4)");
  d->n = x->dims[0], d->c = x->dims[1], d->h = x->dims[2], d->w = x->dims[3];
  d->oc = w->dims[0], d->cg = w->dims[1];
  d->kh = w->dims[2], d->kw = w->dims[3];
  if (p->has_kernel && (p->kernel[0] != d->kh || p->kernel[1] != d->kw))
    return infer_fail(INFER_ERR_INVALID_MODEL, "DeformConv: kernel_shape disagrees with W");
  if (d->cg * p->group != d->c || d->oc % p->group || d->c % p->offset_group)
    return infer_fail(INFER_ERR_INVALID_MODEL, "DeformConv: channels (%lld in, %lld out, %lld a "
                      "group) do not fit group %lld / offset_group %lld", (long long)d->c,
                      (long long)d->oc, (long long)d->cg, (long long)p->group,
                      (long long)p->offset_group);
  d->oh = (d->h + p->pads[0] + p->pads[2] - ((d->kh - 1) * p->dil[0] + 1)) / p->stride[0] + 1;
  d->ow = (d->w + p->pads[1] + p->pads[3] - ((d->kw - 1) * p->dil[1] + 1)) / p->stride[1] + 1;
  const int64_t taps = p->offset_group * d->kh * d->kw;
  if (d->oh < 1 || d->ow < 1 || off->dims[0] != d->n || off->dims[1] != 2 * taps ||
      off->dims[2] != d->oh || off->dims[3] != d->ow)
    return infer_fail(INFER_ERR_INVALID_MODEL, "DeformConv: offset must be [%lld, %lld, %lld, %lld]",
                      (long long)d->n, (long long)(2 * taps), (long long)d->oh, (long long)d->ow);
  if (b && (b->rank != 1 || b->dims[0] != d->oc || b->dtype != x->dtype))
    return infer_fail(INFER_ERR_INVALID_MODEL, "DeformConv: B must be [%lld]", (long long)d->oc);
  if (m && (m->rank != 4 || m->dims[0] != d->n || m->dims[1] != taps || m->dims[2] != d->oh ||
            m->dims[3] != d->ow || m->dtype != x->dtype))
    return infer_fail(INFER_ERR_INVALID_MODEL, "DeformConv: mask must be [%lld, %lld, %lld, %lld]",
                      (long long)d->n, (long long)taps, (long long)d->oh, (long long)d->ow);
  return INFER_OK;
}

static infer_status deform_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  deform_dims d = {0};
  TRY(deform_dims_of(n, params, in, &d));
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = 4;
  const int64_t dims[4] = {d.n, d.oc, d.oh, d.ow};
  memcpy(out[0]->dims, dims, sizeof dims);
  return INFER_OK;
}

/* X[n, c] at (y, x), bilinear, zero outside the image. */
static double sample(const tensor *x, int64_t base, int64_t h, int64_t w, double y, double xx) {
  if (!(y > -1 && y < (double)h && xx > -1 && xx < (double)w)) return 0;
  const double y0 = floor(y), x0 = floor(xx);
  const double fy = y - y0, fx = xx - x0;
  double v = 0;
  for (int dy = 0; dy < 2; dy++)
    for (int dx = 0; dx < 2; dx++) {
      const int64_t yy = (int64_t)y0 + dy, xq = (int64_t)x0 + dx;
      if (yy < 0 || yy >= h || xq < 0 || xq >= w) continue;
      v += (dy ? fy : 1 - fy) * (dx ? fx : 1 - fx) * tensor_get_f64(x, base + yy * w + xq);
    }
  return v;
}

static infer_status deform_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  (void)ws;
  const deform_params *p = params;
  deform_dims d = {0};
  TRY(deform_dims_of(n, p, in, &d));
  const tensor *x = in[0], *w = in[1], *off = in[2];
  const tensor *b = n->n_inputs > 3 ? in[3] : NULL, *m = n->n_inputs > 4 ? in[4] : NULL;
  const int64_t ocg = d.oc / p->group, cpo = d.c / p->offset_group, taps = d.kh * d.kw;
  for (int64_t bn = 0; bn < d.n; bn++)
    for (int64_t o = 0; o < d.oc; o++) {
      const int64_t g = o / ocg;
      for (int64_t i = 0; i < d.oh; i++)
        for (int64_t j = 0; j < d.ow; j++) {
          double acc = b ? tensor_get_f64(b, o) : 0;
          for (int64_t cl = 0; cl < d.cg; cl++) {
            const int64_t c = g * d.cg + cl, og = c / cpo;
            for (int64_t ki = 0; ki < d.kh; ki++)
              for (int64_t kj = 0; kj < d.kw; kj++) {
                const int64_t k = (og * d.kh + ki) * d.kw + kj, pix = i * d.ow + j;
                const double dy = tensor_get_f64(off, ((bn * 2 * p->offset_group * taps + 2 * k) * d.oh * d.ow) + pix);
                const double dx = tensor_get_f64(off, ((bn * 2 * p->offset_group * taps + 2 * k + 1) * d.oh * d.ow) + pix);
                const double mk = m ? tensor_get_f64(m, (bn * p->offset_group * taps + k) * d.oh * d.ow + pix) : 1;
                const double y = (double)(i * p->stride[0] - p->pads[0] + ki * p->dil[0]) + dy;
                const double xx = (double)(j * p->stride[1] - p->pads[1] + kj * p->dil[1]) + dx;
                const double v = sample(x, (bn * d.c + c) * d.h * d.w, d.h, d.w, y, xx);
                acc += tensor_get_f64(w, ((o * d.cg + cl) * d.kh + ki) * d.kw + kj) * v * mk;
              }
          }
          tensor_set_f64(out[0], ((bn * d.oc + o) * d.oh + i) * d.ow + j, acc);
        }
    }
  return INFER_OK;
}

const op_desc op_deform_conv = {.name = "DeformConv",
                                .domain = "",
                                .since = 19,
                                .until = OP_OPSET_MAX,
                                .min_inputs = 3,
                                .max_inputs = 5,
                                .min_outputs = 1,
                                .max_outputs = 1,
                                .attrs = deform_attrs,
                                .parse = deform_parse,
                                .infer = deform_infer,
                                .run = deform_run};
