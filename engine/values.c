/* values.c: reading the intermediate values of a run by ONNX name (infer_context_read_value).
 *
 * The mechanism is the memory plan, not the run loop: an engine built with config
 * keep_values=1 plans every value in bytes of its own (engine/plan_graph.c, keep_all),
 * so after a run each value a step wrote is still where that step put it and nothing in
 * the run changes: the same passes, fusions, kernels and CUDA graph as the engine
 * without the setting, only a larger arena. Values that fusion removed (a FusedChain's
 * inner results) were never computed and are not there; the values that survive keep
 * their ONNX names through the passes, and the layout pass's NHWC values say so
 * (value.channels_last), so a reader gets ONNX's NCHW layout back. */
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "../core/status.h"
#include "backend.h"
#include "engine_internal.h"

int engine_step_of(const infer_engine *e, int v) {
  const graph *g = e->g;
  for (int s = 0; s < e->n_steps; s++) {
    const node *n = &g->nodes[e->steps[s]];
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] == v) return s;
  }
  return -1;
}

int engine_kept_value(const infer_engine *e, const char *name) {
  const graph *g = e->g;
  if (!config_flag(&e->opts.cfg, "keep_values", false)) {
    infer_fail(INFER_ERR_INVALID_ARGUMENT, "value '%s': the engine keeps no intermediate values "
               "(build it with config keep_values=1)", name);
    return -1;
  }
  for (int v = 0; v < g->n_values; v++) {
    const value *val = &g->values[v];
    if (strcmp(val->name, name) != 0 || val->kind == VALUE_CONSTANT) continue;
    bool numeric = dtype_is_float(val->t.dtype) || dtype_is_signed_int(val->t.dtype) ||
                   dtype_is_unsigned_int(val->t.dtype);
    if (!val->has_type || !numeric) break;
    if (val->kind == VALUE_INPUT || engine_step_of(e, v) >= 0) return v;
  }
  infer_fail(INFER_ERR_INVALID_ARGUMENT, "value '%s' is not kept by this engine (no step writes "
             "it: it is a constant, folded, fused away or not numeric)", name);
  return -1;
}

infer_status context_read_value_onnx(infer_context *c, int v, float *dst) {
  const value *val = &context_engine(c)->g->values[v];
  const tensor *t = &val->t;
  if (!val->channels_last || t->rank != 4) return context_read_value_f32(c, v, dst);
  int64_t n = dims_count(4, t->dims);
  float *nhwc = malloc(n > 0 ? (size_t)n * sizeof(float) : 1);
  if (!nhwc) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory reading '%s'", val->name);
  infer_status st = context_read_value_f32(c, v, nhwc);
  int64_t N = t->dims[0], H = t->dims[1], W = t->dims[2], C = t->dims[3];
  for (int64_t b = 0; st == INFER_OK && b < N; b++)
    for (int64_t y = 0; y < H; y++)
      for (int64_t x = 0; x < W; x++)
        for (int64_t ch = 0; ch < C; ch++)
          dst[((b * C + ch) * H + y) * W + x] = nhwc[((b * H + y) * W + x) * C + ch];
  free(nhwc);
  return st;
}

infer_status infer_context_read_value(infer_context *c, const char *name, infer_tensor *out) {
  if (!c || !name || !out)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_read_value: NULL argument");
  memset(out, 0, sizeof *out);
  const infer_engine *e = context_engine(c);
  int v = engine_kept_value(e, name);
  if (v < 0) return INFER_ERR_INVALID_ARGUMENT;
  const value *val = &e->g->values[v];
  infer_tensor t = val->t;
  if (val->channels_last && t.rank == 4) { /* NHWC back to the ONNX dims */
    t.dims[1] = val->t.dims[3];
    t.dims[2] = val->t.dims[1];
    t.dims[3] = val->t.dims[2];
  }
  int64_t n = dims_count(t.rank, t.dims);
  if (n < 0) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "value '%s' has no known shape", name);
  t.dtype = INFER_DTYPE_FLOAT32;
  t.data = malloc(n > 0 ? (size_t)n * sizeof(float) : 1);
  if (!t.data) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory reading '%s'", name);
  infer_status st = context_read_value_onnx(c, v, t.data);
  if (st != INFER_OK) {
    free(t.data);
    return st;
  }
  *out = t;
  return INFER_OK;
}
