/* control_region.c: HostRegion (domain infer), the node engine/pass_outline_dynamic.c
 * makes of the part of a graph whose shapes depend on run-time data. Its one graph
 * attribute, "region", holds the outlined nodes; every value they read from outside
 * (activations and constants alike) is a capture, so the node's inputs are all captures
 * and the subgraph has no formal inputs. It runs like an If of one branch: through the
 * backend's subgraph executor (op_exec.run_graph), on the host in a CUDA engine
 * (ops/cuda/cuda_host_fallback.c). Not in the registry: only the pass makes it. */
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "control_params.h"

static infer_status region_parse(const node *n, void **params) {
  const attr *a = node_attr(n, "region");
  if (!a || a->type != ATTR_GRAPH || !a->g)
    return infer_fail(INFER_ERR_INTERNAL, "HostRegion: attribute 'region' is not a graph");
  if (a->g->n_inputs != 0 || n->n_captures != n->n_inputs || a->g->n_outputs != n->n_outputs)
    return infer_fail(INFER_ERR_INTERNAL, "HostRegion: %d inputs, %d captures and %d outputs "
                      "do not match its region's %d inputs and %d outputs", n->n_inputs,
                      n->n_captures, n->n_outputs, a->g->n_inputs, a->g->n_outputs);
  control_params p = {.body = a->g};
  if (!(*params = malloc(sizeof p))) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  memcpy(*params, &p, sizeof p);
  return INFER_OK;
}

/* The outputs the region's build derived (the pass copies them from the main graph);
 * the others are known only after a run. */
static infer_status region_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  (void)in;
  const graph *r = ((const control_params *)params)->body;
  bool all = true;
  for (int k = 0; k < n->n_outputs; k++) {
    const value *v = &r->values[r->outputs[k]];
    if (!out[k]) continue;
    if (!v->shape_known) {
      all = false;
      continue;
    }
    *out[k] = v->t;
    out[k]->data = NULL;
  }
  return all ? INFER_OK : OP_NEEDS_DATA;
}

static infer_status region_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  (void)params, (void)in, (void)out, (void)ws;
  return infer_fail(INFER_ERR_INTERNAL, "%s runs through the backend's subgraph executor",
                    n->op_type);
}

static infer_status region_control(const node *n, const void *params, const tensor *const *in,
                                   tensor *const *out, op_exec *x) {
  return control_run_branch(n, ((const control_params *)params)->body, in, out, x);
}

static const char *const region_attrs[] = {"region", NULL};
const op_desc op_host_region = {.name = "HostRegion", .domain = "infer", .since = 1, .until = 1,
                                .min_inputs = 0, .max_inputs = 1 << 20, .min_outputs = 1,
                                .max_outputs = 1 << 20, .attrs = region_attrs,
                                .parse = region_parse, .infer = region_infer, .run = region_run,
                                .control = region_control};
