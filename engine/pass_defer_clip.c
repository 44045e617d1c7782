/* pass_defer_clip.c: MobileNet's blocks are a 1x1 expansion ending in ReLU6, read only
 * by a 3x3 depthwise convolution. cuBLASLt's GEMM epilogues stop at ReLU, so the clip
 * at 6 otherwise costs one more pass over the widest tensor of the block. Here the
 * expansion ends in Relu and the depthwise FusedConv clamps what it reads at the clip's
 * upper bound (its internal attribute input_max): min(relu(v), b) = clip(v, 0, b) for
 * every v, float16 rounding included (b = 6 is exact, rounding is monotonic), and the
 * zero padding stays zero since b > 0. Only our depthwise GPU kernels and the CPU's
 * channels-last reference read input_max, so the reader must be one they take:
 * channels-last, one filter per channel, window up to 7x7, no dilation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/conv_fused.h"
#include "../ops/op.h"
#include "passes.h"

static bool is_fused_conv(const node *n) {
  return !n->removed && n->params && strcmp(n->op_type, "FusedConv") == 0 && n->domain &&
         strcmp(n->domain, "com.microsoft") == 0;
}

/* Whether node d is a channels-last depthwise FusedConv that our kernels take, reading
 * v as X only and not clamping already. */
static bool depthwise_reader(const graph *g, const node *d, int v) {
  if (!is_fused_conv(d) || d->n_inputs < 2 || d->inputs[0] != v || d->inputs[1] < 0) return false;
  const fused_conv_params *p = d->params;
  const value *x = &g->values[v], *w = &g->values[d->inputs[1]];
  if (!p->channels_last || !isinf(p->input_max) || !x->shape_known || !w->shape_known ||
      x->t.rank != 4 || w->t.rank != 4)
    return false;
  int64_t c = x->t.dims[3]; /* N, H, W, C; W: M, kH, kW, C/group */
  if (p->conv.group != c || w->t.dims[0] != c || w->t.dims[3] != 1 || w->t.dims[1] > 7 ||
      w->t.dims[2] > 7)
    return false;
  for (int k = 0; k < p->conv.w.n_dilations; k++)
    if (p->conv.w.dilations[k] != 1) return false;
  return true;
}

infer_status pass_defer_clip(graph *g, int *changed) {
  *changed = 0;
  int *readers = pass_count_readers(g);
  if (!readers) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "defer-clip: out of memory");
  infer_status st = INFER_OK;
  for (int i = 0; st == INFER_OK && i < g->n_nodes; i++) {
    node *n = &g->nodes[i];
    if (!is_fused_conv(n)) continue;
    const fused_conv_params *p = n->params;
    if (p->act != CONV_ACT_CLIP || p->alpha != 0.0f || !(p->beta > 0) || isinf(p->beta))
      continue;
    int y = n->outputs[0], r = pass_sole_reader(g, y, readers);
    if (r < 0 || !depthwise_reader(g, &g->nodes[r], y)) continue;
    float bound = p->beta;
    node *d = &g->nodes[r];
    pass_remove_attr(n, "activation_params");
    st = pass_set_attr_string(n, "activation", "Relu");
    if (st == INFER_OK) st = pass_set_attr_float(d, "input_max", bound);
    if (st == INFER_OK) st = pass_reparse(n);
    if (st == INFER_OK) st = pass_reparse(d);
    if (st == INFER_OK) (*changed)++;
  }
  free(readers);
  return st;
}
