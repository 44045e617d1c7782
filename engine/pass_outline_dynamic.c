/* pass_outline_dynamic.c: the part of a graph whose shapes depend on run-time data
 * (NonZero, NonMaxSuppression, Unique, a TopK of computed K, an If whose branches differ,
 * and everything reading what they give) moved into one HostRegion node
 * (ops/control_region.c), so that every other step keeps the shapes the plan was made
 * for. The CUDA backend runs that node's subgraph on the host through its host fallback,
 * in stream order, sized at each run by the CPU's own run-time inference: a detector's
 * backbone and heads stay on the GPU with fixed buffers, its post-processing (score
 * thresholds, NMS, the gathers of the survivors) runs where data-dependent sizes cost
 * nothing to allocate. The region's outputs that other steps read have shapes known at
 * build (a reader of an unknown shape would itself be in the region); its graph outputs
 * may not, and are handed out from the host (engine/cuda/cuda_context.c).
 *
 * The region is the smallest convex set holding every node with a value of unknown
 * shape: those nodes, and every node on a path between two of them (downstream of one,
 * upstream of another), so that no step outside needs the region's results before it
 * ends nor feeds it after. (Today's infer-and-fold leaves every value computed from one
 * of unknown shape unknown too, so the region is everything downstream of its first
 * node; the closure keeps the region whole should inference learn more.) Nodes move with their attributes and params (ownership goes
 * to the subgraph); the removed originals keep only their names. The region reads every
 * outside value, constants included, as a capture: constants stay in the main graph. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "../ops/op.h"
#include "passes.h"

static bool unknown(const graph *g, int v) { return v >= 0 && !g->values[v].shape_known; }

/* A value of the region copied from the main graph's v: name, type, shape, flags. */
static int region_value(graph *r, const value *src, value_kind kind) {
  int v = graph_add_value(r, src->name);
  if (v < 0) return -1;
  value *d = &r->values[v];
  d->kind = kind;
  d->t = src->t;
  d->t.data = NULL;
  d->has_type = src->has_type;
  d->shape_known = src->shape_known;
  d->channels_last = src->channels_last;
  d->keep_fp32 = src->keep_fp32;
  d->shape_dep = src->shape_dep;
  return v;
}

/* Node i of g moved to the end of r's nodes (its arrays, attributes and params go with
 * it, value ids mapped through map); g keeps a removed husk with copies of its names. */
static infer_status move_node(graph *g, int i, graph *r, const int *map) {
  node *n = &g->nodes[i];
  char *name = strdup(n->name ? n->name : ""), *op_type = strdup(n->op_type),
       *domain = strdup(n->domain);
  if (!name || !op_type || !domain) {
    free(name);
    free(op_type);
    free(domain);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "outlining: out of memory");
  }
  node *m = &r->nodes[r->n_nodes++];
  *m = *n;
  m->removed = false;
  for (int k = 0; k < m->n_inputs; k++)
    if (m->inputs[k] >= 0) m->inputs[k] = map[m->inputs[k]];
  for (int k = 0; k < m->n_outputs; k++)
    if (m->outputs[k] >= 0) m->outputs[k] = map[m->outputs[k]];
  memset(n, 0, sizeof *n);
  n->name = name;
  n->op_type = op_type;
  n->domain = domain;
  n->opset = m->opset;
  n->model_index = m->model_index;
  n->removed = true;
  return INFER_OK;
}

infer_status pass_outline_dynamic(graph *g, int *moved, char *first, int first_cap) {
  *moved = 0;
  if (first_cap > 0) first[0] = 0;
  const int nn = g->n_nodes, nv = g->n_values;
  bool *in_dyn = calloc((size_t)nn + 1, 1), *down = calloc((size_t)nn + 1, 1),
       *up = calloc((size_t)nn + 1, 1), *feeds_up = calloc((size_t)nv + 1, 1),
       *outside_reads = calloc((size_t)nv + 1, 1);
  int *map = malloc(sizeof(int) * ((size_t)nv + 1)), *ins = malloc(sizeof(int) * ((size_t)nv + 1));
  int *outs = malloc(sizeof(int) * ((size_t)nv + 1));
  double *key = malloc(sizeof(double) * ((size_t)nn + 2));
  infer_status st = INFER_OK;
  graph *r = NULL;
  if (!in_dyn || !down || !up || !feeds_up || !outside_reads || !map || !ins || !outs || !key) {
    st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "outlining: out of memory");
    goto done;
  }
  /* the nodes with a value of unknown shape; downstream of them (forward); upstream of
   * them (backward, through the values the upstream nodes read) */
  int n_dyn = 0, first_dyn = -1;
  for (int i = 0; i < nn; i++) {
    const node *n = &g->nodes[i];
    if (n->removed) continue;
    for (int k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      in_dyn[i] |= unknown(g, v);
      int p = v >= 0 ? g->values[v].producer : -1;
      if (p >= 0 && !g->nodes[p].removed && down[p]) down[i] = true;
    }
    for (int k = 0; k < n->n_outputs; k++) in_dyn[i] |= unknown(g, n->outputs[k]);
    if (in_dyn[i]) {
      down[i] = true;
      if (first_dyn < 0) first_dyn = i;
      n_dyn++;
    }
  }
  if (n_dyn == 0) goto done;
  for (int i = nn - 1; i >= 0; i--) {
    const node *n = &g->nodes[i];
    if (n->removed) continue;
    up[i] = in_dyn[i];
    for (int k = 0; !up[i] && k < n->n_outputs; k++) up[i] = n->outputs[k] >= 0 && feeds_up[n->outputs[k]];
    for (int k = 0; up[i] && k < n->n_inputs; k++)
      if (n->inputs[k] >= 0) feeds_up[n->inputs[k]] = true;
  }
  /* in the region: down and up. Its inputs: what its nodes read and do not write; its
   * outputs: what they write and a node outside or the caller reads. */
  for (int v = 0; v < nv; v++) map[v] = -1;
  for (int i = 0; i < nn; i++) {
    const node *n = &g->nodes[i];
    bool in_r = !n->removed && down[i] && up[i];
    for (int k = 0; !n->removed && !in_r && k < n->n_inputs; k++)
      if (n->inputs[k] >= 0) outside_reads[n->inputs[k]] = true;
  }
  for (int o = 0; o < g->n_outputs; o++) outside_reads[g->outputs[o]] = true;
  if (!(r = graph_create()) || !(r->name = strdup("host region"))) {
    st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "outlining: out of memory");
    goto done;
  }
  int n_in = 0, n_out = 0, n_r = 0;
  for (int i = 0; i < nn; i++) {
    const node *n = &g->nodes[i];
    if (n->removed || !down[i] || !up[i]) continue;
    n_r++;
    for (int k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      if (v < 0 || map[v] >= 0) continue;
      if (unknown(g, v)) { /* a graph input of unknown shape: nothing could stage it */
        st = infer_fail(INFER_ERR_UNSUPPORTED, "value '%s' has a shape known only at run and "
                        "is not computed by a step (bind its shape at build)",
                        g->values[v].name);
        goto done;
      }
      if ((map[v] = region_value(r, &g->values[v], VALUE_INPUT)) < 0) goto oom;
      ins[n_in++] = v;
    }
    for (int k = 0; k < n->n_outputs; k++) {
      int v = n->outputs[k];
      if (v < 0) continue;
      if ((map[v] = region_value(r, &g->values[v], VALUE_INTERMEDIATE)) < 0) goto oom;
      if (outside_reads[v]) outs[n_out++] = v;
    }
  }
  r->captures = malloc(sizeof(int) * ((size_t)n_in + 1));
  r->capture_input = malloc(sizeof(int) * ((size_t)n_in + 1));
  r->outputs = malloc(sizeof(int) * ((size_t)n_out + 1));
  r->nodes = calloc((size_t)n_r + 1, sizeof(node));
  if (!r->captures || !r->capture_input || !r->outputs || !r->nodes) goto oom;
  r->cap_nodes = n_r + 1;
  r->n_captures = n_in;
  for (int c = 0; c < n_in; c++) {
    r->captures[c] = map[ins[c]];
    r->capture_input[c] = c;
  }
  r->n_outputs = n_out;
  for (int k = 0; k < n_out; k++) r->outputs[k] = map[outs[k]];
  /* the HostRegion node owns the region from here on, whatever fails later */
  int h = graph_add_node(g, n_in, n_out, 1);
  if (h < 0) goto oom;
  node *hn = &g->nodes[h];
  char name[300];
  snprintf(name, sizeof name, "host_region_from_%s", g->nodes[first_dyn].name);
  hn->attrs[0].name = strdup("region");
  hn->attrs[0].type = ATTR_GRAPH;
  hn->attrs[0].g = r;
  r = NULL;
  hn->name = strdup(name);
  hn->op_type = strdup("HostRegion");
  hn->domain = strdup("infer");
  if (!hn->attrs[0].name || !hn->name || !hn->op_type || !hn->domain) goto oom;
  hn->opset = 1;
  hn->model_index = -1;
  hn->n_captures = n_in;
  hn->op = &op_host_region;
  memcpy(hn->inputs, ins, sizeof(int) * (size_t)n_in);
  memcpy(hn->outputs, outs, sizeof(int) * (size_t)n_out);
  if (first_cap > 0) node_describe(g, first_dyn, first, first_cap);
  graph *region = hn->attrs[0].g;
  for (int i = 0; i < nn && st == INFER_OK; i++) {
    if (g->nodes[i].removed || !down[i] || !up[i]) continue;
    const node *n = &g->nodes[i];
    for (int k = 0; k < n->n_outputs; k++) /* inner values are the region's alone */
      if (n->outputs[k] >= 0) g->values[n->outputs[k]].producer = -1;
    st = move_node(g, i, region, map);
  }
  for (int k = 0; k < n_out; k++) g->values[outs[k]].producer = h;
  if (st == INFER_OK) st = pass_reparse(&g->nodes[h]);
  if (st != INFER_OK) goto done;
  /* before the region: what does not read from it; after: what does (a node downstream
   * of the region is downstream of a dynamic node, so `down`) */
  for (int i = 0; i < nn; i++) key[i] = down[i] && !up[i] ? nn + i : i;
  key[h] = nn - 0.5;
  st = pass_reorder_nodes(g, key);
  *moved = n_r;
  goto done;
oom:
  st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "outlining: out of memory");
done:
  graph_release(r);
  free(in_dyn);
  free(down);
  free(up);
  free(feeds_up);
  free(outside_reads);
  free(map);
  free(ins);
  free(outs);
  free(key);
  return st;
}
