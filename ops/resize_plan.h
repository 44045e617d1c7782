/* resize_plan.h: what the CPU Resize (ops/resize.c) shares with the GPU one
 * (ops/cuda/cuda_resize.c): the parsed attributes, the per-axis plan (output size,
 * scale, ROI), the coordinate mapping, nearest indices and filter taps. One
 * implementation: the GPU turns the same mapping into tables at prepare. */
#ifndef INFER_RESIZE_PLAN_H
#define INFER_RESIZE_PLAN_H

#include "op.h"

enum resize_mode { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum resize_coord {
  CT_HALF_PIXEL,
  CT_HALF_PIXEL_SYMMETRIC,
  CT_PYTORCH_HALF_PIXEL,
  CT_ALIGN_CORNERS,
  CT_ASYMMETRIC,
  CT_TF_HALF_PIXEL_FOR_NN,
  CT_TF_CROP_AND_RESIZE
};
enum resize_nearest { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL, NM_SIMPLE };
enum resize_aspect { KAR_STRETCH, KAR_NOT_LARGER, KAR_NOT_SMALLER };

/* Most filter taps per output coordinate (antialiased downscaling by 1/s needs
 * about 4/s for cubic); beyond that Resize reports unsupported. */
#define RESIZE_MAX_TAPS 1024

/* The node's params (n->params of a Resize node). */
typedef struct resize_params {
  enum resize_mode mode;
  enum resize_coord coord;
  enum resize_nearest nearest;
  enum resize_aspect aspect;
  double cubic_a;
  double extrapolation;
  bool exclude_outside;
  bool antialias;
  int n_axes; /* -1: all axes */
  int64_t axes[INFER_MAX_RANK];
} resize_params;

typedef struct resize_plan {
  int rank;
  int64_t in[INFER_MAX_RANK], out[INFER_MAX_RANK];
  double scale[INFER_MAX_RANK];
  double roi_start[INFER_MAX_RANK], roi_end[INFER_MAX_RANK];
  bool active[INFER_MAX_RANK]; /* the axis is not a plain copy */
} resize_plan;

/* The plan of resizing x (only its shape is read) with roi, scales and sizes taken
 * from in[1..3] (opset 10: scales from in[1]) as host data; in[0] is not read. An
 * absent or empty in[i] counts as not given. OP_NEEDS_DATA when the values are not
 * known yet. */
infer_status resize_plan_make(const node *n, const resize_params *p, const tensor *x,
                              const tensor *const *in, resize_plan *pl);

/* Input coordinate of output coordinate x on axis a; *outside set for a
 * tf_crop_and_resize coordinate outside the input (extrapolation_value). */
double resize_coord_of(const resize_params *p, const resize_plan *pl, int a, int64_t x,
                       bool *outside);

/* Nearest input index of output coordinate x on axis a, or -1 (extrapolate). */
int64_t resize_nearest_index(const resize_params *p, const resize_plan *pl, int a, int64_t x);

/* Filter taps of output coordinate x on axis a (linear/cubic): *n input indices
 * (clamped to the input) and weights into idx and w (RESIZE_MAX_TAPS each).
 * Returns false when more than RESIZE_MAX_TAPS are needed; *outside set when the
 * coordinate extrapolates (then *n = 0). */
bool resize_taps(const resize_params *p, const resize_plan *pl, int a, int64_t x, int64_t *idx,
                 double *w, int *n, bool *outside);

#endif
