/* image_preprocess.c: resize, crop and normalize as torchvision on PIL images (see
 * image_preprocess.h for the exact rules these follow). */
#include "image_preprocess.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool image_prep_preset(const char *name, image_prep *out) {
  static const float imagenet_mean[3] = {0.485f, 0.456f, 0.406f};
  static const float imagenet_std[3] = {0.229f, 0.224f, 0.225f};
  memset(out, 0, sizeof *out);
  if (strcmp(name, "imagenet") == 0 || strcmp(name, "inception") == 0) {
    bool inception = name[1] == 'n' && name[2] == 'c';
    out->resize_height = inception ? 342 : 256;
    out->crop_height = out->crop_width = inception ? 299 : 224;
    memcpy(out->mean, imagenet_mean, sizeof out->mean);
    memcpy(out->std, imagenet_std, sizeof out->std);
    return true;
  }
  if (strcmp(name, "none") == 0) {
    for (int c = 0; c < 3; c++) out->std[c] = 1.0f;
    return true;
  }
  return false;
}

const char *image_prep_preset_names(void) { return "imagenet, inception, none"; }

void image_resize_shorter_size(int w, int h, int shorter, int *out_w, int *out_h) {
  /* torchvision: new_long = int(requested * long / short), a true division of the
   * integers rounded once to double, then truncated */
  int s = w <= h ? w : h, l = w <= h ? h : w;
  double scaled = (double)shorter * (double)l / (double)s;
  int new_long = scaled >= 2147483647.0 ? 2147483647 : (int)scaled;
  if (w <= h) {
    *out_w = shorter;
    *out_h = new_long;
  } else {
    *out_w = new_long;
    *out_h = shorter;
  }
}

void image_prep_output_size(const image_prep *p, int in_w, int in_h, int *out_w, int *out_h) {
  int w = in_w, h = in_h;
  if (p->resize_height > 0 && p->resize_width > 0) {
    w = p->resize_width;
    h = p->resize_height;
  } else if (p->resize_height > 0) {
    image_resize_shorter_size(in_w, in_h, p->resize_height, &w, &h);
  }
  if (p->crop_height > 0) {
    w = p->crop_width;
    h = p->crop_height;
  }
  *out_w = w;
  *out_h = h;
}

/* ---- PIL-compatible bilinear resampling ---------------------------------------------
 * One pass maps in_size samples to out_size: output i is centred at (i + 0.5) * scale
 * in input coordinates and takes the inputs within `support` of it, weighted by a
 * triangle of half-width max(scale, 1). The weights are computed in double, normalized
 * to sum 1, and rounded to fixed point with WEIGHT_BITS fraction bits; a sum of
 * products is rounded by adding half a unit and shifting. This is the arithmetic of
 * PIL's Resample.c, which decides the exact bytes. */
enum { WEIGHT_BITS = 22 };

typedef struct resample_taps {
  int taps;      /* weights per output sample (some trailing ones 0) */
  int *first;    /* first input sample of output i */
  int *count;    /* inputs used by output i */
  int32_t *weight; /* out_size x taps */
} resample_taps;

static void taps_free(resample_taps *t) {
  free(t->first);
  free(t->count);
  free(t->weight);
  memset(t, 0, sizeof *t);
}

static double triangle(double x) {
  if (x < 0.0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

static bool taps_make(int in_size, int out_size, resample_taps *t) {
  memset(t, 0, sizeof *t);
  double scale = (double)in_size / out_size;
  double filter_scale = scale < 1.0 ? 1.0 : scale; /* widen only when shrinking */
  double support = 1.0 * filter_scale;
  t->taps = (int)ceil(support) * 2 + 1;
  t->first = malloc(sizeof(int) * (size_t)out_size);
  t->count = malloc(sizeof(int) * (size_t)out_size);
  t->weight = calloc((size_t)out_size * (size_t)t->taps, sizeof(int32_t));
  double *w = malloc(sizeof(double) * (size_t)t->taps);
  if (!t->first || !t->count || !t->weight || !w) {
    free(w);
    taps_free(t);
    return false;
  }
  double inv = 1.0 / filter_scale;
  for (int i = 0; i < out_size; i++) {
    double center = (i + 0.5) * scale;
    /* truncation toward zero as PIL's (int) casts; both ends clamped to the input */
    int lo = (int)(center - support + 0.5);
    if (lo < 0) lo = 0;
    int hi = (int)(center + support + 0.5);
    if (hi > in_size) hi = in_size;
    int n = hi - lo;
    double sum = 0.0;
    for (int k = 0; k < n; k++) {
      w[k] = triangle(((double)(k + lo) - center + 0.5) * inv);
      sum += w[k];
    }
    int32_t *dst = t->weight + (size_t)i * (size_t)t->taps;
    for (int k = 0; k < n; k++) {
      double v = sum != 0.0 ? w[k] / sum : w[k];
      dst[k] = (int32_t)(v < 0 ? -0.5 + v * (1 << WEIGHT_BITS) : 0.5 + v * (1 << WEIGHT_BITS));
    }
    t->first[i] = lo;
    t->count[i] = n;
  }
  free(w);
  return true;
}

static uint8_t fixed_to_u8(int32_t acc) {
  int32_t v = acc >> WEIGHT_BITS;
  return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Rows [row0, row0 + out->height) of in, resampled horizontally into out. */
static void resample_rows(const image_rgb *in, int row0, const resample_taps *t,
                          image_rgb *out) {
  for (int y = 0; y < out->height; y++) {
    const uint8_t *src = in->pixels + (size_t)(y + row0) * (size_t)in->width * 3;
    uint8_t *dst = out->pixels + (size_t)y * (size_t)out->width * 3;
    for (int x = 0; x < out->width; x++) {
      const int32_t *w = t->weight + (size_t)x * (size_t)t->taps;
      const uint8_t *p = src + (size_t)t->first[x] * 3;
      int32_t r = 1 << (WEIGHT_BITS - 1), g = r, b = r;
      for (int k = 0; k < t->count[x]; k++) {
        r += p[3 * k + 0] * w[k];
        g += p[3 * k + 1] * w[k];
        b += p[3 * k + 2] * w[k];
      }
      dst[3 * x + 0] = fixed_to_u8(r);
      dst[3 * x + 1] = fixed_to_u8(g);
      dst[3 * x + 2] = fixed_to_u8(b);
    }
  }
}

/* in resampled vertically into out (same width); taps index rows of in from row0. */
static void resample_columns(const image_rgb *in, int row0, const resample_taps *t,
                             image_rgb *out) {
  size_t stride = (size_t)in->width * 3;
  for (int y = 0; y < out->height; y++) {
    const int32_t *w = t->weight + (size_t)y * (size_t)t->taps;
    const uint8_t *src = in->pixels + (size_t)(t->first[y] - row0) * stride;
    uint8_t *dst = out->pixels + (size_t)y * stride;
    for (size_t x = 0; x < stride; x++) {
      int32_t acc = 1 << (WEIGHT_BITS - 1);
      for (int k = 0; k < t->count[y]; k++) acc += src[(size_t)k * stride + x] * w[k];
      dst[x] = fixed_to_u8(acc);
    }
  }
}

static bool image_alloc(image_rgb *im, int w, int h, char *err, size_t cap) {
  memset(im, 0, sizeof *im);
  if (!image_size_allowed(w, h, err, cap)) return false;
  im->pixels = malloc((size_t)w * (size_t)h * 3);
  if (!im->pixels) {
    snprintf(err, cap, "out of memory for a %dx%d image", w, h);
    return false;
  }
  im->width = w;
  im->height = h;
  return true;
}

/* The caps of image_size_allowed for a size this file makes (it says which). */
static bool result_allowed(const char *what, int w, int h, char *err, size_t cap) {
  if (w > 0 && h > 0 && w <= IMAGE_MAX_SIDE && h <= IMAGE_MAX_SIDE &&
      (long long)w * h <= IMAGE_MAX_PIXELS)
    return true;
  snprintf(err, cap, "%s to %dx%d (width x height), the image would exceed what this tool "
           "handles (at most %d on a side and %lld pixels)", what, w, h, IMAGE_MAX_SIDE,
           (long long)IMAGE_MAX_PIXELS);
  return false;
}

bool image_resize_bilinear(const image_rgb *in, int out_w, int out_h, image_rgb *out,
                           char *err, size_t cap) {
  memset(out, 0, sizeof *out);
  if (!result_allowed("resized", out_w, out_h, err, cap)) return false;
  bool horizontal = out_w != in->width, vertical = out_h != in->height;
  resample_taps tv = {0}, th = {0};
  if (!taps_make(in->height, out_h, &tv)) goto oom;
  /* the horizontal pass covers only the input rows the vertical one reads */
  int row0 = tv.first[0];
  int row_end = tv.first[out_h - 1] + tv.count[out_h - 1];
  image_rgb mid = *in; /* a view of in until the horizontal pass replaces it */
  bool mid_owned = false;
  if (horizontal) {
    if (!taps_make(in->width, out_w, &th)) goto oom;
    if (!image_alloc(&mid, out_w, row_end - row0, err, cap)) goto fail;
    mid_owned = true;
    resample_rows(in, row0, &th, &mid);
    taps_free(&th);
  } else {
    row0 = 0;
  }
  if (vertical) {
    if (!image_alloc(out, mid.width, out_h, err, cap)) {
      if (mid_owned) image_rgb_clear(&mid);
      goto fail;
    }
    resample_columns(&mid, row0, &tv, out);
    if (mid_owned) image_rgb_clear(&mid);
  } else if (mid_owned) {
    *out = mid; /* rows row0.. are all of them: no vertical change means row0 == 0 */
  } else {
    if (!image_alloc(out, in->width, in->height, err, cap)) goto fail;
    memcpy(out->pixels, in->pixels, (size_t)in->width * (size_t)in->height * 3);
  }
  taps_free(&tv);
  return true;
oom:
  snprintf(err, cap, "out of memory resizing to %dx%d", out_w, out_h);
fail:
  taps_free(&tv);
  taps_free(&th);
  return false;
}

/* torchvision's int(round((size - crop) / 2.0)): Python rounds halves to even. */
static int crop_offset(int size, int crop) {
  int d = size - crop, k = d / 2;
  if ((d & 1) && (k & 1)) k++;
  return k;
}

bool image_center_crop(const image_rgb *in, int crop_w, int crop_h, image_rgb *out, char *err,
                       size_t cap) {
  memset(out, 0, sizeof *out);
  if (!result_allowed("cropped", crop_w, crop_h, err, cap) ||
      !image_alloc(out, crop_w, crop_h, err, cap))
    return false;
  /* per axis: a crop larger than the image pads it by (crop - size) // 2 before, and the
   * padded axis is then exactly the crop; a smaller one starts at crop_offset */
  int x0 = crop_w > in->width ? -((crop_w - in->width) / 2) : crop_offset(in->width, crop_w);
  int y0 = crop_h > in->height ? -((crop_h - in->height) / 2) : crop_offset(in->height, crop_h);
  memset(out->pixels, 0, (size_t)crop_w * (size_t)crop_h * 3);
  for (int y = 0; y < crop_h; y++) {
    int sy = y + y0;
    if (sy < 0 || sy >= in->height) continue;
    int xa = x0 < 0 ? -x0 : 0;                              /* first column inside */
    int xb = in->width - x0 < crop_w ? in->width - x0 : crop_w; /* one past the last */
    if (xb <= xa) continue;
    memcpy(out->pixels + ((size_t)y * crop_w + xa) * 3,
           in->pixels + ((size_t)sy * in->width + (size_t)(xa + x0)) * 3, (size_t)(xb - xa) * 3);
  }
  return true;
}

bool image_prep_geometry(const image_rgb *in, const image_prep *p, image_rgb *out, char *err,
                         size_t cap) {
  image_rgb resized = {0};
  const image_rgb *cur = in;
  if (p->resize_height > 0) {
    int w, h;
    if (p->resize_width > 0) {
      w = p->resize_width;
      h = p->resize_height;
    } else {
      image_resize_shorter_size(in->width, in->height, p->resize_height, &w, &h);
    }
    if (!image_resize_bilinear(in, w, h, &resized, err, cap)) return false;
    cur = &resized;
  }
  bool ok;
  if (p->crop_height > 0) {
    ok = image_center_crop(cur, p->crop_width, p->crop_height, out, err, cap);
  } else if (cur == &resized) {
    *out = resized;
    return true;
  } else {
    ok = image_alloc(out, in->width, in->height, err, cap);
    if (ok) memcpy(out->pixels, in->pixels, (size_t)in->width * (size_t)in->height * 3);
  }
  image_rgb_clear(&resized);
  return ok;
}

void image_to_chw(const image_rgb *im, const float mean[3], const float std[3], float *dst) {
  size_t plane = (size_t)im->width * (size_t)im->height;
  for (int c = 0; c < 3; c++) {
    float *d = dst + (size_t)c * plane;
    const uint8_t *s = im->pixels + c;
    /* the operations of ToTensor (div 255) and Normalize (sub, div), in float */
    for (size_t i = 0; i < plane; i++) d[i] = ((float)s[3 * i] / 255.0f - mean[c]) / std[c];
  }
}
