/* image_input.h: 8-bit image inputs (infer_options_set_input_image). The graph keeps the
 * model's float32 NCHW input; the engine's callers feed uint8 NHWC, and the backends
 * convert at the start of each run: y = (x / 255 - mean[c]) / std[c] in float32, the
 * operations of torchvision's ToTensor and Normalize in their order. */
#ifndef INFER_IMAGE_INPUT_H
#define INFER_IMAGE_INPUT_H

#include "engine_internal.h"

typedef struct image_feed {
  int channels; /* 0: the input is fed as the model says */
  float mean[IMAGE_MAX_CHANNELS], std[IMAGE_MAX_CHANNELS];
  tensor feed; /* uint8 [N, H, W, C]; data NULL */
} image_feed;

/* After shape binding: checks each requested image input against the graph (float32,
 * rank 4, static dims, C channels, not a build-time constant) and fills e->image. */
infer_status image_input_bind(infer_engine *e);

/* The tensor callers feed for input `index`: the image feed, or the graph input's own. */
const tensor *engine_input_tensor(const infer_engine *e, int index);

/* The image feed of input `index`, or NULL when the input is not fed as uint8 images. */
const image_feed *engine_image_feed(const infer_engine *e, int index);

/* dst (float32 [n, c, h, w]) = (src (uint8 [n, h, w, c]) / 255 - mean) / std, per
 * channel, in float32. */
void image_u8_nhwc_to_f32_nchw(const uint8_t *src, float *dst, int64_t n, int64_t h, int64_t w,
                               int c, const float *mean, const float *std);

#endif
