/* op.h: the op descriptor every op file fills in, and the helpers op code uses.
 *
 * Contract for op functions (all return a status and set a message through
 * infer_fail on failure; the engine adds which node failed):
 * - parse(n, &params): read and check attributes of n (only the names in
 *   `attrs` ever reach it; the engine rejects others), store them in ONE malloc'ed
 *   block (the engine frees it) or leave *params NULL. Invalid values ->
 *   INFER_ERR_INVALID_MODEL, valid but unimplemented -> INFER_ERR_UNSUPPORTED.
 * - infer(n, params, in, out): in[i] is NULL for an omitted optional input;
 *   in[i]->data is NULL when the value is not known before the run. Fill
 *   out[i]->dtype, rank and dims for each present output (out[i] NULL when the
 *   output is omitted). Reject unsupported dtypes with INFER_ERR_UNSUPPORTED. If an
 *   output shape depends on an input's data that is not known, return
 *   OP_NEEDS_DATA (no message needed): the engine then infers at run time.
 * - run(n, params, in, out): every in[i]->data is set; out[i] has dtype and shape
 *   from infer and data allocated (uninitialized) by the engine. `ws` is scratch
 *   memory of at least workspace(...) bytes (NULL when that is 0 or workspace is
 *   NULL). run never allocates: the engine sizes everything before the run.
 *   Returns INFER_OK or a runtime error.
 * - workspace(n, params, in, out): scratch bytes run needs for these shapes
 *   (in[i]->data may be NULL). Optional.
 */
#ifndef INFER_OP_H
#define INFER_OP_H

#include "../core/graph.h"
#include "../core/status.h"

#define OP_NEEDS_DATA ((infer_status)100)
#define OP_OPSET_MAX 28 /* newest default-domain opset the registry accepts */

typedef infer_status (*op_parse_fn)(const node *n, void **params);
typedef infer_status (*op_infer_fn)(const node *n, const void *params, const tensor *const *in,
                                    tensor *const *out);
typedef infer_status (*op_run_fn)(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out, void *ws);
typedef int64_t (*op_workspace_fn)(const node *n, const void *params, const tensor *const *in,
                                   tensor *const *out);

/* Control flow (If, Loop): the backend's way to run a subgraph (the backend that runs
 * the node provides it). */
typedef struct op_exec op_exec;
struct op_exec {
  /* Runs subgraph sg: in[i] are its formal inputs (sg->n_inputs of them), node_in the
   * control node's inputs (sg's captures are read from them); out[k] (sg->n_outputs)
   * receive each output's dtype, shape and data in fresh bytes from alloc. */
  infer_status (*run_graph)(op_exec *x, const graph *sg, const tensor *const *in,
                            const tensor *const *node_in, tensor *out);
  /* bytes that live until the run ends (NULL when out of memory) */
  void *(*alloc)(op_exec *x, int64_t bytes);
  void *state; /* the backend's */
  int depth;   /* subgraph depth of the graph holding the node: 0 for the main graph */
};
/* A control-flow op's run: out[k] get dtype, shape and data (from x->alloc). */
typedef infer_status (*op_control_fn)(const node *n, const void *params,
                                      const tensor *const *in, tensor *const *out, op_exec *x);
/* Output k of control node n as a run gave it (got) against the dtype and shape derived
 * at build (want; ops/control_shapes.c), which the backend planned its buffer for: OK
 * when they are the same, else INFER_ERR_RUNTIME saying both (the caller names the node). */
infer_status control_output_check(const node *n, int k, const tensor *want, const tensor *got);

typedef struct op_desc {
  const char *name;
  const char *domain; /* "" = ai.onnx */
  int since, until;   /* opset range, inclusive */
  int min_inputs, max_inputs, min_outputs, max_outputs;
  const char *const *attrs; /* accepted attribute names, NULL-terminated; NULL = none */
  op_parse_fn parse;        /* may be NULL: no attributes to read */
  op_infer_fn infer;
  op_run_fn run;
  op_workspace_fn workspace; /* may be NULL: no scratch */
  /* run() needs only the shapes (not the data) of its inputs (Shape, Size), so
   * it can be folded whenever input shapes are known. */
  bool fold_from_shape;
  /* Control flow: the node runs subgraphs through the backend (run is not called).
   * infer derives the output shapes at build where they do not depend on run-time data
   * (ops/control_shapes.c), else gives OP_NEEDS_DATA (the shapes come from the run). */
  op_control_fn control;
} op_desc;

/* HostRegion (domain infer, ops/control_region.c): the part of a graph whose shapes
 * depend on run-time data, outlined into one control node by engine/pass_outline_dynamic.c
 * (a subgraph in attribute "region", every outside value a capture). Not in the registry. */
extern const op_desc op_host_region;

/* ---- registry ----------------------------------------------------------- */

/* Descriptor for (domain, op_type) whose range covers opset, or NULL. When the
 * op exists for other opsets only, *known_op is set true. */
const op_desc *op_registry_find(const char *domain, const char *op_type, int64_t opset,
                                bool *known_op);
int op_registry_count(void);
const op_desc *op_registry_at(int i);

/* Each op family file exports one NULL-terminated list (ops/registry.c joins them). */
extern const op_desc *const ops_elementwise[];
extern const op_desc *const ops_activation[];
extern const op_desc *const ops_conv[];
extern const op_desc *const ops_pool[];
extern const op_desc *const ops_norm[];
extern const op_desc *const ops_matmul[];
extern const op_desc *const ops_reduce[];
extern const op_desc *const ops_shape[];
extern const op_desc *const ops_movement[];
extern const op_desc *const ops_matmul_fused[];
extern const op_desc *const ops_attention_fused[];
extern const op_desc *const ops_elementwise_chain[];
extern const op_desc *const ops_index[];
extern const op_desc *const ops_vision[];
extern const op_desc *const ops_quant[];
extern const op_desc *const ops_misc[];
extern const op_desc *const ops_control[];
extern const op_desc *const ops_recurrent[];
extern const op_desc *const ops_attention_onnx[];
extern const op_desc *const ops_signal[];

/* ---- attribute helpers (ops/attr.c) ---------------------------------------- */

const attr *node_attr(const node *n, const char *name);
/* Each returns INFER_OK with the default when the attribute is absent, and
 * INFER_ERR_INVALID_MODEL naming it when its type is wrong. */
infer_status attr_get_int(const node *n, const char *name, int64_t def, int64_t *out);
infer_status attr_get_float(const node *n, const char *name, float def, float *out);
infer_status attr_get_string(const node *n, const char *name, const char *def,
                             const char **out);
/* *count = -1 when absent; *v points into the node (do not free). */
infer_status attr_get_ints(const node *n, const char *name, const int64_t **v, int *count);
infer_status attr_get_floats(const node *n, const char *name, const float **v, int *count);

/* ---- shape helpers (ops/shape_util.c) --------------------------------------- */

/* Normalizes axis in [-rank, rank) to [0, rank); error naming `what` if outside. */
infer_status axis_normalize(int64_t axis, int rank, const char *what, int *out);
/* Multidirectional (numpy) broadcast of two shapes into out (rank, dims). */
infer_status broadcast_shapes(int ra, const int64_t *a, int rb, const int64_t *b, int *rank,
                              int64_t *dims);
/* Strides (in elements) of a C-ordered shape. */
void dims_strides(int rank, const int64_t *dims, int64_t *strides);
/* Strides of `in` seen through a broadcast to out (0 on broadcast dims). */
void broadcast_strides(int in_rank, const int64_t *in_dims, int out_rank, int64_t *strides);
/* Reads a 1-D (or scalar) integer tensor into v (cap entries); error if larger. */
infer_status tensor_read_ints(const tensor *t, const char *what, int64_t *v, int cap,
                              int *count);

#endif
