/* pass_int8_conv.c: the convolutions of a QDQ model on symmetric int8 tensors become
 * Int8Conv (domain infer, ops/conv_int8.c), which the GPU runs as one int8 tensor-core
 * convolution with its scale, bias, residual and activation in the epilogue.
 *
 * A Conv or FusedConv matches when
 * - X is the output of a DequantizeLinear of an int8 tensor, per tensor, with a constant
 *   float32 scale and a zero point of 0 (or none): X = sx * xq;
 * - W is a 4-D float32 constant (the weights' DequantizeLinear was folded at build) whose
 *   every output channel m is q * sw[m] with q integers in [-127, 127]. The pass recovers
 *   them: sw[m] = max|W[m]| / 127 (per-channel symmetric max calibration, what ONNX
 *   Runtime's quantizer, TensorRT's and PyTorch's recipes write, maps that element to
 *   +-127), and every element must then be within 1e-3 of an integer multiple of it;
 *   the int8 W is then the same tensor, exactly;
 * - group is 1, the input and output channel counts are multiples of 4 (what int8 tensor
 *   cores take) and FusedConv has no input_max;
 * - with channels_last_only (the GPU), the node is channels-last.
 * It is rewritten in place to Int8Conv(xq, q, S = sx * sw, [B], [Z]) with its own
 * attributes. Where its output's only reader is a per-tensor QuantizeLinear to int8 with
 * zero point 0, the Int8Conv takes that scale (y_scale) and writes the quantized output
 * itself (absorb_quantize). The DequantizeLinear stays for its other readers
 * (remove-dead drops it otherwise). Where nothing matches (uint8 or asymmetric activations, other weight
 * scales) the model runs as before: dequantized to float. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/op.h"
#include "passes.h"

/* A constant scalar input k of n: its value as a double, or false. */
static bool const_scalar(const graph *g, const node *n, int k, double *v) {
  if (k >= n->n_inputs || n->inputs[k] < 0) return false;
  int id = n->inputs[k];
  if (!pass_is_constant(g, id) || dims_count(g->values[id].t.rank, g->values[id].t.dims) != 1)
    return false;
  *v = tensor_get_f64(&g->values[id].t, 0);
  return true;
}

/* X = sx * xq through a per-tensor DequantizeLinear of int8 with zero point 0: xq's id
 * and sx, or -1. */
static int int8_source(const graph *g, int x, float *sx) {
  int p = pass_producer(g, x);
  if (p < 0) return -1;
  const node *d = &g->nodes[p];
  if (!pass_node_is(d, "DequantizeLinear") || d->n_inputs < 2 || d->inputs[0] < 0) return -1;
  const value *xq = &g->values[d->inputs[0]];
  if (!xq->has_type || xq->t.dtype != INFER_DTYPE_INT8) return -1;
  int64_t block = 0;
  if (attr_get_int(d, "block_size", 0, &block) != INFER_OK || block != 0) return -1;
  int s = d->inputs[1];
  double scale, zp = 0;
  if (g->values[s].t.dtype != INFER_DTYPE_FLOAT32 || !const_scalar(g, d, 1, &scale) ||
      !(scale > 0) || !isfinite(scale))
    return -1;
  if (d->n_inputs > 2 && d->inputs[2] >= 0 && (!const_scalar(g, d, 2, &zp) || zp != 0))
    return -1;
  *sx = (float)scale;
  return d->inputs[0];
}

/* q (m x per int8) and sw (m) with W = q * sw per row, or false. */
static bool recover_int8(const float *w, int64_t m, int64_t per, int8_t *q, double *sw) {
  for (int64_t c = 0; c < m; c++) {
    const float *row = w + c * per;
    double amax = 0;
    for (int64_t i = 0; i < per; i++) {
      if (!isfinite(row[i])) return false; /* fmax below would skip a NaN */
      amax = fmax(amax, fabs((double)row[i]));
    }
    sw[c] = amax / 127.0;
    for (int64_t i = 0; i < per; i++) {
      double r = amax > 0 ? row[i] / sw[c] : 0, k = nearbyint(r);
      /* written so that a NaN fails it too: only then may k become an int8 */
      if (!(fabs(r - k) <= 1e-3 && fabs(k) <= 127)) return false;
      q[c * per + i] = (int8_t)k;
    }
  }
  return true;
}

static infer_status rewrite_at(graph *g, int i, bool channels_last_only, int *rewritten) {
  node *n = &g->nodes[i];
  bool fused = strcmp(n->op_type, "FusedConv") == 0;
  if (n->n_inputs < 2 || n->inputs[0] < 0 || n->inputs[1] < 0) return INFER_OK;
  int64_t cl = 0, group = 1;
  float input_max = INFINITY;
  if ((fused && (attr_get_int(n, "channels_last", 0, &cl) != INFER_OK ||
                 attr_get_float(n, "input_max", INFINITY, &input_max) != INFER_OK)) ||
      attr_get_int(n, "group", 1, &group) != INFER_OK)
    return INFER_OK;
  if (group != 1 || !isinf(input_max) || (channels_last_only && !cl)) return INFER_OK;
  int w = n->inputs[1], y = n->outputs[0];
  const value *wv = &g->values[w];
  if (!pass_is_constant(g, w) || wv->t.dtype != INFER_DTYPE_FLOAT32 || wv->t.rank != 4 ||
      y < 0 || !g->values[y].has_type || g->values[y].t.dtype != INFER_DTYPE_FLOAT32)
    return INFER_OK;
  int64_t m = wv->t.dims[0], c = cl ? wv->t.dims[3] : wv->t.dims[1];
  if (m < 1 || m % 4 || c % 4) return INFER_OK;
  float sx = 0;
  int xq = int8_source(g, n->inputs[0], &sx);
  if (xq < 0) return INFER_OK;
  int64_t count = dims_count(4, wv->t.dims), per = count / m;
  double *sw = malloc(sizeof(double) * (size_t)m);
  int8_t *qd = malloc((size_t)count);
  if (!sw || !qd) {
    free(sw);
    free(qd);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "int8-conv: out of memory");
  }
  if (!recover_int8(wv->t.data, m, per, qd, sw)) {
    free(sw);
    free(qd);
    return INFER_OK;
  }
  int64_t wd[4];
  memcpy(wd, wv->t.dims, sizeof wd);
  int q = pass_add_constant(g, w, "/int8", INFER_DTYPE_INT8, 4, wd);
  int s = q < 0 ? -1 : pass_add_constant(g, w, "/int8_scale", INFER_DTYPE_FLOAT32, 1, &m);
  if (s >= 0) {
    memcpy(g->values[q].t.data, qd, (size_t)count);
    float *sd = g->values[s].t.data;
    for (int64_t k = 0; k < m; k++) sd[k] = (float)((double)sx * sw[k]);
  }
  free(sw);
  free(qd);
  if (s < 0) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "int8-conv: out of memory");
  n = &g->nodes[i];
  int b = n->n_inputs > 2 ? n->inputs[2] : -1, z = fused && n->n_inputs > 3 ? n->inputs[3] : -1;
  int ins[5] = {xq, q, s, b, z};
  int n_ins = z >= 0 ? 5 : b >= 0 ? 4 : 3;
  attr *attrs = n->attrs; /* the node's own attributes move over */
  int n_attrs = n->n_attrs;
  n->attrs = NULL;
  n->n_attrs = 0;
  TRY(pass_rewrite_node(g, i, "infer", "Int8Conv", 1, ins, n_ins, attrs, n_attrs));
  (*rewritten)++;
  return INFER_OK;
}

/* Int8Conv i whose output only a per-tensor QuantizeLinear to int8 with zero point 0
 * reads: the Int8Conv writes that QuantizeLinear's output itself (its attribute y_scale),
 * and the QuantizeLinear goes. A QDQ model quantizes every convolution's output for the
 * next one, so the float output and its separate quantizing pass disappear. */
static infer_status absorb_quantize(graph *g, int i, int *readers, int *absorbed) {
  int y = g->nodes[i].outputs[0];
  int r = y >= 0 ? pass_sole_reader(g, y, readers) : -1;
  if (r < 0) return INFER_OK;
  const node *q = &g->nodes[r];
  if (!pass_node_is(q, "QuantizeLinear") || q->n_inputs < 3 || q->inputs[0] != y ||
      q->n_outputs != 1 || q->outputs[0] < 0 || q->inputs[1] < 0 || q->inputs[2] < 0)
    return INFER_OK;
  int64_t block = 0; /* (saturate concerns float8 outputs only) */
  if (attr_get_int(q, "block_size", 0, &block) != INFER_OK || block != 0) return INFER_OK;
  double scale, zp;
  const value *yq = &g->values[q->outputs[0]];
  if (g->values[q->inputs[1]].t.dtype != INFER_DTYPE_FLOAT32 || !const_scalar(g, q, 1, &scale) ||
      !(scale > 0) || !isfinite(scale) || (float)scale <= 0 ||
      g->values[q->inputs[2]].t.dtype != INFER_DTYPE_INT8 || !const_scalar(g, q, 2, &zp) ||
      zp != 0 || !yq->has_type || yq->t.dtype != INFER_DTYPE_INT8)
    return INFER_OK;
  int out = q->outputs[0];
  pass_remove_node(g, r, readers);
  node *n = &g->nodes[i];
  TRY(pass_set_attr_float(n, "y_scale", (float)scale));
  TRY(pass_reparse(n));
  n->outputs[0] = out;
  g->values[out].producer = i;
  g->values[y].producer = -1; /* read by nothing now */
  (*absorbed)++;
  return INFER_OK;
}

infer_status pass_int8_conv(graph *g, bool channels_last_only, int *rewritten, int *absorbed) {
  *rewritten = *absorbed = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const node *n = &g->nodes[i];
    if (n->removed) continue;
    if (pass_node_is(n, "Conv") ||
        (strcmp(n->op_type, "FusedConv") == 0 && n->domain &&
         strcmp(n->domain, "com.microsoft") == 0))
      TRY(rewrite_at(g, i, channels_last_only, rewritten));
  }
  if (!*rewritten) return INFER_OK;
  int *readers = pass_count_readers(g);
  if (!readers) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "int8-conv: out of memory");
  infer_status st = INFER_OK;
  for (int i = 0; st == INFER_OK && i < g->n_nodes; i++)
    if (!g->nodes[i].removed && strcmp(g->nodes[i].op_type, "Int8Conv") == 0)
      st = absorb_quantize(g, i, readers, absorbed);
  free(readers);
  return st;
}
