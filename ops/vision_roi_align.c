/* vision_roi_align.c: RoiAlign (10+). For every region of interest rois[r] = (x1, y1,
 * x2, y2) (in input pixels times spatial_scale) on the image batch_indices[r] of X
 * [N, C, H, W], Y[r, c] is an output_height x output_width grid of bins; each bin
 * averages (mode avg) or takes the largest of (mode max) sampling_ratio^2 bilinear
 * samples (adaptive ceil(roi size / bins) per axis when sampling_ratio is 0).
 * coordinate_transformation_mode half_pixel (16+ default) shifts the ROI by -0.5 pixel;
 * output_half_pixel (the only behaviour at opset 10) does not, and makes ROIs at least
 * 1 x 1. Samples more than one pixel outside X count as 0; the rest clamp to the edge.
 * Mode max takes, per sample, the largest of the four weighted corner values (w_i * v_i),
 * as ONNX Runtime and the ONNX reference implementation do. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reduce_util.h"
#include "vision_params.h"

static const char *const roi_align_attrs[] = {"coordinate_transformation_mode", "mode",
                                              "output_height", "output_width", "sampling_ratio",
                                              "spatial_scale", NULL};

static infer_status roi_align_parse(const node *n, void **params) {
  roi_align_params v;
  const char *ctm, *mode;
  TRY(attr_get_string(n, "coordinate_transformation_mode",
                      n->opset < 16 ? "output_half_pixel" : "half_pixel", &ctm));
  if (node_attr(n, "coordinate_transformation_mode") && n->opset < 16)
    return infer_fail(INFER_ERR_INVALID_MODEL, "RoiAlign: attribute "
                      "'coordinate_transformation_mode' does not exist at opset %lld",
                      (long long)n->opset);
  TRY(attr_get_string(n, "mode", "avg", &mode));
  TRY(attr_get_int(n, "output_height", 1, &v.out_h));
  TRY(attr_get_int(n, "output_width", 1, &v.out_w));
  TRY(attr_get_int(n, "sampling_ratio", 0, &v.sampling_ratio));
  TRY(attr_get_float(n, "spatial_scale", 1.0f, &v.spatial_scale));
  if (strcmp(ctm, "half_pixel") != 0 && strcmp(ctm, "output_half_pixel") != 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "RoiAlign: coordinate_transformation_mode '%s' "
                      "is not half_pixel or output_half_pixel", ctm);
  if (strcmp(mode, "avg") != 0 && strcmp(mode, "max") != 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "RoiAlign: mode '%s' is not avg or max", mode);
  if (v.out_h < 1 || v.out_w < 1 || v.sampling_ratio < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "RoiAlign: output_height %lld and output_width "
                      "%lld must be >= 1, sampling_ratio %lld >= 0", (long long)v.out_h,
                      (long long)v.out_w, (long long)v.sampling_ratio);
  v.half_pixel = strcmp(ctm, "half_pixel") == 0;
  v.max_mode = strcmp(mode, "max") == 0;
  roi_align_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "RoiAlign: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

static infer_status roi_align_infer(const node *n, const void *params, const tensor *const *in,
                                    tensor *const *out) {
  const roi_align_params *p = params;
  const tensor *x = in[0], *rois = in[1], *bi = in[2];
  char a[160], b[160], c[160];
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "RoiAlign: dtype %s is not supported",
                      infer_dtype_name(x->dtype));
  if (rois->dtype != x->dtype)
    return infer_fail(INFER_ERR_INVALID_MODEL, "RoiAlign: rois are %s, X is %s",
                      infer_dtype_name(rois->dtype), infer_dtype_name(x->dtype));
  if (bi->dtype != INFER_DTYPE_INT64)
    return infer_fail(INFER_ERR_INVALID_MODEL, "RoiAlign: batch_indices must be int64, not %s",
                      infer_dtype_name(bi->dtype));
  if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || bi->rank != 1 ||
      bi->dims[0] != rois->dims[0])
    return infer_fail(INFER_ERR_INVALID_MODEL, "RoiAlign: X %s must be N,C,H,W, rois %s "
                      "[num_rois, 4] and batch_indices %s [num_rois]",
                      dims_format(x->rank, x->dims, a, sizeof a),
                      dims_format(rois->rank, rois->dims, b, sizeof b),
                      dims_format(bi->rank, bi->dims, c, sizeof c));
  out[0]->dtype = x->dtype;
  out[0]->rank = 4;
  out[0]->dims[0] = rois->dims[0];
  out[0]->dims[1] = x->dims[1];
  out[0]->dims[2] = p->out_h;
  out[0]->dims[3] = p->out_w;
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "RoiAlign: output size overflows");
  return INFER_OK;
}

/* One bilinear sample at (y, x) of an H x W plane: the four corner offsets and weights
 * (all weights 0 when the point lies more than a pixel outside). */
/* Most samples per bin (an adaptive sampling_ratio grows with the ROI: a box far larger
 * than any image would otherwise run for hours). */
#define ROI_MAX_SAMPLES (1 << 24)

typedef struct roi_sample {
  int64_t pos[4];
  double w[4];
} roi_sample;

static roi_sample sample_at(double y, double x, int64_t H, int64_t W) {
  roi_sample s = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  if (!(y >= -1.0 && y <= (double)H && x >= -1.0 && x <= (double)W)) return s;
  if (y < 0) y = 0;
  if (x < 0) x = 0;
  int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
  if (y0 >= H - 1) {
    y0 = y1 = H - 1;
    y = (double)y0;
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= W - 1) {
    x0 = x1 = W - 1;
    x = (double)x0;
  } else {
    x1 = x0 + 1;
  }
  double ly = y - (double)y0, lx = x - (double)x0, hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = y0 * W + x0;
  s.pos[1] = y0 * W + x1;
  s.pos[2] = y1 * W + x0;
  s.pos[3] = y1 * W + x1;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

static infer_status roi_align_run(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out, void *ws) {
  const roi_align_params *p = params;
  const tensor *x = in[0], *rois = in[1];
  const int64_t *bi = in[2]->data;
  tensor *y = out[0];
  int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  int64_t R = rois->dims[0], PH = p->out_h, PW = p->out_w;
  if (H < 1 || W < 1) {
    if (R * C > 0)
      return infer_fail(INFER_ERR_INVALID_INPUT, "RoiAlign: X has an empty plane");
    return INFER_OK;
  }
  for (int64_t r = 0; r < R; r++) {
    if (bi[r] < 0 || bi[r] >= N)
      return infer_fail(INFER_ERR_INVALID_INPUT,
                        "RoiAlign: batch index %lld (roi %lld) is out of range [0, %lld)",
                        (long long)bi[r], (long long)r, (long long)N);
    double off = p->half_pixel ? 0.5 : 0, sc = p->spatial_scale;
    double x1 = nr_load(rois, r * 4 + 0) * sc - off, y1 = nr_load(rois, r * 4 + 1) * sc - off;
    double x2 = nr_load(rois, r * 4 + 2) * sc - off, y2 = nr_load(rois, r * 4 + 3) * sc - off;
    double rw = x2 - x1, rh = y2 - y1;
    if (!p->half_pixel) {
      rw = rw > 1 ? rw : 1;
      rh = rh > 1 ? rh : 1;
    }
    double bh = rh / (double)PH, bw = rw / (double)PW;
    /* samples per bin; a NaN or huge ROI must not make the loops run away */
    double gh_d = p->sampling_ratio > 0 ? (double)p->sampling_ratio : ceil(rh / (double)PH);
    double gw_d = p->sampling_ratio > 0 ? (double)p->sampling_ratio : ceil(rw / (double)PW);
    /* each factor bounded too: a huge one times a zero one passes the product's bound
     * and then overflows the integer conversion (found by fuzz_model) */
    if (!(gh_d >= 0 && gw_d >= 0 && gh_d <= ROI_MAX_SAMPLES && gw_d <= ROI_MAX_SAMPLES &&
          gh_d * gw_d <= ROI_MAX_SAMPLES))
      return infer_fail(INFER_ERR_INVALID_INPUT,
                        "RoiAlign: roi %lld (%g, %g, %g, %g) is not a usable box (NaN, or more "
                        "than %d samples per bin)", (long long)r, x1, y1, x2, y2,
                        ROI_MAX_SAMPLES);
    int64_t gh = (int64_t)gh_d, gw = (int64_t)gw_d, count = gh * gw > 1 ? gh * gw : 1;
    for (int64_t c = 0; c < C; c++) {
      int64_t plane = (bi[r] * C + c) * H * W, ob = (r * C + c) * PH * PW;
      for (int64_t ph = 0; ph < PH; ph++)
        for (int64_t pw = 0; pw < PW; pw++) {
          double acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; iy++) {
            double yy = y1 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
            for (int64_t ix = 0; ix < gw; ix++) {
              double xx = x1 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
              roi_sample s = sample_at(yy, xx, H, W);
              if (p->max_mode) {
                double v = -INFINITY;
                for (int k = 0; k < 4; k++) {
                  double t = s.w[k] * nr_load(x, plane + s.pos[k]);
                  if (t > v) v = t;
                }
                if (first || v > acc) acc = v;
                first = false;
              } else {
                for (int k = 0; k < 4; k++) acc += s.w[k] * nr_load(x, plane + s.pos[k]);
              }
            }
          }
          nr_store(y, ob + ph * PW + pw, p->max_mode ? acc : acc / (double)count);
        }
    }
  }
  return INFER_OK;
}

const op_desc op_roi_align = {.name = "RoiAlign",
                              .domain = "",
                              .since = 10,
                              .until = OP_OPSET_MAX,
                              .min_inputs = 3,
                              .max_inputs = 3,
                              .min_outputs = 1,
                              .max_outputs = 1,
                              .attrs = roi_align_attrs,
                              .parse = roi_align_parse,
                              .infer = roi_align_infer,
                              .run = roi_align_run};
