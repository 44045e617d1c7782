/* vision_params.h: the vision family (ops/vision_*.c): GridSample, RoiAlign and
 * NonMaxSuppression. Each op's parse fills the params struct below (n->params); shape
 * inference, the CPU run and a later GPU side read the same struct and functions. */
#ifndef INFER_VISION_PARAMS_H
#define INFER_VISION_PARAMS_H

#include <stdbool.h>

#include "op.h"

/* ---- GridSample (16: 4-D only, modes bilinear/nearest/bicubic; 20+: N-D, modes
 * linear/nearest/cubic; both spellings are accepted at every opset) ---------------- */

enum grid_mode { GS_LINEAR, GS_NEAREST, GS_CUBIC };
enum grid_padding { GS_ZEROS, GS_BORDER, GS_REFLECTION };

typedef struct grid_sample_params {
  enum grid_mode mode;       /* default linear */
  enum grid_padding padding; /* default zeros */
  bool align_corners;        /* default 0 */
} grid_sample_params;

/* Most spatial dims GridSample takes (X of rank <= INFER_MAX_RANK). */
#define GRID_MAX_SPATIAL (INFER_MAX_RANK - 2)
/* Taps per spatial dim: 4 (cubic), 2 (linear), 1 (nearest). */
#define GRID_MAX_TAPS 4

/* The taps of one sampling coordinate along one spatial dim of size `size`: input
 * indices idx[0..*n) with weights w (a tap outside the input under zeros padding has
 * valid false: it reads 0). g is the normalized grid value. Nearest rounds half to even
 * in every rank (as PyTorch's 2-D nearbyint; the ONNX backend test data of 3-D
 * GridSample expects it too). */
void grid_taps(const grid_sample_params *p, double g, int64_t size, int64_t *idx, double *w,
               bool *valid, int *n);

/* ---- RoiAlign (10: output_half_pixel only; 16+: coordinate_transformation_mode) --- */

typedef struct roi_align_params {
  bool half_pixel;        /* coordinate_transformation_mode half_pixel (16+ default) */
  bool max_mode;          /* mode max (default avg) */
  int64_t out_h, out_w;   /* output_height / output_width, default 1 */
  int64_t sampling_ratio; /* default 0: adaptive, ceil(roi size / output size) */
  float spatial_scale;    /* default 1 */
} roi_align_params;

/* ---- NonMaxSuppression (10+) ------------------------------------------------------ */

typedef struct nms_params {
  bool center_point_box; /* 1: boxes are [x_center, y_center, width, height]; 0 (default):
                            [y1, x1, y2, x2], any two opposite corners */
} nms_params;

/* The thresholds read from the optional inputs (absent: 0 boxes, iou 0, no score
 * threshold). */
typedef struct nms_limits {
  int64_t max_per_class;
  float iou_threshold;
  bool has_score_threshold;
  float score_threshold;
} nms_limits;

/* Reads the optional inputs in[2..4] (host data; NULL or beyond n_inputs = absent). */
infer_status nms_read_limits(int n_inputs, const tensor *const *in, nms_limits *lim);

/* Bytes of scratch nms_select needs for these boxes/scores shapes. */
int64_t nms_scratch_bytes(const tensor *boxes);

/* Runs the selection: per batch and class, boxes with score above the threshold in
 * descending score order (ties: lower box index first), each kept unless its IoU with a
 * box already kept exceeds the threshold, at most max_per_class. Writes the first cap
 * triples (batch, class, box) to out (may be NULL) and sets *count to all of them.
 * scratch holds nms_scratch_bytes(boxes). */
void nms_select(const nms_params *p, const nms_limits *lim, const tensor *boxes,
                const tensor *scores, void *scratch, int64_t *out, int64_t cap, int64_t *count);

#endif
