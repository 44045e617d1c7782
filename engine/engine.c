/* engine.c: infer_engine_load (load -> validate -> bind -> infer/fold -> plan) and
 * the engine queries. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../loaders/onnx_loader.h"
#include "../ops/op.h"
#include "backend.h"
#include "engine_internal.h"
#include "image_input.h"
#include "passes.h"
#include "../core/status.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* The graph rewrites of engine/passes.h, each logged as nodes before -> after. */
static infer_status engine_run_passes(graph *g, const struct infer_options *o) {
  static const struct {
    const char *name;
    infer_status (*run)(graph *, int *);
    const char *counted; /* what the count the pass returns is */
  } passes[] = {{"remove-identity", pass_remove_identity, "removed"},
                {"fold-conv-bn", pass_fold_conv_bn, "removed"},
                {"bn-to-affine", pass_bn_to_affine, "rewritten"},
                {"cancel-transposes", pass_cancel_transposes, "removed"},
                {"fuse-chains", pass_fuse_chains, "removed"},
                /* every backend: the CPU runs FusedAttention's double-precision reference */
                {"fuse-attention-op", pass_fuse_attention_op, "rewritten"},
                {"fuse-attention", pass_fuse_attention, "removed"},
                {"move-row-transposes", pass_move_row_transposes, "removed"},
                {"fuse-conv-epilogue", pass_fuse_conv_epilogue, "removed"},
                {"fuse-matmul-epilogue", pass_fuse_matmul_epilogue, "removed"}};
  /* first: the MatMuls it makes meet cancel-transposes and the MatMul fusions */
  int before_em = graph_live_nodes(g), rewritten = 0;
  TRY(pass_einsum_to_matmul(g, &rewritten));
  log_info(&o->log, "pass einsum-to-matmul: nodes %d -> %d (%d Einsums rewritten)", before_em,
           graph_live_nodes(g), rewritten);
  for (size_t k = 0; k < sizeof passes / sizeof passes[0]; k++) {
    int before = graph_live_nodes(g), removed = 0;
    TRY(passes[k].run(g, &removed));
    log_info(&o->log, "pass %s: nodes %d -> %d (%d %s)", passes[k].name, before,
             graph_live_nodes(g), removed, passes[k].counted);
  }
  /* NHWC pays where tensor cores run the convolutions: fp16 on the GPU. Config
   * channels_last=0 keeps NCHW (to measure the difference); =1 forces the pass
   * elsewhere too (the CPU then checks it, slowly). */
  const char *set = config_get(&o->cfg, "channels_last");
  bool cl = o->device == INFER_DEVICE_CUDA && o->precision == INFER_PRECISION_FP16;
  if (set && strcmp(set, "auto") != 0) cl = set[0] == '1';
  if (cl) {
    int before = graph_live_nodes(g), added = 0;
    TRY(pass_to_channels_last(g, &added));
    log_info(&o->log, "pass to-channels-last: nodes %d -> %d (%d transposes added)", before,
               graph_live_nodes(g), added);
    int deferred = 0;
    TRY(pass_defer_clip(g, &deferred));
    log_info(&o->log, "pass defer-clip: nodes %d -> %d (%d clips moved into depthwise readers)",
               graph_live_nodes(g), graph_live_nodes(g), deferred);
    /* the NCHW <-> NHWC permutes it made Identities may have stood between a product
     * and its epilogue (ConvNeXt's layer scale and residual) */
    before = graph_live_nodes(g);
    int removed = 0;
    TRY(pass_fuse_matmul_epilogue(g, &removed));
    log_info(&o->log, "pass fuse-matmul-epilogue (channels-last): nodes %d -> %d (%d removed)",
             before, graph_live_nodes(g), removed);
  }
  /* int8 tensor-core convolutions for QDQ models: config int8=1 (off by default until
   * it has run on a GPU); on the CUDA backend the channels-last ones (what its int8
   * convolution takes), elsewhere every match (the CPU then checks the rewrite) */
  if (config_flag(&o->cfg, "int8", false)) {
    int before = graph_live_nodes(g), rewritten = 0, absorbed = 0;
    TRY(pass_int8_conv(g, o->device == INFER_DEVICE_CUDA, &rewritten, &absorbed));
    log_info(&o->log, "pass int8-conv: nodes %d -> %d (%d convolutions on int8 tensors, %d "
             "writing int8)", before, graph_live_nodes(g), rewritten, absorbed);
  }
  /* last: what the other passes left of elementwise chains, on its final layout */
  int before_ew = graph_live_nodes(g), fused = 0;
  TRY(pass_fuse_elementwise(g, &fused));
  log_info(&o->log, "pass fuse-elementwise: nodes %d -> %d (%d removed)", before_ew,
           graph_live_nodes(g), fused);
  before_ew = graph_live_nodes(g);
  TRY(pass_fuse_concat_chain(g, &fused));
  log_info(&o->log, "pass fuse-concat-chain: nodes %d -> %d (%d removed)", before_ew,
           graph_live_nodes(g), fused);
  before_ew = graph_live_nodes(g);
  TRY(pass_fuse_row_gather(g, &fused));
  log_info(&o->log, "pass fuse-row-gather: nodes %d -> %d (%d removed)", before_ew,
           graph_live_nodes(g), fused);
  return INFER_OK;
}

/* The CUDA backend folds with the build batch fixed (its steps have fixed shapes);
 * which values carry the batch (shape_dep) or were computed from it (data_dep, then
 * folded into constants) is marked afterwards, for engine/batch_rows.c. Removed
 * (folded) nodes count too: they are still in topological order. */
static void mark_batch_values(graph *g) {
  for (int v = 0; v < g->n_values; v++) {
    g->values[v].shape_dep = g->values[v].batch_input;
    g->values[v].data_dep = false;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const node *n = &g->nodes[i];
    bool dep = false, derived = false;
    for (int k = 0; k < n->n_inputs; k++) {
      const value *v = n->inputs[k] >= 0 ? &g->values[n->inputs[k]] : NULL;
      if (!v) continue;
      dep |= v->shape_dep;
      derived |= v->data_dep;
    }
    for (int k = 0; k < n->n_outputs; k++) {
      value *v = n->outputs[k] >= 0 ? &g->values[n->outputs[k]] : NULL;
      if (!v) continue;
      if (v->kind == VALUE_CONSTANT) v->data_dep = dep || derived; /* folded from the batch */
      else v->shape_dep = dep || derived;
    }
  }
}

static infer_status engine_build(infer_engine *e) {
  graph *g = e->g;
  double t0 = now_ms();
  const struct infer_options *o = &e->opts;
  TRY(graph_validate(g));
  TRY(build_bind_ops(g));
  TRY(build_bind_inputs(g, o, e->be->computes_run_batch));
  TRY(image_input_bind(e));
  int before = graph_live_nodes(g);
  TRY(pass_infer_and_fold(g, &e->dynamic, &e->host_mem));
  log_info(&o->log, "pass infer-and-fold: nodes %d -> %d%s", before, graph_live_nodes(g),
             e->dynamic ? " (some shapes depend on run-time data)" : "");
  /* mixed precision: marked before the fusion passes, placed after them (pass_fp32.c) */
  bool fp16 = (o->device == INFER_DEVICE_CUDA && o->precision == INFER_PRECISION_FP16) ||
              (o->device == INFER_DEVICE_CPU && config_flag(&o->cfg, "cpu.fp16_storage", false));
  int marked = 0;
  if (fp16) {
    TRY(pass_mark_fp32(g, config_get(&o->cfg, "precision.fp32_ops"),
                       config_get(&o->cfg, "precision.fp32_nodes"), &marked));
    log_info(&o->log, "pass mark-fp32: %d values kept in float32", marked);
  }
  TRY(engine_run_passes(g, o));
  if (fp16) {
    before = graph_live_nodes(g);
    int casts = 0, n32 = 0;
    TRY(pass_place_fp32(g, o->device == INFER_DEVICE_CUDA, &n32, &casts));
    log_info(&o->log, "pass place-fp32: nodes %d -> %d (%d in float32, %d casts placed)", before,
             graph_live_nodes(g), n32, casts);
  }
  before = graph_live_nodes(g);
  int dead = pass_remove_dead(g);
  log_info(&o->log, "pass remove-dead: nodes %d -> %d (%d removed)", before, graph_live_nodes(g),
             dead);
  /* data-dependent shapes: outlined into one host region where the backend runs it on
   * the host (CUDA with its host fallback), or where config outline_dynamic=1 asks */
  const char *od = config_get(&o->cfg, "outline_dynamic");
  bool outline = o->device == INFER_DEVICE_CUDA && config_flag(&o->cfg, "cuda.host_fallback", true);
  if (od && strcmp(od, "auto") != 0) outline = od[0] == '1';
  if (e->dynamic && outline) {
    before = graph_live_nodes(g);
    int moved = 0;
    char first[256];
    TRY(pass_outline_dynamic(g, &moved, first, sizeof first));
    if (moved > 0)
      log_info(&o->log, "pass outline-dynamic: nodes %d -> %d (%d nodes whose shapes depend "
               "on run-time data, from %s on, and those between them, run as one host region)",
               before, graph_live_nodes(g), moved, first);
  }
  for (int o_ = 0; o_ < g->n_outputs; o_++) {
    const value *v = &g->values[g->outputs[o_]];
    if (!v->has_type && !e->dynamic)
      return infer_fail(INFER_ERR_INVALID_MODEL, "graph output '%s' has no inferred type",
                        v->name);
  }
  e->steps = malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
  if (!e->steps) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].removed) e->steps[e->n_steps++] = i;
  TRY(plan_graph(g, e->steps, e->n_steps, NULL, NULL, NULL, config_flag(&o->cfg, "keep_values", false),
                 &e->mem, &e->buffer_of));
  if (!e->be->computes_run_batch) mark_batch_values(g);
  for (int i = 0; i < g->n_inputs; i++)
    if (g->values[g->inputs[i]].shape_dep) e->max_batch = g->values[g->inputs[i]].t.dims[0];
  if (e->max_batch > 0) {
    e->rows_independent =
        batch_rows_independent(g, e->steps, e->n_steps, e->rows_why, sizeof e->rows_why);
    if (e->be->computes_run_batch || e->rows_independent)
      log_info(&o->log, "batch: runs take any batch from 1 to %lld (the plan is made for %lld)",
                 (long long)e->max_batch, (long long)e->max_batch);
    else
      log_info(&o->log, "batch: GPU runs take only batch %lld", (long long)e->max_batch);
    if (e->rows_independent)
      log_info(&o->log, "batch: rows are computed independently (a GPU engine runs a smaller "
                 "batch as the first rows of batch %lld)", (long long)e->max_batch);
    else
      log_info(&o->log, "batch: rows may mix: %s (a GPU engine runs only batch %lld)", e->rows_why,
                 (long long)e->max_batch);
  }
  log_info(&o->log, "plan: %d steps, arena %lld bytes (naive sum of intermediates %lld bytes)",
             e->n_steps, (long long)e->mem.arena_bytes, (long long)e->mem.naive_bytes);
  double t1 = now_ms();
  e->build_time.passes_ms = t1 - t0;
  TRY(e->be->build(e, &e->be_state));
  e->build_time.device_ms = now_ms() - t1;
  return INFER_OK;
}

infer_status infer_engine_load(const char *model_path, const infer_options *opts,
                               infer_engine **out) {
  if (!out || !model_path)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_engine_load: NULL argument");
  *out = NULL;
  infer_engine *e = calloc(1, sizeof *e);
  if (!e) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  if (opts) e->opts = *opts;
  else e->opts.cuda_graph = true;
  memset(&e->opts.cfg, 0, sizeof e->opts.cfg); /* the engine's own copy, below */
  infer_status cs = opts ? config_copy(&opts->cfg, &e->opts.cfg) : INFER_OK;
  if (cs != INFER_OK) {
    free(e);
    return cs;
  }
  e->opts.shapes = NULL; /* only needed while building */
  e->opts.n_shapes = 0;
  e->opts.images = NULL;
  e->opts.n_images = 0;
  e->be = backend_for(e->opts.device);
  if (!e->be) {
    config_clear(&e->opts.cfg);
    free(e);
    return infer_fail(INFER_ERR_DEVICE, "this build of infer has no CUDA backend (rebuild with "
                      "the CUDA toolkit and -DINFER_CUDA=ON); use the CPU device");
  }
  e->host_mem = (mem_budget){.limit = e->opts.host_memory_limit, .kind = "host"};
  e->device_mem = (mem_budget){.limit = e->opts.device_memory_limit, .kind = "device"};
  double t0 = now_ms();
  infer_status s = onnx_load_graph(model_path, &e->host_mem, &e->g);
  e->build_time.load_ms = now_ms() - t0;
  if (s == INFER_OK) {
    struct infer_options with_shapes = e->opts;
    if (opts) {
      with_shapes.shapes = opts->shapes;
      with_shapes.n_shapes = opts->n_shapes;
      with_shapes.images = opts->images;
      with_shapes.n_images = opts->n_images;
    }
    e->opts = with_shapes;
    s = engine_build(e);
    e->opts.shapes = NULL;
    e->opts.n_shapes = 0;
    e->opts.images = NULL;
    e->opts.n_images = 0;
    e->opts.cache_path = NULL; /* the caller's options own it and may go first */
  }
  if (s != INFER_OK) {
    infer_engine_release(e);
    return s;
  }
  *out = e;
  return INFER_OK;
}

void infer_engine_release(infer_engine *e) {
  if (!e) return;
  if (e->be_state) e->be->release(e->be_state);
  config_clear(&e->opts.cfg);
  graph_release(e->g);
  plan_free(&e->mem);
  free(e->steps);
  free(e->buffer_of);
  free(e->image);
  free(e);
}

int infer_engine_input_count(const infer_engine *e) { return e ? e->g->n_inputs : 0; }
int infer_engine_output_count(const infer_engine *e) { return e ? e->g->n_outputs : 0; }

static infer_status value_info(const infer_engine *e, int id, const char **name,
                               infer_tensor *info) {
  const value *v = &e->g->values[id];
  if (name) *name = v->name;
  if (info) {
    *info = v->t;
    info->data = NULL;
    if (!v->shape_known) /* known only after a run */
      for (int k = 0; k < info->rank; k++) info->dims[k] = -1;
  }
  return INFER_OK;
}

infer_status infer_engine_input_info(const infer_engine *e, int index, const char **name,
                                     infer_tensor *info) {
  if (!e || index < 0 || index >= e->g->n_inputs)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input index %d out of range", index);
  TRY(value_info(e, e->g->inputs[index], name, info));
  if (info) { /* what the caller feeds: an image input's uint8 NHWC */
    *info = *engine_input_tensor(e, index);
    info->data = NULL;
  }
  return INFER_OK;
}

infer_status infer_engine_output_info(const infer_engine *e, int index, const char **name,
                                      infer_tensor *info) {
  if (!e || index < 0 || index >= e->g->n_outputs)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "output index %d out of range", index);
  return value_info(e, e->g->outputs[index], name, info);
}

int infer_engine_input_index(const infer_engine *e, const char *name) {
  for (int i = 0; e && name && i < e->g->n_inputs; i++)
    if (strcmp(e->g->values[e->g->inputs[i]].name, name) == 0) return i;
  return -1;
}

int infer_engine_output_index(const infer_engine *e, const char *name) {
  for (int i = 0; e && name && i < e->g->n_outputs; i++)
    if (strcmp(e->g->values[e->g->outputs[i]].name, name) == 0) return i;
  return -1;
}

infer_status infer_engine_memory(const infer_engine *e, infer_memory_info *m) {
  if (!e || !m) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_engine_memory: NULL argument");
  memset(m, 0, sizeof *m);
  e->be->memory(e, m);
  return INFER_OK;
}

infer_status infer_engine_build_timing(const infer_engine *e, infer_build_timing *t) {
  if (!e || !t) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_engine_build_timing: NULL argument");
  *t = e->build_time;
  return INFER_OK;
}

int64_t infer_engine_max_batch(const infer_engine *e) {
  if (!e || (!e->be->computes_run_batch && !e->rows_independent)) return 0;
  return e->max_batch;
}
