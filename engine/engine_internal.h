/* engine_internal.h: what the engine modules share (options, engine, context). */
#ifndef INFER_ENGINE_INTERNAL_H
#define INFER_ENGINE_INTERNAL_H

#include "../core/graph.h"
#include "../core/config.h"
#include "../core/log.h"
#include "../core/mem_budget.h"
#include "../include/infer.h"
#include "plan.h"

typedef struct input_shape {
  char *name; /* NULL: bound by index */
  int index;
  int rank;
  int64_t dims[INFER_MAX_RANK];
  infer_tensor value; /* data != NULL: the input is a build-time constant (owned) */
} input_shape;

/* infer_options_set_input_image: input `index` is fed as uint8 NHWC (engine/image_input.c) */
#define IMAGE_MAX_CHANNELS 16
typedef struct image_request {
  int index;
  int channels;
  float mean[IMAGE_MAX_CHANNELS], std[IMAGE_MAX_CHANNELS];
} image_request;

struct infer_options {
  infer_device device;
  int device_index;
  infer_precision precision;
  int64_t batch; /* 0: not set */
  int n_shapes;
  input_shape *shapes;
  log_sink log; /* verbosity and where lines go */
  bool cuda_graph;   /* capture runs into a CUDA graph (default on) */
  bool sync_each_op; /* synchronize after each GPU step to name failures */
  bool profile;      /* time each step of each run */
  int64_t workspace_limit; /* CUDA: most scratch one step's algorithm may use; 0: 1 GiB */
  /* infer_options_set_memory_limit: what an engine and its contexts may take; 0: no limit */
  int64_t host_memory_limit, device_memory_limit;
  /* algorithm cache file (CUDA), NULL when off; owned by the options object, and
   * in an engine's copy only while it builds */
  char *cache_path;
  config cfg; /* infer_options_set_config entries; the engine holds a copy */
  int n_images;
  image_request *images; /* owned by the options; an engine's copy only while it builds */
};

struct infer_engine {
  graph *g;
  struct infer_options opts; /* copied; shapes not kept */
  /* true when some shape is known only at run time (it depends on input data) */
  bool dynamic;
  int n_steps;
  int *steps; /* node indices, in run order */
  plan mem;   /* offsets of intermediates in one arena */
  int64_t max_batch; /* > 0: inputs with a batch dim accept any batch up to it */
  /* GPU engines run a smaller batch as the build batch's first rows, only when every
   * row is computed from its own input rows (engine/batch_rows.c); else why not */
  bool rows_independent;
  char rows_why[320];
  infer_build_timing build_time;
  int *buffer_of; /* value id -> plan buffer index, -1 if not planned */
  /* per graph input, NULL when no input is an image input: channels > 0 when input i is
   * fed as uint8 NHWC (`feed`: its dtype and dims) and normalized by the engine */
  struct image_feed *image;
  /* what the build and the contexts took of the memory limits (core/mem_budget.h): the
   * only part of an engine that changes after its build (atomically, by contexts) */
  mem_budget host_mem, device_mem;
  const struct backend *be; /* the device's backend (engine/backend.h) */
  void *be_state;           /* its build */
};


/* Build stages (engine/build.c, engine/passes.c) */
infer_status build_bind_ops(graph *g);
/* run_batch_computed: the backend computes a smaller flexible batch's rows itself
 * (backend.computes_run_batch), so batch inputs may change size per run. */
infer_status build_bind_inputs(graph *g, const struct infer_options *o, bool run_batch_computed);
/* Shape inference with constant folding; sets *dynamic when some shapes wait
 * for run-time data. A value above TENSOR_MAX_ELEMENTS (core/tensor_limits.h) is
 * refused; folded values take their bytes from budget (NULL: no limit) first. */
infer_status pass_infer_and_fold(graph *g, bool *dynamic, mem_budget *budget);
/* Whether each batch row of every value comes from the same input rows only (see
 * engine/batch_rows.c); when not, *why names the node. */
bool batch_rows_independent(const graph *g, const int *steps, int n_steps, char *why,
                            size_t cap);
/* Marks nodes whose results nobody reads as removed; returns the count. */
int pass_remove_dead(graph *g);
int graph_live_nodes(const graph *g);
/* Arithmetic (multiply-add = 2) and bytes of inputs + outputs of node n for the
 * given tensors (engine/step_cost.c). */
void step_cost(const node *n, const tensor *const *in, tensor *const *out, double *flops,
               double *bytes);
/* Plans one arena for the values the steps read and write (engine/plan_graph.c).
 * storage[v] overrides value v's dtype (device precision); NULL keeps them. alias_of[v]
 * (NULL: none) names the value whose bytes v shares (a view), or -1. into[v] (NULL:
 * none) names the value whose buffer v is written into (a part of it at an offset the
 * backend adds), or -1. keep_all: no buffer is reused, every value outlives the run.
 * *buffer_of (malloc'ed) maps value id -> buffer index in p, or -1. */
infer_status plan_graph(const graph *g, const int *steps, int n_steps,
                        const infer_dtype *storage, const int *alias_of, const int *into,
                        bool keep_all, plan *p, int **buffer_of);

/* engine/context.c, for engine/values.c: value v of the context's last run as float32 in
 * the backend's layout (refused while a run is in flight or before a successful one),
 * and the context's engine. */
infer_status context_read_value_f32(infer_context *c, int v, float *dst);
const infer_engine *context_engine(const infer_context *c);
/* engine/values.c: the id of the value called `name` that a run of e keeps (config
 * keep_values=1: every non-constant value a step writes, and the graph inputs), else -1
 * with a message saying why. */
int engine_kept_value(const infer_engine *e, const char *name);
/* Value v of c's last run as float32 in ONNX layout (NCHW for a channels_last value)
 * into dst (its element count). */
infer_status context_read_value_onnx(infer_context *c, int v, float *dst);
/* The step that writes value v in e (-1 for a graph input). */
int engine_step_of(const infer_engine *e, int v);

#endif
