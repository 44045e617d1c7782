/* step_cost.c: how much arithmetic a step does and how many bytes it touches, for the
 * profile's achieved FLOP/s and bytes/s. Matrix ops count 2 per multiply-add; every
 * other op one per output element (its cost is in the bytes). */
#include <string.h>

#include "../ops/attention_fused.h"
#include "engine_internal.h"

static double count_of(const tensor *t) {
  int64_t n = t ? dims_count(t->rank, t->dims) : 0;
  return n > 0 ? (double)n : 0;
}

void step_cost(const node *n, const tensor *const *in, tensor *const *out, double *flops,
               double *bytes) {
  double b = 0, outputs = 0;
  for (int k = 0; k < n->n_inputs; k++)
    if (in[k]) b += count_of(in[k]) * (double)infer_dtype_size(in[k]->dtype);
  for (int k = 0; k < n->n_outputs; k++)
    if (out[k]) {
      b += count_of(out[k]) * (double)infer_dtype_size(out[k]->dtype);
      outputs += count_of(out[k]);
    }
  *bytes = b;
  /* FusedConv and Int8Conv (either layout) count as their convolution: W's per-filter
   * volume is the product of its dims after the first in both */
  const char *op = strcmp(n->op_type, "FusedConv") == 0 || strcmp(n->op_type, "Int8Conv") == 0
                       ? "Conv"
                   : strcmp(n->op_type, "FusedMatMul") == 0 ? "MatMul"
                                                            : n->op_type;
  if (strcmp(op, "FusedAttention") == 0 && n->params) {
    /* two products per (b1, b2): Sq x Sk x D and Sq x Dv x Sk; the bytes are Q, K, V and
     * O, not the whole of inputs that hold more (a fused QKV) */
    const fused_attention_params *p = n->params;
    const attn_view *q = &p->view[ATTN_Q], *k = &p->view[ATTN_K], *v = &p->view[ATTN_V];
    double batch = (double)q->dims[0] * (double)q->dims[1], sq = (double)q->dims[2];
    double sk = (double)k->dims[2], d = (double)q->dims[3], dv = (double)v->dims[3];
    *flops = 2 * batch * sq * sk * (d + dv);
    *bytes = batch * (sq * d + sk * d + sk * dv + sq * dv) * (double)infer_dtype_size(in[0]->dtype);
    return;
  }
  if ((strcmp(op, "Conv") == 0 || strcmp(op, "ConvTranspose") == 0) && n->n_inputs >= 2 &&
      in[1] && in[1]->rank >= 2) {
    /* each output element of a Conv takes W's per-filter volume (C/group * kernel);
     * ConvTranspose: each input element scatters W's per-input volume */
    double per = 1;
    for (int d = 1; d < in[1]->rank; d++) per *= (double)in[1]->dims[d];
    double elems = strcmp(op, "Conv") == 0 ? outputs : count_of(in[0]);
    if (strcmp(op, "ConvTranspose") == 0) per = count_of(in[1]) / (double)in[1]->dims[0];
    *flops = 2 * elems * per;
  } else if ((strcmp(op, "MatMul") == 0 || strcmp(op, "Gemm") == 0) && in[0] && in[0]->rank >= 1) {
    /* output elements x the shared dim K */
    int64_t k = in[0]->dims[in[0]->rank - 1];
    if (strcmp(op, "Gemm") == 0 && in[0]->rank == 2) {
      const attr *ta = NULL;
      for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, "transA") == 0) ta = &n->attrs[i];
      if (ta && ta->i) k = in[0]->dims[0];
    }
    *flops = 2 * outputs * (double)k;
  } else {
    *flops = outputs;
  }
}
