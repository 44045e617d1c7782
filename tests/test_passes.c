/* test_passes.c: the graph passes of engine/passes.h.
 *
 * 1. Hand-built graphs: each pass runs on a graph, the structure is checked (which
 *    nodes went, what the survivors read and write, untouched initializers), and the
 *    graph is run on the CPU before and after the pass by a small interpreter here:
 *    the outputs must agree.
 * 2. The models of tests/passes (made by gen_passes.py with numpy references): the
 *    same checks on the loaded graph, then the public API with --verbose logging:
 *    the "pass NAME: nodes A -> B" lines and the outputs against numpy.
 *
 * Usage: test_passes [DIR]   (DIR: the tests/passes folder; compiled-in default) */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "engine/passes.h"
#include "loaders/onnx_loader.h"
#include "ops/attention_fused.h"
#include "ops/op.h"
#include "check.h"

#ifndef PASSES_DIR
#define PASSES_DIR "tests/passes"
#endif

/* ---- building graphs by hand ---------------------------------------------------- */

static int add_tensor_value(graph *g, const char *name, value_kind kind, infer_dtype dt, int rank,
                            const int64_t *dims) {
  int v = graph_add_value(g, name);
  value *val = &g->values[v];
  val->kind = kind;
  val->t.dtype = dt;
  val->t.rank = rank;
  for (int i = 0; i < rank; i++) val->t.dims[i] = dims[i];
  val->has_type = val->shape_known = true;
  return v;
}

static int add_input(graph *g, const char *name, infer_dtype dt, int rank, const int64_t *dims) {
  int v = add_tensor_value(g, name, VALUE_INPUT, dt, rank, dims);
  g->inputs = realloc(g->inputs, sizeof(int) * (size_t)(g->n_inputs + 1));
  g->inputs[g->n_inputs++] = v;
  return v;
}

/* A constant filled with f(i) = sin(0.7 i + seed) scaled, or with `data` (doubles). */
static int add_const(graph *g, const char *name, infer_dtype dt, int rank, const int64_t *dims,
                     const double *data, double seed) {
  int v = add_tensor_value(g, name, VALUE_CONSTANT, dt, rank, dims);
  tensor *t = &g->values[v].t;
  int64_t nb = tensor_nbytes(t), count = dims_count(rank, dims);
  t->data = calloc(1, (size_t)nb + 1);
  for (int64_t i = 0; i < count; i++)
    tensor_set_f64(t, i, data ? data[i] : sin(0.7 * (double)i + seed));
  return v;
}

static int add_var(graph *g, const char *name) { return graph_add_value(g, name); }

static void add_output(graph *g, int v) {
  g->outputs = realloc(g->outputs, sizeof(int) * (size_t)(g->n_outputs + 1));
  g->outputs[g->n_outputs++] = v;
  g->values[v].is_output = true;
}

/* A node with inputs/outputs given as -2-terminated lists and room for n_attrs. */
static int add_node(graph *g, const char *op, const char *name, const int *ins, const int *outs,
                    int n_attrs) {
  int ni = 0, no = 0;
  while (ins[ni] != -2) ni++;
  while (outs[no] != -2) no++;
  int i = graph_add_node(g, ni, no, n_attrs);
  node *n = &g->nodes[i];
  n->name = strdup(name);
  n->op_type = strdup(op);
  n->domain = strdup("");
  n->opset = 13;
  memcpy(n->inputs, ins, sizeof(int) * (size_t)ni);
  memcpy(n->outputs, outs, sizeof(int) * (size_t)no);
  n->n_attrs = 0; /* filled by set_attr_* */
  return i;
}

static attr *new_attr(graph *g, int i, const char *name, attr_type type) {
  node *n = &g->nodes[i];
  attr *a = &n->attrs[n->n_attrs++];
  memset(a, 0, sizeof *a);
  a->name = strdup(name);
  a->type = type;
  return a;
}

static void set_attr_ints(graph *g, int i, const char *name, int count, const int64_t *v) {
  attr *a = new_attr(g, i, name, ATTR_INTS);
  a->n = count;
  a->ints = malloc(sizeof(int64_t) * (size_t)count + 1);
  memcpy(a->ints, v, sizeof(int64_t) * (size_t)count);
}

static void set_attr_int(graph *g, int i, const char *name, int64_t v) {
  new_attr(g, i, name, ATTR_INT)->i = v;
}

static void set_attr_float(graph *g, int i, const char *name, float v) {
  new_attr(g, i, name, ATTR_FLOAT)->f = v;
}

/* What engine_build does before the passes (inputs already have shapes). */
static bool prepare(graph *g) {
  bool dynamic;
  if (graph_validate(g) != INFER_OK || build_bind_ops(g) != INFER_OK ||
      pass_infer_and_fold(g, &dynamic, NULL) != INFER_OK) {
    printf("FAIL preparing graph '%s': %s\n", g->name ? g->name : "", infer_last_error());
    failures++;
    return false;
  }
  return true;
}

static int node_named(const graph *g, const char *name) {
  for (int i = 0; i < g->n_nodes; i++)
    if (strcmp(g->nodes[i].name, name) == 0) return i;
  return -1;
}

static bool removed(const graph *g, const char *name) {
  int i = node_named(g, name);
  return i >= 0 && g->nodes[i].removed;
}

static bool live(const graph *g, const char *name) {
  int i = node_named(g, name);
  return i >= 0 && !g->nodes[i].removed;
}

/* ---- invariants every pass must keep -------------------------------------------- */

static void check_invariants(const graph *g, const char *what) {
  for (int i = 0; i < g->n_nodes; i++) {
    const node *n = &g->nodes[i];
    if (n->removed) continue;
    for (int k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      if (v < 0) continue;
      CHECK(v < g->n_values, "%s: node %s input %d is value %d of %d", what, n->name, k, v,
            g->n_values);
      if (g->values[v].kind != VALUE_INTERMEDIATE) continue;
      int p = pass_producer(g, v);
      CHECK(p >= 0 && p < i, "%s: node %s (index %d) reads '%s', produced by %d", what, n->name,
            i, g->values[v].name, p);
    }
    for (int k = 0; k < n->n_outputs; k++) {
      int v = n->outputs[k];
      if (v < 0) continue;
      CHECK(g->values[v].producer == i, "%s: node %s writes '%s' whose producer is %d", what,
            n->name, g->values[v].name, g->values[v].producer);
    }
  }
  for (int o = 0; o < g->n_outputs; o++) {
    int v = g->outputs[o];
    CHECK(g->values[v].kind != VALUE_INTERMEDIATE || pass_producer(g, v) >= 0,
          "%s: graph output '%s' has no live producer", what, g->values[v].name);
  }
}

/* ---- a small CPU interpreter over the live nodes ------------------------------- */

typedef struct run_result {
  int n;
  tensor *outs; /* owned copies */
} run_result;

static void result_free(run_result *r) {
  for (int i = 0; i < r->n; i++) free(r->outs[i].data);
  free(r->outs);
  memset(r, 0, sizeof *r);
}

/* Graph inputs: given tensors (inputs[k]) or, when NULL, a fixed pattern. */
static bool run_graph(const graph *g, const tensor *inputs, run_result *res) {
  tensor *vals = calloc((size_t)g->n_values + 1, sizeof(tensor));
  bool *owned = calloc((size_t)g->n_values + 1, sizeof(bool));
  const tensor *in[16];
  tensor *out[16];
  bool ok = true;
  for (int v = 0; v < g->n_values; v++) vals[v] = g->values[v].t;
  for (int k = 0; k < g->n_inputs; k++) {
    int v = g->inputs[k];
    if (g->values[v].kind == VALUE_CONSTANT) continue;
    int64_t nb = tensor_nbytes(&vals[v]), count = dims_count(vals[v].rank, vals[v].dims);
    vals[v].data = malloc((size_t)nb + 1);
    owned[v] = true;
    if (inputs) memcpy(vals[v].data, inputs[k].data, (size_t)nb);
    else
      for (int64_t i = 0; i < count; i++)
        tensor_set_f64(&vals[v], i, vals[v].dtype == INFER_DTYPE_BOOL ? 0 : cos(0.3 * (double)i + k));
  }
  for (int i = 0; i < g->n_nodes && ok; i++) {
    const node *n = &g->nodes[i];
    if (n->removed) continue;
    for (int k = 0; k < n->n_inputs; k++) in[k] = n->inputs[k] >= 0 ? &vals[n->inputs[k]] : NULL;
    for (int k = 0; k < n->n_outputs; k++) {
      int v = n->outputs[k];
      out[k] = v >= 0 ? &vals[v] : NULL;
      if (v >= 0 && !vals[v].data) {
        vals[v].data = malloc((size_t)tensor_nbytes(&vals[v]) + 1);
        owned[v] = true;
      }
    }
    int64_t w = n->op->workspace ? n->op->workspace(n, n->params, in, out) : 0;
    void *ws = w > 0 ? malloc((size_t)w) : NULL;
    if (n->op->run(n, n->params, in, out, ws) != INFER_OK) {
      printf("FAIL running node %s: %s\n", n->name, infer_last_error());
      failures++;
      ok = false;
    }
    free(ws);
  }
  if (ok) {
    res->n = g->n_outputs;
    res->outs = calloc((size_t)g->n_outputs + 1, sizeof(tensor));
    for (int o = 0; o < g->n_outputs; o++) {
      const tensor *t = &vals[g->outputs[o]];
      res->outs[o] = *t;
      int64_t nb = tensor_nbytes(t);
      res->outs[o].data = malloc((size_t)nb + 1);
      if (t->data) memcpy(res->outs[o].data, t->data, (size_t)nb);
      else {
        printf("FAIL: graph output %d was not written\n", o);
        failures++;
        ok = false;
      }
    }
  }
  for (int v = 0; v < g->n_values; v++)
    if (owned[v]) free(vals[v].data);
  free(vals);
  free(owned);
  return ok;
}

static void compare(const char *what, const tensor *got, const tensor *want, double rtol,
                    double atol) {
  if (!got->data) {
    printf("FAIL %s: no data\n", what);
    failures++;
    return;
  }
  if (got->dtype != want->dtype || !dims_equal(got->rank, got->dims, want->rank, want->dims)) {
    char a[96], b[96];
    printf("FAIL %s: got %s %s, want %s %s\n", what, infer_dtype_name(got->dtype),
           dims_format(got->rank, got->dims, a, sizeof a), infer_dtype_name(want->dtype),
           dims_format(want->rank, want->dims, b, sizeof b));
    failures++;
    return;
  }
  int64_t count = dims_count(got->rank, got->dims), bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < count; i++) {
    double x = tensor_get_f64(got, i), y = tensor_get_f64(want, i), d = fabs(x - y);
    if (!(d <= atol + rtol * fabs(y))) bad++;
    if (d > worst || d != d) worst = d;
  }
  CHECK(bad == 0, "%s: %lld of %lld elements differ (max abs err %g)", what, (long long)bad,
        (long long)count, worst);
}

/* Runs `build` twice: once as is, once through `pass`; checks the removal count and
 * the invariants, runs both and compares. Returns the passed graph (caller
 * releases) for structural checks. */
typedef graph *(*build_fn)(void);
typedef infer_status (*pass_fn)(graph *, int *);

static graph *run_pass_case(const char *what, build_fn build, pass_fn pass, int want_removed,
                            double rtol) {
  graph *ref = build(), *g = build();
  if (!prepare(ref) || !prepare(g)) {
    graph_release(ref);
    graph_release(g);
    return NULL;
  }
  int before = graph_live_nodes(g), n_removed = -1;
  infer_status s = pass(g, &n_removed);
  CHECK(s == INFER_OK, "%s: pass failed: %s", what, infer_last_error());
  CHECK(n_removed == want_removed, "%s: removed %d nodes, want %d", what, n_removed,
        want_removed);
  CHECK(graph_live_nodes(g) == before - n_removed, "%s: live nodes %d -> %d but %d removed",
        what, before, graph_live_nodes(g), n_removed);
  check_invariants(g, what);
  run_result a = {0}, b = {0};
  if (run_graph(ref, NULL, &a) && run_graph(g, NULL, &b))
    for (int o = 0; o < a.n; o++) {
      char w[160];
      snprintf(w, sizeof w, "%s: output %d", what, o);
      compare(w, &b.outs[o], &a.outs[o], rtol, rtol * 1e-2);
    }
  result_free(&a);
  result_free(&b);
  graph_release(ref);
  return g;
}

#define END -2

/* ---- remove-identity -------------------------------------------------------------- */

/* X -> Identity -> Relu -> Dropout (mask read) -> Reshape (same) -> Cast (same)
 *   -> Transpose (identity perm) -> Neg -> Y ; Relu -> Reshape (other shape) -> R */
static graph *build_identity_chain(void) {
  graph *g = graph_create();
  int64_t d[3] = {2, 3, 4};
  double shape_same[3] = {2, 3, 4}, shape2[2] = {6, 4};
  int x = add_input(g, "X", INFER_DTYPE_FLOAT32, 3, d);
  int s_same = add_const(g, "shape_same", INFER_DTYPE_INT64, 1, (int64_t[]){3}, shape_same, 0);
  int s2 = add_const(g, "shape2", INFER_DTYPE_INT64, 1, (int64_t[]){2}, shape2, 0);
  int a = add_var(g, "a"), b = add_var(g, "b"), c = add_var(g, "c"), m = add_var(g, "mask");
  int e = add_var(g, "e"), f = add_var(g, "f"), t = add_var(g, "t"), y = add_var(g, "Y");
  int mf = add_var(g, "M"), r = add_var(g, "R");
  add_node(g, "Identity", "id", (int[]){x, END}, (int[]){a, END}, 0);
  add_node(g, "Relu", "relu", (int[]){a, END}, (int[]){b, END}, 0);
  add_node(g, "Dropout", "drop", (int[]){b, END}, (int[]){c, m, END}, 0);
  int cm = add_node(g, "Cast", "cast_mask", (int[]){m, END}, (int[]){mf, END}, 1);
  set_attr_int(g, cm, "to", INFER_DTYPE_FLOAT32);
  add_node(g, "Reshape", "reshape_same", (int[]){c, s_same, END}, (int[]){e, END}, 0);
  int cs = add_node(g, "Cast", "cast_same", (int[]){e, END}, (int[]){f, END}, 1);
  set_attr_int(g, cs, "to", INFER_DTYPE_FLOAT32);
  int tp = add_node(g, "Transpose", "transpose_id", (int[]){f, END}, (int[]){t, END}, 1);
  set_attr_ints(g, tp, "perm", 3, (int64_t[]){0, 1, 2});
  add_node(g, "Neg", "neg", (int[]){t, END}, (int[]){y, END}, 0);
  add_node(g, "Reshape", "reshape_other", (int[]){b, s2, END}, (int[]){r, END}, 0);
  add_output(g, y);
  add_output(g, mf);
  add_output(g, r);
  return g;
}

static void test_identity_chain(void) {
  graph *g = run_pass_case("identity chain", build_identity_chain, pass_remove_identity, 4, 0);
  if (!g) return;
  CHECK(removed(g, "id") && removed(g, "reshape_same") && removed(g, "cast_same") &&
            removed(g, "transpose_id"),
        "identity chain: Identity, same-shape Reshape, same-dtype Cast, identity Transpose go");
  CHECK(live(g, "drop") && live(g, "reshape_other") && live(g, "cast_mask"),
        "identity chain: Dropout with a read mask and a real Reshape stay");
  int x = graph_find_value(g, "X"), c = graph_find_value(g, "c");
  CHECK(g->nodes[node_named(g, "relu")].inputs[0] == x, "identity chain: Relu reads X");
  CHECK(g->nodes[node_named(g, "neg")].inputs[0] == c, "identity chain: Neg reads c");
  graph_release(g);
}

/* Graph output rules: Relu -> Identity -> Y (retarget: Relu writes Y, Sigmoid reads
 * Y); Identity(X) -> Z (X is a graph input: stays); Identity(r2) -> W where r2 is
 * itself a graph output: stays; Dropout with training_mode a graph input: stays;
 * Dropout with an unread mask: goes. */
static graph *build_identity_outputs(void) {
  graph *g = graph_create();
  int64_t d[2] = {3, 5};
  int x = add_input(g, "X", INFER_DTYPE_FLOAT32, 2, d);
  int tm = add_input(g, "training", INFER_DTYPE_BOOL, 0, d);
  int r = add_var(g, "r"), y = add_var(g, "Y"), s = add_var(g, "S"), z = add_var(g, "Z");
  int r2 = add_var(g, "R2"), w = add_var(g, "W"), dr = add_var(g, "dr"), m = add_var(g, "m");
  int dt = add_var(g, "DT"), e = add_var(g, "E");
  add_node(g, "Relu", "relu", (int[]){x, END}, (int[]){r, END}, 0);
  add_node(g, "Identity", "id_y", (int[]){r, END}, (int[]){y, END}, 0);
  add_node(g, "Sigmoid", "sigmoid", (int[]){r, END}, (int[]){s, END}, 0);
  add_node(g, "Identity", "id_z", (int[]){x, END}, (int[]){z, END}, 0);
  add_node(g, "Tanh", "tanh", (int[]){x, END}, (int[]){r2, END}, 0);
  add_node(g, "Identity", "id_w", (int[]){r2, END}, (int[]){w, END}, 0);
  add_node(g, "Dropout", "drop_mask_unread", (int[]){s, END}, (int[]){dr, m, END}, 0);
  add_node(g, "Exp", "exp", (int[]){dr, END}, (int[]){e, END}, 0);
  add_node(g, "Dropout", "drop_training_input", (int[]){x, -1, tm, END}, (int[]){dt, END}, 0);
  add_output(g, y);
  add_output(g, s);
  add_output(g, z);
  add_output(g, r2);
  add_output(g, w);
  add_output(g, e);
  add_output(g, dt);
  return g;
}

static void test_identity_outputs(void) {
  graph *g = run_pass_case("identity outputs", build_identity_outputs, pass_remove_identity, 2, 0);
  if (!g) return;
  int y = graph_find_value(g, "Y"), r = graph_find_value(g, "r"), s = graph_find_value(g, "S");
  int relu = node_named(g, "relu");
  CHECK(removed(g, "id_y") && g->nodes[relu].outputs[0] == y && g->values[y].producer == relu,
        "identity outputs: Relu now writes graph output Y");
  CHECK(g->nodes[node_named(g, "sigmoid")].inputs[0] == y, "identity outputs: Sigmoid reads Y");
  CHECK(pass_producer(g, r) < 0, "identity outputs: nobody writes r any more");
  CHECK(live(g, "id_z") && live(g, "id_w"), "identity outputs: Identity of an input or of "
                                             "another output stays");
  CHECK(removed(g, "drop_mask_unread") && g->nodes[node_named(g, "exp")].inputs[0] == s,
        "identity outputs: Dropout with an unread mask goes");
  CHECK(live(g, "drop_training_input"), "identity outputs: Dropout with a run-time "
                                         "training_mode stays");
  graph_release(g);
}

/* ---- fold-conv-bn ----------------------------------------------------------------- */

/* X -> Conv(W, no bias, group 2) -> BN -> Relu -> Y ; X -> Conv(W, B) -> Y2 (same
 * W, no BN) ; X -> Conv(W, B) -> c3 -> BN(scale is a graph input) -> Y3 ;
 * Conv -> c4 (graph output) -> BN -> Y4 ; Conv(f16 weights) path on X16 -> BN -> Y5. */
static graph *build_conv_bn(void) {
  graph *g = graph_create();
  int64_t dx[4] = {1, 4, 5, 5}, dw[4] = {6, 2, 3, 3}, d6[1] = {6};
  int x = add_input(g, "X", INFER_DTYPE_FLOAT32, 4, dx);
  int sc_in = add_input(g, "scale_in", INFER_DTYPE_FLOAT32, 1, d6);
  int x16 = add_input(g, "X16", INFER_DTYPE_FLOAT16, 4, dx);
  int w = add_const(g, "W", INFER_DTYPE_FLOAT32, 4, dw, NULL, 0.1);
  int w16 = add_const(g, "W16", INFER_DTYPE_FLOAT16, 4, dw, NULL, 0.2);
  int b = add_const(g, "B", INFER_DTYPE_FLOAT32, 1, d6, NULL, 0.3);
  double scale[6] = {0.5, 1.5, 2, 0.8, 1, 1.2}, var[6] = {1, 0.5, 2, 0.25, 1.5, 3};
  int bs = add_const(g, "bn_s", INFER_DTYPE_FLOAT32, 1, d6, scale, 0);
  int bb = add_const(g, "bn_b", INFER_DTYPE_FLOAT32, 1, d6, NULL, 0.4);
  int bm = add_const(g, "bn_m", INFER_DTYPE_FLOAT32, 1, d6, NULL, 0.5);
  int bv = add_const(g, "bn_v", INFER_DTYPE_FLOAT32, 1, d6, var, 0);
  int bs16 = add_const(g, "bn_s16", INFER_DTYPE_FLOAT16, 1, d6, scale, 0);
  int bb16 = add_const(g, "bn_b16", INFER_DTYPE_FLOAT16, 1, d6, NULL, 0.4);
  int bm16 = add_const(g, "bn_m16", INFER_DTYPE_FLOAT16, 1, d6, NULL, 0.5);
  int bv16 = add_const(g, "bn_v16", INFER_DTYPE_FLOAT16, 1, d6, var, 0);
  int c1 = add_var(g, "c1"), n1 = add_var(g, "n1"), y = add_var(g, "Y"), y2 = add_var(g, "Y2");
  int c3 = add_var(g, "c3"), y3 = add_var(g, "Y3"), c4 = add_var(g, "C4"), y4 = add_var(g, "Y4");
  int c5 = add_var(g, "c5"), y5 = add_var(g, "Y5");
  int k;
  k = add_node(g, "Conv", "conv1", (int[]){x, w, END}, (int[]){c1, END}, 2);
  set_attr_int(g, k, "group", 2);
  set_attr_ints(g, k, "pads", 4, (int64_t[]){1, 1, 1, 1});
  k = add_node(g, "BatchNormalization", "bn1", (int[]){c1, bs, bb, bm, bv, END},
               (int[]){n1, END}, 1);
  set_attr_float(g, k, "epsilon", 1e-3f);
  add_node(g, "Relu", "relu", (int[]){n1, END}, (int[]){y, END}, 0);
  k = add_node(g, "Conv", "conv2", (int[]){x, w, b, END}, (int[]){y2, END}, 1);
  set_attr_int(g, k, "group", 2);
  k = add_node(g, "Conv", "conv3", (int[]){x, w, b, END}, (int[]){c3, END}, 1);
  set_attr_int(g, k, "group", 2);
  add_node(g, "BatchNormalization", "bn3", (int[]){c3, sc_in, bb, bm, bv, END},
           (int[]){y3, END}, 0);
  k = add_node(g, "Conv", "conv4", (int[]){x, w, b, END}, (int[]){c4, END}, 1);
  set_attr_int(g, k, "group", 2);
  add_node(g, "BatchNormalization", "bn4", (int[]){c4, bs, bb, bm, bv, END}, (int[]){y4, END}, 0);
  k = add_node(g, "Conv", "conv5", (int[]){x16, w16, END}, (int[]){c5, END}, 1);
  set_attr_int(g, k, "group", 2);
  add_node(g, "BatchNormalization", "bn5", (int[]){c5, bs16, bb16, bm16, bv16, END},
           (int[]){y5, END}, 0);
  add_output(g, y);
  add_output(g, y2);
  add_output(g, y3);
  add_output(g, c4);
  add_output(g, y4);
  add_output(g, y5);
  return g;
}

/* Conv(W, B) -> BN -> graph output Y directly; X is float64. */
static graph *build_conv_bn_f64_output(void) {
  graph *g = graph_create();
  int64_t dx[3] = {2, 3, 7}, dw[3] = {4, 3, 2}, d4[1] = {4};
  double var[4] = {0.5, 1, 2, 4};
  int x = add_input(g, "X", INFER_DTYPE_FLOAT64, 3, dx);
  int w = add_const(g, "W", INFER_DTYPE_FLOAT64, 3, dw, NULL, 0.1);
  int b = add_const(g, "B", INFER_DTYPE_FLOAT64, 1, d4, NULL, 0.2);
  int bs = add_const(g, "bn_s", INFER_DTYPE_FLOAT64, 1, d4, NULL, 1.0);
  int bb = add_const(g, "bn_b", INFER_DTYPE_FLOAT64, 1, d4, NULL, 0.4);
  int bm = add_const(g, "bn_m", INFER_DTYPE_FLOAT64, 1, d4, NULL, 0.5);
  int bv = add_const(g, "bn_v", INFER_DTYPE_FLOAT64, 1, d4, var, 0);
  int c = add_var(g, "c"), y = add_var(g, "Y");
  int k = add_node(g, "Conv", "conv", (int[]){x, w, b, END}, (int[]){c, END}, 1);
  set_attr_ints(g, k, "strides", 1, (int64_t[]){2});
  add_node(g, "BatchNormalization", "bn", (int[]){c, bs, bb, bm, bv, END}, (int[]){y, END}, 0);
  add_output(g, y);
  return g;
}

static void test_conv_bn(void) {
  graph *g = run_pass_case("conv-bn", build_conv_bn, pass_fold_conv_bn, 1, 1e-4);
  if (g) {
    int w = graph_find_value(g, "W"), y = graph_find_value(g, "Y");
    int n1 = graph_find_value(g, "n1"), c1 = graph_find_value(g, "c1");
    int conv1 = node_named(g, "conv1");
    const node *cn = &g->nodes[conv1];
    CHECK(removed(g, "bn1"), "conv-bn: bn1 folds");
    CHECK(live(g, "bn3") && live(g, "bn4") && live(g, "bn5"),
          "conv-bn: BNs with a run-time scale, after a Conv writing a graph output, or on "
          "float16 stay");
    CHECK(cn->n_inputs == 3 && cn->inputs[1] != w && cn->inputs[2] >= 0,
          "conv-bn: conv1 reads new W' and B'");
    if (cn->n_inputs == 3) {
      const value *wf = &g->values[cn->inputs[1]], *bf = &g->values[cn->inputs[2]];
      CHECK(wf->kind == VALUE_CONSTANT && wf->t.data && wf->t.dtype == INFER_DTYPE_FLOAT32 &&
                dims_equal(wf->t.rank, wf->t.dims, 4, (int64_t[]){6, 2, 3, 3}),
            "conv-bn: W' is a float32 constant 6x2x3x3");
      CHECK(bf->kind == VALUE_CONSTANT && bf->t.data && bf->t.rank == 1 && bf->t.dims[0] == 6,
            "conv-bn: B' is a constant of 6");
      CHECK(strcmp(wf->name, "W/bn_folded") == 0, "conv-bn: W' is named '%s'", wf->name);
    }
    CHECK(cn->outputs[0] == n1 && g->values[n1].producer == conv1 && pass_producer(g, c1) < 0,
          "conv-bn: conv1 writes the BN's output");
    /* the shared initializer is untouched and still read by conv2..4 */
    const tensor *wt = &g->values[w].t;
    bool same = true;
    for (int64_t i = 0; i < dims_count(wt->rank, wt->dims); i++)
      if (tensor_get_f64(wt, i) != (double)(float)sin(0.7 * (double)i + 0.1)) same = false;
    CHECK(same, "conv-bn: W is unchanged");
    CHECK(g->nodes[node_named(g, "conv2")].inputs[1] == w, "conv-bn: conv2 still reads W");
    (void)y;
    graph_release(g);
  }
  g = run_pass_case("conv-bn f64 output", build_conv_bn_f64_output, pass_fold_conv_bn, 1, 1e-10);
  if (g) {
    int y = graph_find_value(g, "Y"), conv = node_named(g, "conv");
    CHECK(removed(g, "bn") && g->nodes[conv].outputs[0] == y && g->values[y].producer == conv,
          "conv-bn f64: the Conv writes graph output Y");
    CHECK(g->values[g->nodes[conv].inputs[1]].t.dtype == INFER_DTYPE_FLOAT64,
          "conv-bn f64: W' stays float64");
    graph_release(g);
  }
}

/* ---- cancel-transposes ------------------------------------------------------------ */

/* X -> T(1,0,2) -> T(1,0,2) -> Relu -> R       (cancel)
 * X -> T(0,2,1) -> T(2,1,0) -> Y               (compose: perm 1,2,0)
 * X -> T() -> t5 -> T() -> Exp -> E ; t5 -> Neg -> N  (cancel, first stays)
 * R -> T(2,0,1) -> T(1,2,0) -> Z               (cancel at a graph output)
 * X -> T(0,2,1) -> t9 (graph output T9) -> T(0,2,1) -> Tanh -> H  (cancel, first stays) */
static graph *build_transposes(void) {
  graph *g = graph_create();
  int64_t d[3] = {2, 3, 4};
  int x = add_input(g, "X", INFER_DTYPE_FLOAT32, 3, d);
  int t1 = add_var(g, "t1"), t2 = add_var(g, "t2"), r = add_var(g, "R"), t3 = add_var(g, "t3");
  int y = add_var(g, "Y"), t5 = add_var(g, "t5"), t6 = add_var(g, "t6"), e = add_var(g, "E");
  int nn = add_var(g, "N"), t7 = add_var(g, "t7"), z = add_var(g, "Z"), t9 = add_var(g, "T9");
  int t10 = add_var(g, "t10"), h = add_var(g, "H");
  int k;
  k = add_node(g, "Transpose", "t1", (int[]){x, END}, (int[]){t1, END}, 1);
  set_attr_ints(g, k, "perm", 3, (int64_t[]){1, 0, 2});
  k = add_node(g, "Transpose", "t2", (int[]){t1, END}, (int[]){t2, END}, 1);
  set_attr_ints(g, k, "perm", 3, (int64_t[]){1, 0, 2});
  add_node(g, "Relu", "relu", (int[]){t2, END}, (int[]){r, END}, 0);
  k = add_node(g, "Transpose", "t3", (int[]){x, END}, (int[]){t3, END}, 1);
  set_attr_ints(g, k, "perm", 3, (int64_t[]){0, 2, 1});
  k = add_node(g, "Transpose", "t4", (int[]){t3, END}, (int[]){y, END}, 1);
  set_attr_ints(g, k, "perm", 3, (int64_t[]){2, 1, 0});
  add_node(g, "Transpose", "t5", (int[]){x, END}, (int[]){t5, END}, 0);
  add_node(g, "Transpose", "t6", (int[]){t5, END}, (int[]){t6, END}, 0);
  add_node(g, "Exp", "exp", (int[]){t6, END}, (int[]){e, END}, 0);
  add_node(g, "Neg", "neg", (int[]){t5, END}, (int[]){nn, END}, 0);
  k = add_node(g, "Transpose", "t7", (int[]){r, END}, (int[]){t7, END}, 1);
  set_attr_ints(g, k, "perm", 3, (int64_t[]){2, 0, 1});
  k = add_node(g, "Transpose", "t8", (int[]){t7, END}, (int[]){z, END}, 1);
  set_attr_ints(g, k, "perm", 3, (int64_t[]){1, 2, 0});
  k = add_node(g, "Transpose", "t9", (int[]){x, END}, (int[]){t9, END}, 1);
  set_attr_ints(g, k, "perm", 3, (int64_t[]){0, 2, 1});
  k = add_node(g, "Transpose", "t10", (int[]){t9, END}, (int[]){t10, END}, 1);
  set_attr_ints(g, k, "perm", 3, (int64_t[]){0, 2, 1});
  add_node(g, "Tanh", "tanh", (int[]){t10, END}, (int[]){h, END}, 0);
  add_output(g, y);
  add_output(g, e);
  add_output(g, nn);
  add_output(g, z);
  add_output(g, t9);
  add_output(g, h);
  return g;
}

static void test_transposes(void) {
  graph *g = run_pass_case("transposes", build_transposes, pass_cancel_transposes, 7, 0);
  if (!g) return;
  int x = graph_find_value(g, "X"), z = graph_find_value(g, "Z");
  CHECK(removed(g, "t1") && removed(g, "t2") && g->nodes[node_named(g, "relu")].inputs[0] == x,
        "transposes: t1/t2 cancel, Relu reads X");
  int t4 = node_named(g, "t4");
  CHECK(removed(g, "t3") && live(g, "t4") && g->nodes[t4].inputs[0] == x,
        "transposes: t3 folds into t4, which reads X");
  const attr *perm = node_attr(&g->nodes[t4], "perm");
  CHECK(perm && perm->n == 3 && perm->ints[0] == 1 && perm->ints[1] == 2 && perm->ints[2] == 0,
        "transposes: t4's perm attribute is 1,2,0");
  CHECK(live(g, "t5") && removed(g, "t6") && g->nodes[node_named(g, "exp")].inputs[0] == x,
        "transposes: t6 goes, t5 stays for Neg, Exp reads X");
  int relu = node_named(g, "relu");
  CHECK(removed(g, "t7") && removed(g, "t8") && g->nodes[relu].outputs[0] == z,
        "transposes: t7/t8 cancel at graph output Z, which Relu now writes");
  CHECK(live(g, "t9") && removed(g, "t10") && g->nodes[node_named(g, "tanh")].inputs[0] == x,
        "transposes: t10 goes, t9 stays (its output is a graph output)");
  graph_release(g);
}

/* ---- fuse-attention-op ------------------------------------------------------------ */

/* An ONNX Attention node (opset 23) reading ins (-1: absent), writing outs (-1: unnamed). */
static int add_attention(graph *g, const char *name, const int *ins, const int *outs, int n_attrs) {
  int i = add_node(g, "Attention", name, ins, outs, n_attrs);
  g->nodes[i].opset = 23;
  return i;
}

/* Q [1, 4, 3, 8], K and V [1, 2, 5, 8] (4-D, grouped-query), and 3-D ones [1, 3, 16] /
 * [1, 5, 16] with 2 heads:
 *   fit:      4-D GQA, is_causal                                -> FusedAttention
 *   fit3d:    3-D, scale 0.3, qk_matmul_output named but unread -> FusedAttention
 *   masked:   4-D with an attn_mask [3, 5]                      stays
 *   past:     4-D with past_key / past_value [1, 2, 2, 8]       stays
 *   softcap:  4-D, softcap 2                                    stays
 *   qk_out:   4-D, qk_matmul_output a graph output              stays
 *   present:  3-D, present_key read by a Neg                    stays */
static graph *build_attention_ops(void) {
  graph *g = graph_create();
  int q = add_input(g, "Q", INFER_DTYPE_FLOAT32, 4, (int64_t[]){1, 4, 3, 8});
  int k = add_input(g, "K", INFER_DTYPE_FLOAT32, 4, (int64_t[]){1, 2, 5, 8});
  int v = add_input(g, "V", INFER_DTYPE_FLOAT32, 4, (int64_t[]){1, 2, 5, 8});
  int q3 = add_input(g, "Q3", INFER_DTYPE_FLOAT32, 3, (int64_t[]){1, 3, 16});
  int k3 = add_input(g, "K3", INFER_DTYPE_FLOAT32, 3, (int64_t[]){1, 5, 16});
  int v3 = add_input(g, "V3", INFER_DTYPE_FLOAT32, 3, (int64_t[]){1, 5, 16});
  int m = add_input(g, "M", INFER_DTYPE_FLOAT32, 2, (int64_t[]){3, 5});
  int pk = add_input(g, "PK", INFER_DTYPE_FLOAT32, 4, (int64_t[]){1, 2, 2, 8});
  int pv = add_input(g, "PV", INFER_DTYPE_FLOAT32, 4, (int64_t[]){1, 2, 2, 8});
  int y_fit = add_var(g, "Y_fit"), y3 = add_var(g, "Y3"), qk_unread = add_var(g, "qk_unread");
  int y_mask = add_var(g, "Y_masked"), y_past = add_var(g, "Y_past"), y_cap = add_var(g, "Y_cap");
  int y_qk = add_var(g, "Y_qk"), qk = add_var(g, "QK"), y_pres = add_var(g, "Y_pres");
  int pres = add_var(g, "present"), neg = add_var(g, "NEG");
  int i = add_attention(g, "fit", (int[]){q, k, v, END}, (int[]){y_fit, END}, 1);
  set_attr_int(g, i, "is_causal", 1);
  i = add_attention(g, "fit3d", (int[]){q3, k3, v3, -1, END},
                    (int[]){y3, -1, -1, qk_unread, END}, 3);
  set_attr_int(g, i, "q_num_heads", 2);
  set_attr_int(g, i, "kv_num_heads", 2);
  set_attr_float(g, i, "scale", 0.3f);
  add_attention(g, "masked", (int[]){q, k, v, m, END}, (int[]){y_mask, END}, 0);
  add_attention(g, "past", (int[]){q, k, v, -1, pk, pv, END}, (int[]){y_past, END}, 0);
  i = add_attention(g, "softcap", (int[]){q, k, v, END}, (int[]){y_cap, END}, 1);
  set_attr_float(g, i, "softcap", 2.0f);
  add_attention(g, "qk_out", (int[]){q, k, v, END}, (int[]){y_qk, -1, -1, qk, END}, 0);
  i = add_attention(g, "present", (int[]){q3, k3, v3, END}, (int[]){y_pres, pres, END}, 2);
  set_attr_int(g, i, "q_num_heads", 2);
  set_attr_int(g, i, "kv_num_heads", 2);
  add_node(g, "Neg", "neg", (int[]){pres, END}, (int[]){neg, END}, 0);
  const int outs[] = {y_fit, y3, y_mask, y_past, y_cap, y_qk, qk, y_pres, neg};
  for (size_t o = 0; o < sizeof outs / sizeof outs[0]; o++) add_output(g, outs[o]);
  return g;
}

static bool is_op(const graph *g, const char *name, const char *domain, const char *op) {
  int i = node_named(g, name);
  return i >= 0 && !g->nodes[i].removed && strcmp(g->nodes[i].domain, domain) == 0 &&
         strcmp(g->nodes[i].op_type, op) == 0;
}

/* The pass rewrites in place (no node goes): the two fitting nodes become FusedAttention
 * with GQA, the causal mask and the scale in their parameters; the others stay; every
 * output is the same before and after. */
static void test_attention_ops(void) {
  graph *ref = build_attention_ops(), *g = build_attention_ops();
  if (!prepare(ref) || !prepare(g)) {
    graph_release(ref);
    graph_release(g);
    return;
  }
  int before = graph_live_nodes(g), rewritten = -1;
  CHECK(pass_fuse_attention_op(g, &rewritten) == INFER_OK, "attention-op: pass failed: %s",
        infer_last_error());
  CHECK(rewritten == 2 && graph_live_nodes(g) == before,
        "attention-op: %d rewritten (want 2), live nodes %d -> %d", rewritten, before,
        graph_live_nodes(g));
  check_invariants(g, "attention-op");
  CHECK(is_op(g, "fit", "infer", "FusedAttention") && is_op(g, "fit3d", "infer", "FusedAttention"),
        "attention-op: fit and fit3d become FusedAttention");
  const char *kept[] = {"masked", "past", "softcap", "qk_out", "present"};
  for (int k = 0; k < 5; k++)
    CHECK(is_op(g, kept[k], "", "Attention"), "attention-op: %s stays Attention", kept[k]);
  int fit = node_named(g, "fit"), fit3d = node_named(g, "fit3d");
  if (is_op(g, "fit", "infer", "FusedAttention")) {
    const fused_attention_params *p = g->nodes[fit].params;
    const attn_view *kv = &p->view[ATTN_K];
    CHECK(p->kv_group == 2 && p->causal && p->causal_offset == 0 &&
              fabsf(p->scale - 1 / sqrtf(8)) < 1e-7f && kv->dims[1] == 2 && kv->strides[0] == 80,
          "attention-op: fit has kv_group %lld, causal %d, scale %g", (long long)p->kv_group,
          p->causal, p->scale);
  }
  if (is_op(g, "fit3d", "infer", "FusedAttention")) {
    const fused_attention_params *p = g->nodes[fit3d].params;
    const attn_view *o = &p->view[ATTN_O];
    CHECK(p->kv_group == 1 && !p->causal && p->scale == 0.3f && o->dims[1] == 2 &&
              o->dims[3] == 8 && o->strides[1] == 8 && o->strides[2] == 16,
          "attention-op: fit3d writes Y [1, 3, 2 * 8] as [1, 2, 3, 8]");
    CHECK(g->nodes[fit3d].n_outputs == 1 && pass_producer(g, graph_find_value(g, "qk_unread")) < 0,
          "attention-op: fit3d's unread qk_matmul_output has no producer any more");
  }
  run_result a = {0}, b = {0};
  if (run_graph(ref, NULL, &a) && run_graph(g, NULL, &b))
    for (int o = 0; o < a.n; o++) {
      char w[96];
      snprintf(w, sizeof w, "attention-op: output %d", o);
      compare(w, &b.outs[o], &a.outs[o], 1e-6, 1e-7);
    }
  result_free(&a);
  result_free(&b);
  graph_release(ref);
  graph_release(g);
}

/* ---- the ONNX models of tests/passes ---------------------------------------------- */

typedef struct model_case {
  const char *name;
  int n_outputs;
  double rtol, atol;
  const char *log[4]; /* expected lines (NULL-terminated) */
  const char *gone[12], *kept[12]; /* node names */
} model_case;

static const model_case models[] = {
    {"identity",
     3,
     1e-5,
     1e-6,
     {"pass remove-identity: nodes 14 -> 6 (8 removed)", "pass fold-conv-bn: nodes 6 -> 6",
      "pass cancel-transposes: nodes 6 -> 6", NULL},
     {"id_a", "drop_c", "drop_d", "reshape_same", "cast_same", "squeeze_none", "flatten_same",
      "id_Y", NULL},
     {"relu", "unsqueeze", "reshape_2d", "sigmoid", "id_Z", "id_Y2", NULL}},
    {"conv_bn",
     4,
     1e-4,
     1e-5,
     {"pass remove-identity: nodes 10 -> 10", "pass fold-conv-bn: nodes 10 -> 8 (2 removed)",
      "pass cancel-transposes: nodes 8 -> 8", NULL},
     {"bn1", "bn2", NULL},
     {"conv1", "conv2", "conv3", "conv4", "bn4", "add4", "bn5", NULL}},
    {"conv_bn_f64",
     1,
     1e-9,
     1e-12,
     {"pass fold-conv-bn: nodes 3 -> 2 (1 removed)", NULL},
     {"bn", NULL},
     {"conv", "tanh", NULL}},
    {"transpose",
     5,
     1e-5,
     1e-6,
     {"pass remove-identity: nodes 16 -> 16", "pass cancel-transposes: nodes 16 -> 7 (9 removed)",
      NULL},
     {"t1", "t2", "t3", "t6", "t7", "t8", "t9", "t10", "t11", NULL},
     {"t4", "t5", "relu", "sigmoid", "neg", "tanh", "exp", NULL}},
};

typedef struct log_lines {
  char text[4096];
} log_lines;

static void log_collect(void *user, const char *line) {
  log_lines *l = user;
  strncat(l->text, line, sizeof l->text - strlen(l->text) - 2);
  strcat(l->text, "\n");
}

static bool read_npy(const char *dir, const char *model, const char *kind, int k, tensor *t) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s_%s_%d.npy", dir, model, kind, k);
  if (infer_tensor_read_file(path, t, NULL) != INFER_OK) {
    printf("FAIL reading %s: %s\n", path, infer_last_error());
    failures++;
    return false;
  }
  return true;
}

/* The passes on the loaded graph, one by one, with the interpreter. */
static void test_model_graph(const char *dir, const model_case *mc, const tensor *x,
                             const tensor *refs) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.onnx", dir, mc->name);
  graph *g = NULL;
  struct infer_options o;
  memset(&o, 0, sizeof o);
  bool dynamic;
  if (onnx_load_graph(path, NULL, &g) != INFER_OK || graph_validate(g) != INFER_OK ||
      build_bind_ops(g) != INFER_OK || build_bind_inputs(g, &o, true) != INFER_OK ||
      pass_infer_and_fold(g, &dynamic, NULL) != INFER_OK) {
    printf("FAIL %s: loading: %s\n", path, infer_last_error());
    failures++;
    graph_release(g);
    return;
  }
  pass_fn passes[3] = {pass_remove_identity, pass_fold_conv_bn, pass_cancel_transposes};
  for (int p = 0; p < 3; p++) {
    int n_removed;
    CHECK(passes[p](g, &n_removed) == INFER_OK, "%s: pass %d: %s", mc->name, p,
          infer_last_error());
    check_invariants(g, mc->name);
  }
  for (int k = 0; mc->gone[k]; k++)
    CHECK(removed(g, mc->gone[k]), "%s: node %s should be gone", mc->name, mc->gone[k]);
  for (int k = 0; mc->kept[k]; k++)
    CHECK(live(g, mc->kept[k]), "%s: node %s should stay", mc->name, mc->kept[k]);
  run_result res = {0};
  if (run_graph(g, x, &res))
    for (int o_ = 0; o_ < res.n && o_ < mc->n_outputs; o_++) {
      char w[128];
      snprintf(w, sizeof w, "%s (graph) output %d", mc->name, o_);
      compare(w, &res.outs[o_], &refs[o_], mc->rtol, mc->atol);
    }
  result_free(&res);
  graph_release(g);
}

/* The public API: engine_build runs the passes; the log and outputs are checked. */
static void test_model_engine(const char *dir, const model_case *mc, const tensor *x,
                              const tensor *refs) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.onnx", dir, mc->name);
  log_lines log = {{0}};
  infer_options *o = NULL;
  infer_engine *e = NULL;
  infer_context *c = NULL;
  infer_options_create(&o);
  infer_options_set_verbose(o, 1);
  infer_options_set_log(o, log_collect, &log);
  infer_status s = infer_engine_load(path, o, &e);
  if (s == INFER_OK) s = infer_context_create(e, &c);
  if (s == INFER_OK) s = infer_context_set_input(c, 0, x);
  if (s == INFER_OK) s = infer_context_run(c);
  CHECK(s == INFER_OK, "%s: engine: %s", mc->name, infer_last_error());
  for (int k = 0; mc->log[k]; k++)
    CHECK(strstr(log.text, mc->log[k]) != NULL, "%s: log lacks '%s'; log:\n%s", mc->name,
          mc->log[k], log.text);
  for (int o_ = 0; s == INFER_OK && o_ < mc->n_outputs; o_++) {
    infer_tensor got;
    char w[128];
    snprintf(w, sizeof w, "%s (engine) output %d", mc->name, o_);
    if (infer_context_get_output(c, o_, &got) == INFER_OK)
      compare(w, &got, &refs[o_], mc->rtol, mc->atol);
  }
  infer_context_release(c);
  infer_engine_release(e);
  infer_options_release(o);
}

static void test_models(const char *dir) {
  for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
    const model_case *mc = &models[m];
    tensor x = {0}, refs[8] = {{0}};
    bool ok = read_npy(dir, mc->name, "in", 0, &x);
    for (int k = 0; ok && k < mc->n_outputs; k++) ok = read_npy(dir, mc->name, "out", k, &refs[k]);
    if (ok) {
      test_model_graph(dir, mc, &x, refs);
      test_model_engine(dir, mc, &x, refs);
    }
    infer_tensor_clear(&x);
    for (int k = 0; k < mc->n_outputs; k++) infer_tensor_clear(&refs[k]);
  }
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : PASSES_DIR;
  setvbuf(stdout, NULL, _IONBF, 0); /* keep the report if something crashes */
  test_identity_chain();
  test_identity_outputs();
  test_conv_bn();
  test_transposes();
  test_attention_ops();
  test_models(dir);
  if (failures) {
    printf("test_passes: %d failure(s)\n", failures);
    return 1;
  }
  printf("test_passes: all passed\n");
  return 0;
}
