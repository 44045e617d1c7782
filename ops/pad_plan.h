/* pad_plan.h: what the CPU Pad (ops/pad.c) shares with the GPU one
 * (ops/cuda/cuda_pad.c): the parsed attributes, the resolution of pads (and
 * axes) into per-axis begin/end pads, and the kept region they leave (negative pads
 * crop first; the modes then extend the cropped region). */
#ifndef INFER_PAD_PLAN_H
#define INFER_PAD_PLAN_H

#include "op.h"

enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

/* The node's params (n->params of a Pad node). */
typedef struct pad_params {
  enum pad_mode mode;
  float value;                        /* opset < 11 */
  int n_pads;                         /* opset < 11 */
  int64_t pads[2 * INFER_MAX_RANK];   /* opset < 11 */
} pad_params;

/* Per-axis begin/end pads (negative = crop) of x (only its rank is read): opset < 11
 * from p, 11+ from the pads and axes in in[1] and in[3] as host data (absent: NULL
 * or beyond n->n_inputs); in[0] and in[2] are not read. OP_NEEDS_DATA when the
 * values are not known yet. */
infer_status pad_resolve(const node *n, const pad_params *p, const tensor *x,
                         const tensor *const *in, int64_t *begin, int64_t *end);

/* The kept region of every axis of dims after the crops: it starts at element lo[i]
 * of the input and holds ext[i] elements (negative when the crops overlap), and the
 * output places it after pb[i] padded elements. */
void pad_region(int rank, const int64_t *dims, const int64_t *begin, const int64_t *end,
                int64_t *lo, int64_t *ext, int64_t *pb);

#endif
