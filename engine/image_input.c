/* image_input.c: 8-bit image inputs (image_input.h): the option's setter, its check
 * against the model at build, the tensor callers feed, and the CPU's conversion. */
#include "image_input.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"

infer_status infer_options_set_input_image(infer_options *o, int index, int channels,
                                           const float *mean, const float *std) {
  if (!o) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_options_set_input_image: NULL options");
  if (index < 0)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_options_set_input_image: input index %d",
                      index);
  if (channels < 0 || channels > IMAGE_MAX_CHANNELS)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_options_set_input_image: input %d: %d "
                      "channels (1 to %d, or 0 to turn it off)", index, channels,
                      IMAGE_MAX_CHANNELS);
  image_request r = {.index = index, .channels = channels};
  for (int c = 0; c < channels; c++) {
    r.mean[c] = mean ? mean[c] : 0.0f;
    r.std[c] = std ? std[c] : 1.0f;
    if (!isfinite(r.mean[c]) || !isfinite(r.std[c]) || !(r.std[c] > 0))
      return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_options_set_input_image: input %d, "
                        "channel %d: mean %g, std %g (finite values, std > 0)", index, c,
                        (double)r.mean[c], (double)r.std[c]);
  }
  int at = -1;
  for (int i = 0; i < o->n_images; i++)
    if (o->images[i].index == index) at = i;
  if (channels == 0) { /* off: drop the entry */
    if (at >= 0) o->images[at] = o->images[--o->n_images];
    return INFER_OK;
  }
  if (at < 0) {
    image_request *grown = realloc(o->images, sizeof *grown * (size_t)(o->n_images + 1));
    if (!grown) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    o->images = grown;
    at = o->n_images++;
  }
  o->images[at] = r;
  return INFER_OK;
}

infer_status image_input_bind(infer_engine *e) {
  const graph *g = e->g;
  const struct infer_options *o = &e->opts;
  if (o->n_images == 0) return INFER_OK;
  e->image = calloc((size_t)g->n_inputs + 1, sizeof *e->image);
  if (!e->image) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  char a[128];
  for (int r = 0; r < o->n_images; r++) {
    const image_request *q = &o->images[r];
    if (q->index >= g->n_inputs)
      return infer_fail(INFER_ERR_INVALID_ARGUMENT, "image input %d asked for "
                        "(infer_options_set_input_image), but the model has %d input%s",
                        q->index, g->n_inputs, g->n_inputs == 1 ? "" : "s");
    const value *v = &g->values[g->inputs[q->index]];
    const tensor *t = &v->t;
    if (v->kind == VALUE_CONSTANT)
      return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input '%s' is fixed to a value at build "
                        "(infer_options_set_input_constant_at): it cannot be an image input",
                        v->name);
    if (t->dtype != INFER_DTYPE_FLOAT32 || t->rank != 4 || !v->shape_known)
      return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input '%s' is %s %s; an image input "
                        "(uint8 NHWC fed, infer_options_set_input_image) needs a float32 "
                        "N x C x H x W input", v->name, infer_dtype_name(t->dtype),
                        dims_format(t->rank, t->dims, a, sizeof a));
    if (t->dims[1] != q->channels)
      return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input '%s' is %s: %lld channels, but the "
                        "image input was given %d (mean and std values)", v->name,
                        dims_format(t->rank, t->dims, a, sizeof a), (long long)t->dims[1],
                        q->channels);
    image_feed *f = &e->image[q->index];
    f->channels = q->channels;
    memcpy(f->mean, q->mean, sizeof f->mean);
    memcpy(f->std, q->std, sizeof f->std);
    f->feed = *t;
    f->feed.data = NULL;
    f->feed.dtype = INFER_DTYPE_UINT8;
    f->feed.dims[1] = t->dims[2];
    f->feed.dims[2] = t->dims[3];
    f->feed.dims[3] = t->dims[1];
    log_info(&o->log, "input '%s': fed as uint8 %s (NHWC), normalized by the engine", v->name,
             dims_format(4, f->feed.dims, a, sizeof a));
  }
  return INFER_OK;
}

const image_feed *engine_image_feed(const infer_engine *e, int index) {
  return e->image && e->image[index].channels > 0 ? &e->image[index] : NULL;
}

const tensor *engine_input_tensor(const infer_engine *e, int index) {
  const image_feed *f = engine_image_feed(e, index);
  return f ? &f->feed : &e->g->values[e->g->inputs[index]].t;
}

void image_u8_nhwc_to_f32_nchw(const uint8_t *src, float *dst, int64_t n, int64_t h, int64_t w,
                               int c, const float *mean, const float *std) {
  int64_t plane = h * w;
  for (int64_t b = 0; b < n; b++)
    for (int k = 0; k < c; k++) {
      const uint8_t *s = src + b * plane * c + k;
      float *d = dst + (b * c + k) * plane;
      /* ToTensor's division by 255, then Normalize's subtraction and division */
      for (int64_t i = 0; i < plane; i++) d[i] = ((float)s[i * c] / 255.0f - mean[k]) / std[k];
    }
}
