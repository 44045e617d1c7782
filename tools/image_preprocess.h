/* image_preprocess.h: torchvision's classification preprocessing of an RGB image:
 * Resize, CenterCrop, ToTensor, Normalize, as torchvision 0.14 does them on a PIL
 * image, so that a model sees the same numbers it would see in PyTorch.
 *
 * - Resize to a shorter side S: the shorter side becomes S and the longer
 *   floor(S * long / short), as transforms.Resize(S); or to an exact HxW.
 * - The resampling is PIL's bilinear filter: a triangle over +-1 output pixel, which
 *   widens to +-scale input pixels when shrinking (that is the antialiasing), weights
 *   normalized per output pixel and rounded to 22-bit fixed point, rows first, then
 *   columns, each pass rounded to 8 bits. Same arithmetic, same bytes as PIL's
 *   Image.resize(size, BILINEAR).
 * - Center crop HxW: offsets round((size - crop) / 2) with Python's round (half to
 *   even); a crop larger than the image pads it with zeros first, (crop-size)//2 on
 *   the top/left, as torchvision.transforms.functional.center_crop.
 * - To float: pixel / 255 in single precision, then (x - mean[c]) / std[c], NCHW. */
#ifndef INFER_IMAGE_PREPROCESS_H
#define INFER_IMAGE_PREPROCESS_H

#include <stdbool.h>
#include <stddef.h>

#include "image_decode.h"

typedef struct image_prep {
  /* resize: both 0: none; width 0: shorter side to `height`; else exactly HxW */
  int resize_height, resize_width;
  int crop_height, crop_width; /* 0: no crop */
  float mean[3], std[3];
} image_prep;

/* Presets by name: "imagenet" (resize 256, crop 224, ImageNet mean/std: torchvision's
 * default for its classification weights), "inception" (342, 299, the same mean/std:
 * Inception_V3_Weights) and "none" (no resize or crop, x / 255 with mean 0, std 1).
 * False for an unknown name. */
bool image_prep_preset(const char *name, image_prep *out);
/* "imagenet, inception, none" */
const char *image_prep_preset_names(void);

/* The size transforms.Resize(shorter) gives a w x h image. */
void image_resize_shorter_size(int w, int h, int shorter, int *out_w, int *out_h);

/* PIL-exact bilinear resampling (see above) into a new image; false (message in err)
 * when out of memory or the size is refused by image_size_allowed. */
bool image_resize_bilinear(const image_rgb *in, int out_w, int out_h, image_rgb *out,
                           char *err, size_t cap);

/* Center crop of crop_w x crop_h into a new image, zero-padded where the crop is larger. */
bool image_center_crop(const image_rgb *in, int crop_w, int crop_h, image_rgb *out, char *err,
                       size_t cap);

/* Resize and crop as p says, into a new image (a copy when p does neither). */
bool image_prep_geometry(const image_rgb *in, const image_prep *p, image_rgb *out, char *err,
                         size_t cap);

/* The size image_prep_geometry gives an in_w x in_h image. */
void image_prep_output_size(const image_prep *p, int in_w, int in_h, int *out_w, int *out_h);

/* 3 x h x w floats at dst: (pixel / 255 - mean[c]) / std[c]. */
void image_to_chw(const image_rgb *im, const float mean[3], const float std[3], float *dst);

#endif
