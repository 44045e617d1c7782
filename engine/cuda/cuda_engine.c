/* cuda_engine.c: the build half of the CUDA backend: device choice, weights upload
 * in the run precision, per-step preparation and the device memory plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ops/cuda/algo_cache.h"
#include "../cpu/cpu_internal.h"
#include "../passes.h"
#include "../image_input.h"
#include "cuda_concat_in_place.h"
#include "cuda_internal.h"

static infer_status device_alloc(void **p, int64_t bytes, const char *what) {
  if (bytes <= 0) bytes = 1;
  cudaError_t e = cudaMalloc(p, (size_t)bytes);
  if (e != cudaSuccess) {
    size_t free_b = 0, total = 0;
    cudaGetLastError();
    cudaMemGetInfo(&free_b, &total);
    *p = NULL;
    return infer_fail(e == cudaErrorMemoryAllocation ? INFER_ERR_OUT_OF_MEMORY : INFER_ERR_DEVICE,
                      "cannot allocate %lld bytes of device memory for %s (%zu of %zu free): %s",
                      (long long)bytes, what, free_b, total, cudaGetErrorString(e));
  }
  return INFER_OK;
}

/* Converts a host constant to its storage dtype (float32 -> float16 in fp16). */
static void convert_constant(const tensor *t, infer_dtype to, void *dst) {
  int64_t n = dims_count(t->rank, t->dims);
  if (to == t->dtype) {
    memcpy(dst, t->data, (size_t)tensor_nbytes(t));
    return;
  }
  uint16_t *h = dst;
  for (int64_t i = 0; i < n; i++) h[i] = float_to_half(((const float *)t->data)[i]);
}

static infer_status upload_weights(infer_engine *e, cuda_engine *ce) {
  const graph *g = e->g;
  int64_t total = 0;
  int64_t *offset = malloc(sizeof(int64_t) * ((size_t)g->n_values + 1));
  if (!offset) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int v = 0; v < g->n_values; v++) offset[v] = -1;
  for (int s = 0; s < e->n_steps; s++) {
    const node *n = &g->nodes[e->steps[s]];
    for (int k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      if (v < 0 || g->values[v].kind != VALUE_CONSTANT || offset[v] >= 0) continue;
      offset[v] = total;
      int64_t b = tensor_nbytes_of(ce->storage[v], g->values[v].t.rank, g->values[v].t.dims);
      total += (b + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN;
    }
  }
  /* graph outputs that folded to constants are copied out from the weights too */
  for (int o = 0; o < g->n_outputs; o++) {
    int v = g->outputs[o];
    if (g->values[v].kind != VALUE_CONSTANT || offset[v] >= 0) continue;
    offset[v] = total;
    int64_t b = tensor_nbytes_of(ce->storage[v], g->values[v].t.rank, g->values[v].t.dims);
    total += (b + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN;
  }
  ce->weights_bytes = total;
  /* the memory limits: the device copy stays taken (until the engine goes); the host
   * copy in the run precision only while it is uploaded */
  infer_status st = mem_budget_take(&e->device_mem, total, "the weights on the GPU");
  if (st == INFER_OK) st = mem_budget_take(&e->host_mem, total, "the weights' upload copy");
  bool host_taken = st == INFER_OK;
  if (st == INFER_OK) st = device_alloc(&ce->weights, total, "weights");
  uint8_t *host = st == INFER_OK ? malloc(total > 0 ? (size_t)total : 1) : NULL;
  if (st == INFER_OK && !host) st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  if (st == INFER_OK) {
    for (int v = 0; v < g->n_values; v++)
      if (offset[v] >= 0) {
        convert_constant(&g->values[v].t, ce->storage[v], host + offset[v]);
        ce->dev_const[v] = (uint8_t *)ce->weights + offset[v];
      }
    cudaError_t ce_ = cudaMemcpy(ce->weights, host, (size_t)(total > 0 ? total : 1), cudaMemcpyHostToDevice);
    if (ce_ != cudaSuccess)
      st = infer_fail(INFER_ERR_DEVICE, "uploading %lld bytes of weights failed: %s",
                      (long long)total, cudaGetErrorString(ce_));
  }
  free(host);
  if (host_taken) mem_budget_give(&e->host_mem, total);
  free(offset);
  return st;
}

/* Frees a step's prepared state (its op's release, else free) and clears it. */
static void step_state_release(cuda_step *cs) {
  if (!cs->state) return;
  if (cs->op && cs->op->release) cs->op->release(cs->state);
  else free(cs->state);
  cs->state = NULL;
}

/* Whether a control node's output v of unknown shape is handed out from the host: a
 * graph output (engine/pass_outline_dynamic.c leaves no other reader of one) of a node
 * the host fallback (config cuda.host_fallback) may run. */
static bool host_output(const infer_engine *e, const node *n, int v) {
  return config_flag(&e->opts.cfg, "cuda.host_fallback", true) && n->op && n->op->control &&
         e->g->values[v].is_output;
}

/* Whether step n may run its CPU reference on the host (cuda_host_fallback.c): config
 * cuda.host_fallback (on unless set to 0) and an op with a CPU reference; control flow
 * (If, Loop, Scan, HostRegion) only where its output shapes were derived at build
 * (ops/control_shapes.c), since the plan has fixed buffers for them, or are graph
 * outputs, which stay on the host. */
static bool host_fallback_allowed(const infer_engine *e, const node *n) {
  if (!config_flag(&e->opts.cfg, "cuda.host_fallback", true) || !n->op || !n->op->run)
    return false;
  for (int k = 0; n->op->control && k < n->n_outputs; k++)
    if (n->outputs[k] >= 0 && !e->g->values[n->outputs[k]].shape_known &&
        !host_output(e, n, n->outputs[k]))
      return false;
  return true;
}

static infer_status prepare_steps(infer_engine *e, cuda_engine *ce, cuda_exec *x) {
  const graph *g = e->g;
  char d[256];
  /* control flow on the host runs its subgraphs as the CPU backend does */
  const cuda_host_subgraphs sub = {.run_graph = cpu_subgraph_run, .budget = &e->host_mem};
  const tensor **in = calloc((size_t)ce->max_io, sizeof *in);
  const tensor **host_in = calloc((size_t)ce->max_io, sizeof *host_in);
  tensor **out = calloc((size_t)ce->max_io, sizeof *out);
  tensor *dev_in = calloc((size_t)ce->max_io, sizeof(tensor));
  tensor *dev_out = calloc((size_t)ce->max_io, sizeof(tensor));
  infer_status st = INFER_OK;
  if (!in || !host_in || !out || !dev_in || !dev_out)
    st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int s = 0; st == INFER_OK && s < e->n_steps; s++) {
    const node *n = &g->nodes[e->steps[s]];
    cuda_step *cs = &ce->steps[s];
    for (int k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      in[k] = host_in[k] = NULL;
      if (v < 0) continue;
      dev_in[k] = g->values[v].t;
      dev_in[k].dtype = ce->storage[v];
      dev_in[k].data = ce->dev_const[v];
      in[k] = &dev_in[k];
      if (g->values[v].kind == VALUE_CONSTANT) host_in[k] = &g->values[v].t;
    }
    for (int k = 0; k < n->n_outputs; k++) {
      int v = n->outputs[k];
      out[k] = NULL;
      if (v < 0) continue;
      dev_out[k] = g->values[v].t;
      dev_out[k].dtype = ce->storage[v];
      dev_out[k].data = NULL;
      out[k] = &dev_out[k];
    }
    int64_t ws = 0;
    bool pitch_taken = false; /* a Concat's part written in place (cuda_concat_in_place.c) */
    x->out_pitch = ce->out_pitch && n->n_outputs > 0 && n->outputs[0] >= 0
                       ? ce->out_pitch[n->outputs[0]] : 0;
    x->out_pitch_taken = &pitch_taken;
    if (cs->op != &cuda_op_host_fallback) {
      st = cs->op->prepare(x, n, n->params, in, host_in, out, &cs->state, &ws);
      /* a kernel that refuses this instance (an attribute or dtype it does not take)
       * leaves it to the host fallback, which --verbose names among the choices */
      if (st == INFER_ERR_UNSUPPORTED && host_fallback_allowed(e, n)) {
        log_info(&e->opts.log, "cuda: %s runs on the host: %s",
                 node_describe(g, cs->node, d, sizeof d), infer_last_error());
        step_state_release(cs);
        ws = 0;
        cs->op = &cuda_op_host_fallback;
      }
    }
    x->out_pitch = 0;
    x->out_pitch_taken = NULL;
    pitch_taken = pitch_taken && st == INFER_OK && cs->op != &cuda_op_host_fallback;
    concat_in_place_answer(ce, n, pitch_taken);
    if (pitch_taken)
      log_info(&e->opts.log, "cuda: %s writes its part of a Concat in place (%s)",
               node_describe(g, cs->node, d, sizeof d),
               cs->op->impl ? cs->op->impl(cs->state) : cs->op->name);
    if (cs->op == &cuda_op_host_fallback) {
      st = cuda_host_fallback_prepare(x, g, n, in, out, &sub, &cs->state);
      /* each such step's region in turn, after the failure flag */
      if (st == INFER_OK) ce->host_ws_bytes = cuda_host_fallback_place(cs->state, ce->host_ws_bytes);
    }
    if (st != INFER_OK) {
      st = infer_fail_prefix(st, "%s (GPU)", node_describe(g, cs->node, d, sizeof d));
      break;
    }
    if (ws > ce->ws_bytes) ce->ws_bytes = ws;
  }
  free(in);
  free(host_in);
  free(out);
  free(dev_in);
  free(dev_out);
  return st;
}

/* The cache only saves time: when the environment cannot be described, the build
 * goes on searching, with a warning. */
static algo_cache *cache_open(const infer_engine *e, int device) {
  char env[512];
  if (algo_cache_env(device, env, sizeof env) != INFER_OK) {
    log_warn(&e->opts.log, "algorithm cache %s not used: %s", e->opts.cache_path,
                infer_last_error());
    return NULL;
  }
  algo_cache *c = algo_cache_open(e->opts.cache_path, env, &e->opts.log);
  if (!c) log_warn(&e->opts.log, "algorithm cache %s not used: out of memory", e->opts.cache_path);
  return c;
}

/* A failed build saves nothing: its choices may come from a device in a bad state. */
static void cache_close(infer_engine *e, algo_cache *c, bool built) {
  if (!c) return;
  if (built) algo_cache_save(c);
  e->build_time.algo_cache_hits = algo_cache_hits(c);
  e->build_time.algo_cache_misses = algo_cache_misses(c);
  log_info(&e->opts.log, "cuda: algorithm cache %s: %d hits, %d misses", e->opts.cache_path,
             algo_cache_hits(c), algo_cache_misses(c));
  algo_cache_close(c);
}

/* Whether step k transposes graph input i (float32 stored as float16, 4-D) from
 * NCHW to NHWC and is its only reader. */
static bool input_transpose(const infer_engine *e, const cuda_engine *ce, int k, int *input) {
  const graph *g = e->g;
  const node *n = &g->nodes[ce->steps[k].node];
  if (strcmp(n->op_type, "Transpose") != 0 || n->n_inputs != 1 || n->inputs[0] < 0) return false;
  const int64_t *perm;
  int c = -1;
  if (attr_get_ints(n, "perm", &perm, &c) != INFER_OK || c != 4 || perm[0] != 0 ||
      perm[1] != 2 || perm[2] != 3 || perm[3] != 1)
    return false;
  int v = n->inputs[0];
  const value *val = &g->values[v];
  if (val->kind != VALUE_INPUT || val->is_output || val->t.rank != 4 ||
      val->t.dtype != INFER_DTYPE_FLOAT32 || ce->storage[v] != INFER_DTYPE_FLOAT16)
    return false;
  for (int j = 0; j < ce->n_steps; j++) {
    const node *m = &g->nodes[ce->steps[j].node];
    for (int q = 0; j != k && q < m->n_inputs; q++)
      if (m->inputs[q] == v) return false;
  }
  for (int i = 0; i < g->n_inputs; i++)
    if (g->inputs[i] == v) *input = i;
  return true;
}

/* Whether the bytes of node n's output are exactly those of its first input, in the same
 * order: Reshape, Flatten, Squeeze, Unsqueeze, Identity, and a Transpose that moves only
 * dims of size 1 (what the storage dtype is does not matter: both sides share it). */
static bool same_bytes(const graph *g, const node *n, const cuda_engine *ce) {
  static const char *const views[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity",
                                      NULL};
  if (n->n_inputs < 1 || n->n_outputs != 1 || n->inputs[0] < 0 || n->outputs[0] < 0) return false;
  const value *x = &g->values[n->inputs[0]], *y = &g->values[n->outputs[0]];
  if (x->kind == VALUE_CONSTANT || !x->shape_known || !y->shape_known ||
      ce->storage[n->inputs[0]] != ce->storage[n->outputs[0]] ||
      dims_count(x->t.rank, x->t.dims) != dims_count(y->t.rank, y->t.dims))
    return false;
  bool known = false;
  for (int k = 0; views[k]; k++) known |= pass_node_is(n, views[k]);
  if (known) return true;
  if (!pass_node_is(n, "Transpose")) return false;
  const int64_t *perm;
  int c = -1;
  if (attr_get_ints(n, "perm", &perm, &c) != INFER_OK || c != x->t.rank) return false;
  int last = -1; /* the dims of size > 1 keep their order */
  for (int i = 0; i < c; i++) {
    if (x->t.dims[perm[i]] == 1) continue;
    if (perm[i] < last) return false;
    last = (int)perm[i];
  }
  return true;
}

/* Views instead of copies: steps whose output has its input's bytes alias the input in
 * the memory plan and run nothing. */
static infer_status find_views(const infer_engine *e, cuda_engine *ce) {
  const graph *g = e->g;
  ce->alias_of = malloc(sizeof(int) * ((size_t)g->n_values + 1));
  if (!ce->alias_of) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int v = 0; v < g->n_values; v++) ce->alias_of[v] = -1;
  int views = 0;
  for (int k = 0; k < ce->n_steps; k++) {
    const node *n = &g->nodes[ce->steps[k].node];
    if (ce->step_skip[k] != STEP_RUNS || !same_bytes(g, n, ce)) continue;
    ce->alias_of[n->outputs[0]] = n->inputs[0];
    ce->step_skip[k] = STEP_VIEW;
    views++;
  }
  log_info(&e->opts.log, "cuda: %d steps are views of their input (no copy)", views);
  return INFER_OK;
}

/* The input casts of a channels-last engine do the Transposes that lead its steps.
 * Only leading steps: their outputs' arena slots are then free before the first
 * step, where the casts write them. */
static infer_status fuse_input_transposes(const infer_engine *e, cuda_engine *ce) {
  const graph *g = e->g;
  ce->in_transpose = malloc(sizeof(int) * ((size_t)g->n_inputs + 1));
  ce->step_skip = calloc((size_t)ce->n_steps + 1, 1);
  if (!ce->in_transpose || !ce->step_skip) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < g->n_inputs; i++) ce->in_transpose[i] = -1;
  int input = -1;
  for (int k = 0; k < ce->n_steps && input_transpose(e, ce, k, &input); k++) {
    if (input < 0 || ce->in_transpose[input] >= 0) break;
    ce->in_transpose[input] = k;
    ce->step_skip[k] = STEP_INPUT_CAST;
    log_info(&e->opts.log, engine_image_feed(e, input)
                               ? "cuda: input '%s' (uint8 NHWC) is normalized straight into "
                                 "NHWC float16 in one pass, no transpose"
                               : "cuda: input '%s' is cast and transposed to NHWC in one pass",
             g->values[g->inputs[input]].name);
  }
  return INFER_OK;
}

/* Where run-time shapes start: the first step with an output of unknown shape whose inputs
 * all have known shapes (NonZero, NonMaxSuppression, a TopK of computed K, an If whose
 * branches differ, a Loop of a trip count known only at run), or -1; *count: the steps
 * with an output of unknown shape (a control node's graph outputs, given from the host,
 * aside: engine/pass_outline_dynamic.c leaves only those). */
static int dynamic_source(const infer_engine *e, int *count) {
  const graph *g = e->g;
  int src = -1;
  *count = 0;
  for (int s = 0; s < e->n_steps; s++) {
    const node *n = &g->nodes[e->steps[s]];
    bool out_unknown = false, in_known = true;
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0 && !g->values[n->outputs[k]].shape_known &&
          !host_output(e, n, n->outputs[k]))
        out_unknown = true;
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0 && !g->values[n->inputs[k]].shape_known) in_known = false;
    if (!out_unknown) continue;
    (*count)++;
    if (src < 0 && in_known) src = e->steps[s];
  }
  return src;
}

/* The graph outputs a host step gives from the host (shapes known only at run). */
static infer_status find_host_outputs(const infer_engine *e, cuda_engine *ce) {
  const graph *g = e->g;
  ce->host_out_step = malloc(sizeof(int) * ((size_t)g->n_outputs + 1));
  ce->host_out_slot = malloc(sizeof(int) * ((size_t)g->n_outputs + 1));
  if (!ce->host_out_step || !ce->host_out_slot)
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int o = 0; o < g->n_outputs; o++) {
    ce->host_out_step[o] = ce->host_out_slot[o] = -1;
    if (g->values[g->outputs[o]].shape_known) continue;
    for (int s = 0; s < ce->n_steps && ce->host_out_step[o] < 0; s++) {
      const node *n = &g->nodes[ce->steps[s].node];
      for (int k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] == g->outputs[o] && ce->steps[s].op == &cuda_op_host_fallback) {
          ce->host_out_step[o] = s;
          ce->host_out_slot[o] = k;
        }
    }
    if (ce->host_out_step[o] < 0)
      return infer_fail(INFER_ERR_INTERNAL, "graph output '%s' has a shape known only at run "
                        "and no host step gives it", g->values[g->outputs[o]].name);
    log_info(&e->opts.log, "cuda: output '%s' has a shape known only at run: it is handed out "
             "from the host (at most %d bytes, config cuda.dynamic_output_bytes)",
             g->values[g->outputs[o]].name,
             config_int(&e->opts.cfg, "cuda.dynamic_output_bytes", 8 << 20));
  }
  return INFER_OK;
}

static infer_status build_locked(infer_engine *e, cuda_engine **out);
static void release_locked(cuda_engine *ce);
static void log_impls(const infer_engine *e, const cuda_engine *ce);

infer_status cuda_engine_build(infer_engine *e, void **out) {
  cuda_device_work_begin();
  infer_status st = build_locked(e, (cuda_engine **)out);
  cuda_device_work_end();
  return st;
}

static infer_status build_locked(infer_engine *e, cuda_engine **out) {
  *out = NULL;
  const graph *g = e->g;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    /* the runtime's own words for a missing driver ("CUDA driver version is
     * insufficient for CUDA runtime version") mislead: say what is missing */
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    cudaGetLastError();
    if (driver == 0)
      return infer_fail(INFER_ERR_DEVICE, "no NVIDIA driver is loaded on this machine, so "
                        "there is no CUDA device (nvidia-smi must work first)");
    if (driver < runtime)
      return infer_fail(INFER_ERR_DEVICE, "the NVIDIA driver supports CUDA %d.%d, older than "
                        "this build's CUDA runtime %d.%d: update the driver", driver / 1000,
                        (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10);
    return infer_fail(INFER_ERR_DEVICE, "no CUDA device is visible (%s)",
                      err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
  }
  if (e->opts.device_index >= count)
    return infer_fail(INFER_ERR_DEVICE, "CUDA device %d asked for, but only %d visible",
                      e->opts.device_index, count);
  int n_dyn = 0, src = e->dynamic ? dynamic_source(e, &n_dyn) : -1;
  if (n_dyn > 0) {
    char d[256];
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "%d step%s shapes that depend on run-time data, from %s on; the CUDA "
                      "backend runs those on the host (config outline_dynamic, with "
                      "cuda.host_fallback), which %s, and needs every other shape at build "
                      "time (bind shape inputs as constants, or run the model on the CPU "
                      "backend)", n_dyn, n_dyn == 1 ? " has" : "s have",
                      src >= 0 ? node_describe(g, src, d, sizeof d) : "an input",
                      !config_flag(&e->opts.cfg, "cuda.host_fallback", true)
                          ? "config cuda.host_fallback=0 keeps off"
                          : "config outline_dynamic=0 keeps off");
  }
  cuda_engine *ce = calloc(1, sizeof *ce);
  if (!ce) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  ce->device = e->opts.device_index;
  ce->precision = e->opts.precision;
  ce->storage = malloc(sizeof(infer_dtype) * ((size_t)g->n_values + 1));
  ce->dev_const = calloc((size_t)g->n_values + 1, sizeof(void *));
  ce->steps = calloc((size_t)e->n_steps + 1, sizeof(cuda_step));
  if (!ce->storage || !ce->dev_const || !ce->steps) {
    release_locked(ce);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  ce->n_steps = e->n_steps;
  ce->max_io = 1;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].n_inputs > ce->max_io) ce->max_io = g->nodes[i].n_inputs;
    if (g->nodes[i].n_outputs > ce->max_io) ce->max_io = g->nodes[i].n_outputs;
  }
  for (int v = 0; v < g->n_values; v++) {
    infer_dtype dt = g->values[v].t.dtype;
    /* mixed precision: values pass_fp32.c keeps in float32 stay float32 */
    ce->storage[v] = (ce->precision == INFER_PRECISION_FP16 && dt == INFER_DTYPE_FLOAT32 &&
                      !g->values[v].keep_fp32)
                         ? INFER_DTYPE_FLOAT16 : dt;
  }
  struct cudaDeviceProp prop;
  infer_status st = INFER_OK;
  if ((err = cudaSetDevice(ce->device)) != cudaSuccess ||
      (err = cudaGetDeviceProperties(&prop, ce->device)) != cudaSuccess) {
    st = infer_fail(INFER_ERR_DEVICE, "CUDA device %d: %s", ce->device, cudaGetErrorString(err));
  } else {
    snprintf(ce->device_name, sizeof ce->device_name, "%s", prop.name);
    ce->sm_count = prop.multiProcessorCount;
  }
  if (st == INFER_OK) st = upload_weights(e, ce);
  char d[256];
  for (int s = 0; st == INFER_OK && s < e->n_steps; s++) {
    const node *n = &g->nodes[e->steps[s]];
    cuda_step *cs = &ce->steps[s];
    cs->node = e->steps[s];
    cs->op = cuda_op_find(n->domain, n->op_type);
    /* config cuda.host_fallback=1: the CPU reference, on the host in stream order */
    if (!cs->op && host_fallback_allowed(e, n)) {
      cs->op = &cuda_op_host_fallback;
      log_info(&e->opts.log, "cuda: %s runs on the host: the op has no GPU kernel",
               node_describe(g, cs->node, d, sizeof d));
    }
    if (!cs->op)
      st = infer_fail(INFER_ERR_UNSUPPORTED, "%s: the op has no GPU implementation, %s",
                      node_describe(g, cs->node, d, sizeof d),
                      !config_flag(&e->opts.cfg, "cuda.host_fallback", true)
                          ? "and config cuda.host_fallback=0 keeps it off the host"
                          : "and no CPU reference the host fallback could run");
    else
      ce->needs |= cs->op->needs;
  }
  cuda_exec x;
  memset(&x, 0, sizeof x);
  if (st == INFER_OK) st = cuda_exec_open(&x, ce->device, ce->precision, ce->needs);
  x.ws_limit = e->opts.workspace_limit > 0 ? e->opts.workspace_limit : (int64_t)1 << 30;
  x.cfg = &e->opts.cfg;
  algo_cache *cache = NULL;
  if (st == INFER_OK && e->opts.cache_path) x.algo_cache = cache = cache_open(e, ce->device);
  int concat_asked = 0;
  if (st == INFER_OK) st = concat_in_place_find(e, ce, &concat_asked);
  if (st == INFER_OK) st = prepare_steps(e, ce, &x);
  if (st == INFER_OK) st = find_host_outputs(e, ce);
  if (st == INFER_OK && concat_asked)
    log_info(&e->opts.log, "cuda: %d of %d Concat parts written in place by their producers",
             concat_in_place_count(e, ce), concat_asked);
  cache_close(e, cache, st == INFER_OK);
  /* cuDNN graph-API plans made at build keep a reference to the build's handle: it
   * lives as long as the engine (detached from the build's stream, which goes) */
  if (x.cudnn) {
    cudnnSetStream((cudnnHandle_t)x.cudnn, NULL);
    ce->build_cudnn = x.cudnn;
    x.cudnn = NULL;
  }
  cuda_exec_close(&x);
  if (st == INFER_OK) st = fuse_input_transposes(e, ce);
  if (st == INFER_OK) st = find_views(e, ce);
  if (st == INFER_OK)
    st = plan_graph(g, e->steps, e->n_steps, ce->storage, ce->alias_of, ce->into,
                    config_flag(&e->opts.cfg, "keep_values", false), &ce->mem, &ce->buffer_of);
  if (st != INFER_OK) {
    release_locked(ce);
    return st;
  }
  log_info(&e->opts.log,
             "cuda: %s (%d SMs), precision %s: weights %lld bytes, arena %lld bytes (naive sum "
             "of intermediates %lld), workspace %lld bytes, %d steps",
             ce->device_name, ce->sm_count,
             ce->precision == INFER_PRECISION_FP16 ? "fp16"
             : ce->precision == INFER_PRECISION_TF32 ? "tf32" : "fp32",
             (long long)ce->weights_bytes, (long long)ce->mem.arena_bytes,
             (long long)ce->mem.naive_bytes, (long long)ce->ws_bytes, ce->n_steps);
  log_impls(e, ce);
  *out = ce;
  return INFER_OK;
}

/* --verbose: how many steps each implementation runs ("wmma-1x1 x12, ..."), the choices
 * the build timed. */
static void log_impls(const infer_engine *e, const cuda_engine *ce) {
  const char *name[32];
  int count[32], n = 0;
  for (int s = 0; s < ce->n_steps; s++) {
    const cuda_step *cs = &ce->steps[s];
    if (!cs->op || !cs->op->impl) continue;
    const char *im = cs->op->impl(cs->state);
    int k = 0;
    while (k < n && strcmp(name[k], im) != 0) k++;
    if (k == n) {
      if (n == 32) continue;
      name[n] = im;
      count[n++] = 0;
    }
    count[k]++;
  }
  char line[1024];
  size_t len = 0;
  line[0] = 0;
  for (int k = 0; k < n && len < sizeof line; k++) {
    int w = snprintf(line + len, sizeof line - len, "%s%s x%d", k ? ", " : "", name[k], count[k]);
    len = w < 0 ? sizeof line : len + (size_t)w;
  }
  if (n) log_info(&e->opts.log, "cuda: implementations chosen: %s", line);
}

void cuda_engine_release(void *state) {
  cuda_engine *ce = state;
  if (!ce) return;
  cuda_device_work_begin();
  release_locked(ce);
  cuda_device_work_end();
}

static void release_locked(cuda_engine *ce) {
  for (int s = 0; s < ce->n_steps; s++) step_state_release(&ce->steps[s]);
  if (ce->build_cudnn) cudnnDestroy((cudnnHandle_t)ce->build_cudnn); /* after the plans */
  if (ce->weights) cudaFree(ce->weights);
  plan_free(&ce->mem);
  free(ce->buffer_of);
  free(ce->storage);
  free(ce->dev_const);
  free(ce->steps);
  free(ce->in_transpose);
  free(ce->step_skip);
  free(ce->alias_of);
  free(ce->into);
  free(ce->into_off);
  free(ce->out_pitch);
  free(ce->host_out_step);
  free(ce->host_out_slot);
  free(ce);
}

void cuda_engine_memory(const infer_engine *e, infer_memory_info *m) {
  const cuda_engine *ce = e->be_state;
  m->weights = ce->weights_bytes;
  m->arena = ce->mem.arena_bytes;
  m->workspace = ce->ws_bytes;
  m->naive = ce->mem.naive_bytes;
}

