/* conv_util.c: sliding-window attributes and geometry, im2col/col2im, staging. */
#include "conv_util.h"

#include <string.h>

#include "../core/tensor.h"

static infer_status read_ints(const node *n, const char *op, const char *name, int64_t *dst,
                              int cap, int *count, int64_t min_value) {
  const int64_t *v;
  int c;
  TRY(attr_get_ints(n, name, &v, &c));
  *count = c;
  if (c < 0) return INFER_OK;
  if (c > cap)
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "%s: attribute '%s' has %d entries; at most %d spatial dims are supported",
                      op, name, c, WIN_MAX_SPATIAL);
  for (int i = 0; i < c; i++) {
    if (v[i] < min_value)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: attribute '%s'[%d] = %lld must be >= %lld",
                        op, name, i, (long long)v[i], (long long)min_value);
    dst[i] = v[i];
  }
  return INFER_OK;
}

infer_status win_attrs_parse(const node *n, const char *op, win_attrs *w) {
  memset(w, 0, sizeof *w);
  const char *ap;
  TRY(attr_get_string(n, "auto_pad", "NOTSET", &ap));
  if (strcmp(ap, "NOTSET") == 0 || ap[0] == 0)
    w->auto_pad = AUTO_PAD_NOTSET;
  else if (strcmp(ap, "SAME_UPPER") == 0)
    w->auto_pad = AUTO_PAD_SAME_UPPER;
  else if (strcmp(ap, "SAME_LOWER") == 0)
    w->auto_pad = AUTO_PAD_SAME_LOWER;
  else if (strcmp(ap, "VALID") == 0)
    w->auto_pad = AUTO_PAD_VALID;
  else
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: attribute 'auto_pad' has unknown value '%s'",
                      op, ap);
  TRY(read_ints(n, op, "kernel_shape", w->kernel, WIN_MAX_SPATIAL, &w->n_kernel, 1));
  TRY(read_ints(n, op, "strides", w->strides, WIN_MAX_SPATIAL, &w->n_strides, 1));
  TRY(read_ints(n, op, "dilations", w->dilations, WIN_MAX_SPATIAL, &w->n_dilations, 1));
  TRY(read_ints(n, op, "pads", w->pads, 2 * WIN_MAX_SPATIAL, &w->n_pads, 0));
  return INFER_OK;
}

static infer_status check_count(const char *op, const char *name, int count, int want) {
  if (count >= 0 && count != want)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "%s: attribute '%s' has %d entries, the input has %d spatial dims needing %d",
                      op, name, count, want / (strcmp(name, "pads") == 0 ? 2 : 1), want);
  return INFER_OK;
}

infer_status win_geom_forward(const win_attrs *w, int nsp, const int64_t *in, const int64_t *kernel,
                              bool ceil_mode, const char *op, win_geom *g) {
  if (nsp < 1 || nsp > WIN_MAX_SPATIAL)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: %d spatial dims (supported: 1 to %d)", op, nsp,
                      WIN_MAX_SPATIAL);
  TRY(check_count(op, "strides", w->n_strides, nsp));
  TRY(check_count(op, "dilations", w->n_dilations, nsp));
  TRY(check_count(op, "pads", w->n_pads, 2 * nsp));
  memset(g, 0, sizeof *g);
  g->nsp = nsp;
  for (int j = 0; j < 3; j++) g->in[j] = g->k[j] = g->s[j] = g->d[j] = g->out[j] = 1;
  int off = 3 - nsp;
  for (int i = 0; i < nsp; i++) {
    int j = off + i;
    int64_t x = in[i], k = kernel[i];
    int64_t s = w->n_strides > 0 ? w->strides[i] : 1;
    int64_t d = w->n_dilations > 0 ? w->dilations[i] : 1;
    if (x < 0 || k < 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: spatial dim %d: input %lld, kernel %lld", op,
                        i, (long long)x, (long long)k);
    if (k > INT64_MAX / 4 / d || x > INT64_MAX / 4 || s > INT64_MAX / 4)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: spatial dim %d is too large", op, i);
    int64_t ek = (k - 1) * d + 1, pb = 0, pe = 0, out;
    switch (w->auto_pad) {
      case AUTO_PAD_SAME_UPPER:
      case AUTO_PAD_SAME_LOWER: {
        out = (x + s - 1) / s;
        int64_t total = (out - 1) * s + ek - x;
        if (total < 0) total = 0;
        if (w->auto_pad == AUTO_PAD_SAME_UPPER) {
          pb = total / 2;
          pe = total - pb;
        } else {
          pe = total / 2;
          pb = total - pe;
        }
        break;
      }
      case AUTO_PAD_VALID:
      case AUTO_PAD_NOTSET:
      default: {
        if (w->auto_pad == AUTO_PAD_NOTSET && w->n_pads > 0) {
          pb = w->pads[i];
          pe = w->pads[i + nsp];
          if (pb > INT64_MAX / 4 || pe > INT64_MAX / 4)
            return infer_fail(INFER_ERR_INVALID_MODEL, "%s: pads too large", op);
        }
        int64_t num = x + pb + pe - ek;
        if (num < 0)
          return infer_fail(INFER_ERR_INVALID_MODEL,
                            "%s: spatial dim %d: input %lld plus pads %lld+%lld is smaller than "
                            "the dilated kernel %lld",
                            op, i, (long long)x, (long long)pb, (long long)pe, (long long)ek);
        if (ceil_mode && w->auto_pad == AUTO_PAD_NOTSET) {
          out = (num + s - 1) / s + 1;
          /* the last window must start inside the input or the left padding */
          if ((out - 1) * s >= x + pb) out--;
        } else {
          out = num / s + 1;
        }
        break;
      }
    }
    if (out < 1)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: spatial dim %d gives output size %lld", op, i,
                        (long long)out);
    g->in[j] = x;
    g->k[j] = k;
    g->s[j] = s;
    g->d[j] = d;
    g->pb[j] = pb;
    g->pe[j] = pe;
    g->out[j] = out;
  }
  return INFER_OK;
}

int64_t win_in_count(const win_geom *g) { return dims_count(3, g->in); }
int64_t win_out_count(const win_geom *g) { return dims_count(3, g->out); }
int64_t win_kernel_count(const win_geom *g) { return dims_count(3, g->k); }

/* One template for both element types: the body only moves and adds elements. */
#define DEFINE_IM2COL(NAME, T)                                                      \
  void NAME(const T *x, int64_t channels, const win_geom *g, T *col) {              \
    const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];                      \
    const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];                   \
    const int64_t on = OD * OH * OW;                                                \
    T *row = col;                                                                   \
    for (int64_t c = 0; c < channels; c++) {                                        \
      const T *xc = x + c * ID * IH * IW;                                           \
      for (int64_t kd = 0; kd < g->k[0]; kd++)                                      \
        for (int64_t kh = 0; kh < g->k[1]; kh++)                                    \
          for (int64_t kw = 0; kw < g->k[2]; kw++, row += on) {                     \
            int64_t w0 = kw * g->d[2] - g->pb[2], lo, hi;                           \
            win_range(w0, g->s[2], IW, OW, &lo, &hi);                               \
            T *dst = row;                                                           \
            for (int64_t od = 0; od < OD; od++) {                                   \
              int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];                  \
              for (int64_t oh = 0; oh < OH; oh++, dst += OW) {                      \
                int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];                \
                if (id < 0 || id >= ID || ih < 0 || ih >= IH) {                     \
                  memset(dst, 0, (size_t)OW * sizeof(T));                           \
                  continue;                                                         \
                }                                                                   \
                const T *src = xc + (id * IH + ih) * IW + w0;                       \
                for (int64_t ow = 0; ow < lo; ow++) dst[ow] = 0;                    \
                if (g->s[2] == 1)                                                   \
                  memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof(T));        \
                else                                                                \
                  for (int64_t ow = lo; ow < hi; ow++) dst[ow] = src[ow * g->s[2]]; \
                for (int64_t ow = hi; ow < OW; ow++) dst[ow] = 0;                   \
              }                                                                     \
            }                                                                       \
          }                                                                         \
    }                                                                               \
  }

DEFINE_IM2COL(im2col_f32, float)
DEFINE_IM2COL(im2col_f64, double)

#define DEFINE_COL2IM(NAME, T)                                                     \
  void NAME(const T *col, int64_t channels, const win_geom *g, T *y) {             \
    const int64_t ID = g->in[0], IH = g->in[1], IW = g->in[2];                     \
    const int64_t OD = g->out[0], OH = g->out[1], OW = g->out[2];                  \
    const int64_t on = OD * OH * OW;                                               \
    const T *row = col;                                                            \
    for (int64_t c = 0; c < channels; c++) {                                       \
      T *yc = y + c * ID * IH * IW;                                                \
      for (int64_t kd = 0; kd < g->k[0]; kd++)                                     \
        for (int64_t kh = 0; kh < g->k[1]; kh++)                                   \
          for (int64_t kw = 0; kw < g->k[2]; kw++, row += on) {                    \
            int64_t w0 = kw * g->d[2] - g->pb[2], lo, hi;                          \
            win_range(w0, g->s[2], IW, OW, &lo, &hi);                              \
            const T *src = row;                                                    \
            for (int64_t od = 0; od < OD; od++) {                                  \
              int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];                 \
              for (int64_t oh = 0; oh < OH; oh++, src += OW) {                     \
                int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];               \
                if (id < 0 || id >= ID || ih < 0 || ih >= IH) continue;            \
                T *dst = yc + (id * IH + ih) * IW + w0;                            \
                for (int64_t ow = lo; ow < hi; ow++) dst[ow * g->s[2]] += src[ow]; \
              }                                                                    \
            }                                                                      \
          }                                                                        \
    }                                                                              \
  }

DEFINE_COL2IM(col2im_f32, float)
DEFINE_COL2IM(col2im_f64, double)

void ref_dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
               const double *a, int64_t lda, const double *b, int64_t ldb, double beta, double *c,
               int64_t ldc) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double acc = 0;
      for (int64_t p = 0; p < k; p++)
        acc += (trans_a ? a[p * lda + i] : a[i * lda + p]) *
               (trans_b ? b[j * ldb + p] : b[p * ldb + j]);
      double *cij = c + i * ldc + j;
      *cij = alpha * acc + (beta == 0 ? 0 : beta * *cij);
    }
}

void stage_to_f32(const void *src, infer_dtype dt, int64_t count, float *dst) {
  const uint16_t *h = src;
  switch (dt) {
    case INFER_DTYPE_FLOAT16:
      for (int64_t i = 0; i < count; i++) dst[i] = half_to_float(h[i]);
      break;
    case INFER_DTYPE_BFLOAT16:
      for (int64_t i = 0; i < count; i++) dst[i] = bf16_to_float(h[i]);
      break;
    case INFER_DTYPE_FLOAT64:
      for (int64_t i = 0; i < count; i++) dst[i] = (float)((const double *)src)[i];
      break;
    default:
      memcpy(dst, src, (size_t)count * sizeof(float));
      break;
  }
}

void stage_from_f32(const float *src, infer_dtype dt, int64_t count, void *dst) {
  uint16_t *h = dst;
  switch (dt) {
    case INFER_DTYPE_FLOAT16:
      for (int64_t i = 0; i < count; i++) h[i] = float_to_half(src[i]);
      break;
    case INFER_DTYPE_BFLOAT16:
      for (int64_t i = 0; i < count; i++) h[i] = float_to_bf16(src[i]);
      break;
    case INFER_DTYPE_FLOAT64:
      for (int64_t i = 0; i < count; i++) ((double *)dst)[i] = src[i];
      break;
    default:
      memcpy(dst, src, (size_t)count * sizeof(float));
      break;
  }
}

bool ws_add(int64_t *total, int64_t count, int64_t elem) {
  int64_t b;
  if (*total < 0 || !size_mul(count, elem, &b) || !size_add(b, 63, &b)) {
    *total = -1;
    return false;
  }
  b &= ~(int64_t)63;
  if (!size_add(*total, b, total)) {
    *total = -1;
    return false;
  }
  return true;
}

void *ws_take(char **cursor, int64_t count, int64_t elem) {
  void *p = *cursor;
  int64_t b = (count * elem + 63) & ~(int64_t)63;
  /* a step that needs no workspace gets NULL, and NULL + 0 is undefined in C */
  if (b > 0) *cursor += b;
  return p;
}

const int perm_nhwc_to_nchw[4] = {0, 3, 1, 2}, perm_nchw_to_nhwc[4] = {0, 2, 3, 1};

void permute4(const void *src, const int64_t *sd, const int *perm, void *dst, size_t es) {
  int64_t dd[4], sst[4];
  for (int i = 0; i < 4; i++) dd[i] = sd[perm[i]];
  dims_strides(4, sd, sst);
  /* nested loops over the destination in order, source offsets by strides: no
   * division per element (this runs over every conv weight at a GPU build) */
  int64_t s0 = sst[perm[0]], s1 = sst[perm[1]], s2 = sst[perm[2]], s3 = sst[perm[3]];
  char *d = dst;
  const char *sp = src;
  for (int64_t a = 0; a < dd[0]; a++)
    for (int64_t b = 0; b < dd[1]; b++)
      for (int64_t c = 0; c < dd[2]; c++) {
        const char *row = sp + (a * s0 + b * s1 + c * s2) * (int64_t)es;
        if (es == 4)
          for (int64_t k = 0; k < dd[3]; k++, d += 4) memcpy(d, row + k * s3 * 4, 4);
        else
          for (int64_t k = 0; k < dd[3]; k++, d += es) memcpy(d, row + k * s3 * (int64_t)es, es);
      }
}
