/* plan_graph.c: turns the steps of a graph into planner buffers. Every value a step
 * writes, and every graph input, whose shape is known at build time gets one; its
 * lifetime runs from the step that writes it to its last reader, and graph inputs
 * and outputs live for the whole run (inputs persist between runs). A value that is a
 * view of another (alias_of) gets no buffer of its own: it shares its source's, whose
 * lifetime then runs to the view's last reader. A value written into another's buffer
 * (into: a Concat's part its producer writes in place) gets no buffer either: the other's
 * starts with the first such part's step. With keep_all (config keep_values) no
 * two buffers share bytes, so every value a step wrote is still there after the run
 * (infer_context_read_value). */
#include <stdlib.h>

#include "engine_internal.h"
#include "../core/status.h"

infer_status plan_graph(const graph *g, const int *steps, int n_steps,
                        const infer_dtype *storage, const int *alias_of, const int *into,
                        bool keep_all, plan *p, int **buffer_of_out) {
  *buffer_of_out = NULL;
  plan_buffer *bufs = calloc((size_t)g->n_values + 1, sizeof *bufs);
  int *buffer_of = malloc(sizeof(int) * ((size_t)g->n_values + 1));
  if (!bufs || !buffer_of) {
    free(bufs);
    free(buffer_of);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory planning");
  }
  for (int v = 0; v < g->n_values; v++) buffer_of[v] = -1;
  int nb = 0;
  for (int v = 0; v < g->n_values; v++) {
    const value *val = &g->values[v];
    if (val->kind == VALUE_INPUT && val->shape_known) {
      buffer_of[v] = nb;
      bufs[nb++] = (plan_buffer){0, 0, n_steps};
    }
  }
  for (int s = 0; s < n_steps; s++) {
    const node *n = &g->nodes[steps[s]];
    for (int k = 0; k < n->n_outputs; k++) {
      int v = n->outputs[k];
      if (v < 0 || !g->values[v].shape_known || buffer_of[v] >= 0) continue;
      int whole = into ? into[v] : -1;
      if (whole >= 0) { /* a part of `whole`, written in place: its buffer from now on */
        if (buffer_of[whole] < 0) {
          buffer_of[whole] = nb;
          bufs[nb++] = (plan_buffer){0, s, g->values[whole].is_output ? n_steps : s};
        }
        buffer_of[v] = buffer_of[whole];
        continue;
      }
      int src = alias_of ? alias_of[v] : -1;
      if (src >= 0 && buffer_of[src] >= 0) {
        buffer_of[v] = buffer_of[src];
        if (g->values[v].is_output) bufs[buffer_of[v]].last = n_steps;
        continue;
      }
      buffer_of[v] = nb;
      bufs[nb++] = (plan_buffer){0, s, g->values[v].is_output ? n_steps : s};
    }
    for (int k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      if (v >= 0 && buffer_of[v] >= 0 && bufs[buffer_of[v]].last < s) bufs[buffer_of[v]].last = s;
    }
  }
  for (int v = 0; v < g->n_values; v++) {
    if (buffer_of[v] < 0 || (alias_of && alias_of[v] >= 0) || (into && into[v] >= 0))
      continue; /* sized by its source, or by the value it is a part of */
    const tensor *t = &g->values[v].t;
    int64_t size = tensor_nbytes_of(storage ? storage[v] : t->dtype, t->rank, t->dims);
    if (size < 0) {
      free(bufs);
      free(buffer_of);
      return infer_fail(INFER_ERR_INVALID_MODEL, "value '%s' is too large", g->values[v].name);
    }
    bufs[buffer_of[v]].size = size;
  }
  if (keep_all) /* config keep_values: every value stays readable after the run */
    for (int b = 0; b < nb; b++) bufs[b].last = n_steps;
  infer_status st = plan_assign_offsets(bufs, nb, p);
  free(bufs);
  if (st != INFER_OK) {
    free(buffer_of);
    return st;
  }
  *buffer_of_out = buffer_of;
  return INFER_OK;
}
