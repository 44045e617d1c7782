/* cuda_context.c: the run half of the CUDA backend. A context owns one stream with
 * its library handles, the device arena and workspace, and pinned host staging.
 * A run is: H2D of the inputs, boundary casts into the run precision, every step
 * enqueued, casts back, D2H of the outputs (enqueue), then one synchronize (wait).
 * The enqueued sequence is captured once into a CUDA graph and replayed. Nothing in a
 * run takes a lock: contexts of one engine run concurrently on their streams (only a
 * capture excludes device-synchronizing work of other threads, cuda_capture_lock.c).
 * The pinned staging is what infer_context_input_buffer / output_buffer hand out.
 *
 * Image inputs (engine/image_input.h) arrive as uint8 NHWC: the H2D copies those bytes
 * and one kernel (kernels/cast.cu k_image_u8_nhwc) normalizes them into the input's
 * storage dtype, NCHW, or NHWC straight into the output of the leading Transpose of an
 * fp16 channels-last engine (in_transpose), which then runs nothing.
 *
 * Inputs and outputs bound to caller device memory (infer_context_bind_*_device)
 * skip the host: an input is copied device-to-device into its arena slot, or cast
 * straight from the caller's buffer where the storage dtype differs; an output is
 * copied or cast straight into the caller's buffer. The arena slot stays where ops
 * read and write (the memory plan may share it with other values), and a captured
 * graph has the caller's pointers baked in, so a change of binding re-captures.
 *
 * Test hook (tests/test_failures.c --device cuda): no op fails on the GPU on demand
 * without breaking the whole CUDA context (a faulting kernel poisons every context of
 * the process), so an engine built with the config entry test.fail_step=k (k >= 0; past
 * the last step means the last) fails one run of each context at step k the way an op's
 * run failing there would: that run is enqueued eagerly (not replayed from the CUDA
 * graph), steps before k really run, step k returns INFER_ERR_RUNTIME ("failure injected
 * by the test hook test.fail_step") and the context is failed for good. The failing run
 * is the (n+1)-th one for test.fail_after=n (default 0: the first). The hook swaps step
 * k's op for one that fails, for that one enqueue: the step loop knows nothing of it. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/cast.h"
#include "../image_input.h"
#include "cuda_internal.h"

_Static_assert(IMAGE_MAX_CHANNELS == K_IMAGE_MAX_CHANNELS, "image input channel limits differ");

struct cuda_context {
  infer_engine *e;
  cuda_engine *ce;
  int64_t host_taken, device_taken; /* of the engine's memory limits, at creation */
  cuda_exec x;
  void *arena;
  void *cublas_ws;
  tensor *vals; /* per value, device addresses, storage dtypes */
  const tensor **in;
  tensor **out;
  int n_in, n_out;
  void **in_host, **out_host;  /* pinned, model dtypes */
  void **in_dev, **out_dev;    /* device, model dtypes, when the storage differs (an
                                * image input's uint8 NHWC bytes) */
  const void **in_bind;        /* caller device memory bound to an input, or NULL */
  void **out_bind;             /* caller device memory bound to an output, or NULL */
  bool *out_staged; /* the last run copied the output to out_host (it was not bound) */
  int64_t *in_bytes, *out_bytes;
  cudaGraph_t graph;
  cudaGraphExec_t graph_exec;
  bool graph_stale; /* a binding changed since the capture: capture again */
  bool use_graph, sync_each_op;
  unsigned event_flags; /* cudaEventRecordExternal while capturing */
  bool poison; /* config cuda.poison=1: fill the arena and outputs with NaN bytes
                * before each run, so unwritten elements show up in tests */
  bool failed;
  int eager_runs; /* completed runs without a graph (the first one warms up) */
  int fail_step;  /* the test hook (test.fail_step, top of the file): -1 when off */
  int fail_after; /* runs before the one that fails (test.fail_after) */
  int hook_runs;  /* runs started while the hook is on */
  infer_status enq_status; /* what enqueueing the run in flight gave, for its wait */
  char enq_message[2048];
  const cuda_op **ops; /* per step, what runs it: the engine's, or fail_op for a hooked run */
  char failure[1024];
  cudaEvent_t ev[4]; /* before H2D, after H2D, after the steps, after D2H */
  cudaEvent_t *step_ev; /* profiling: one before each step and one after the last */
};

static int64_t bytes_of(const value *v) { return tensor_nbytes(&v->t); }

static infer_status injected_failure(const cuda_exec *x, const node *n, const void *params,
                                     const void *state, const tensor *const *in,
                                     tensor *const *out) {
  return infer_fail(INFER_ERR_RUNTIME, "failure injected by the test hook test.fail_step");
}
static const cuda_op fail_op = {.name = "injected failure", .run = injected_failure};

/* A step whose bytes are already in place: a Transpose the input cast did
 * (cuda_engine.in_transpose), or a view (cuda_engine.alias_of). */
static infer_status done_by_input_cast(const cuda_exec *x, const node *n, const void *params,
                                       const void *state, const tensor *const *in,
                                       tensor *const *out) {
  return INFER_OK;
}
static const cuda_op skip_op = {.name = "nothing to do", .run = done_by_input_cast};

/* A host-fallback step's CPU op failed in this context's run (the flag it sets, with its
 * message, ops/cuda/cuda_host_fallback.c); read after the stream has been synchronized. */
static bool host_fallback_failed(const cuda_context *c) {
  return c->x.host_ws && *(volatile const int *)c->x.host_ws != 0;
}

static infer_status create_locked(infer_engine *e, cuda_context **out);
static void release_locked(cuda_context *c);

infer_status cuda_context_create(infer_engine *e, void **out) {
  cuda_device_work_begin();
  infer_status st = create_locked(e, (cuda_context **)out);
  cuda_device_work_end();
  return st;
}

static infer_status create_locked(infer_engine *e, cuda_context **out) {
  *out = NULL;
  cuda_engine *ce = e->be_state;
  const graph *g = e->g;
  cuda_context *c = calloc(1, sizeof *c);
  if (!c) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  c->e = e;
  c->ce = ce;
  c->n_in = g->n_inputs;
  c->n_out = g->n_outputs;
  c->use_graph = e->opts.cuda_graph;
  c->sync_each_op = e->opts.sync_each_op;
  if (c->sync_each_op) c->use_graph = false;
  const config *cfg = &e->opts.cfg;
  c->poison = config_flag(cfg, "cuda.poison", false);
  c->fail_step = config_int(cfg, "test.fail_step", -1);
  if (c->fail_step >= ce->n_steps) c->fail_step = ce->n_steps - 1;
  c->fail_after = c->fail_step >= 0 ? config_int(cfg, "test.fail_after", 0) : 0;
  c->vals = calloc((size_t)g->n_values + 1, sizeof(tensor));
  c->in = calloc((size_t)ce->max_io, sizeof *c->in);
  c->out = calloc((size_t)ce->max_io, sizeof *c->out);
  c->in_host = calloc((size_t)c->n_in + 1, sizeof(void *));
  c->in_dev = calloc((size_t)c->n_in + 1, sizeof(void *));
  c->in_bytes = calloc((size_t)c->n_in + 1, sizeof(int64_t));
  c->out_host = calloc((size_t)c->n_out + 1, sizeof(void *));
  c->out_dev = calloc((size_t)c->n_out + 1, sizeof(void *));
  c->out_bytes = calloc((size_t)c->n_out + 1, sizeof(int64_t));
  c->in_bind = calloc((size_t)c->n_in + 1, sizeof(void *));
  c->out_bind = calloc((size_t)c->n_out + 1, sizeof(void *));
  c->out_staged = calloc((size_t)c->n_out + 1, sizeof(bool));
  c->ops = calloc((size_t)ce->n_steps + 1, sizeof *c->ops);
  for (int k = 0; c->ops && k < ce->n_steps; k++)
    c->ops[k] = ce->step_skip[k] != STEP_RUNS ? &skip_op : ce->steps[k].op;
  infer_status st = INFER_OK;
  if (!c->vals || !c->in || !c->out || !c->in_host || !c->in_dev || !c->in_bytes || !c->out_host ||
      !c->out_dev || !c->out_bytes || !c->in_bind || !c->out_bind || !c->out_staged || !c->ops) {
    st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    goto fail;
  }
  if ((st = cuda_exec_open(&c->x, ce->device, ce->precision, ce->needs)) != INFER_OK) goto fail;
  for (int i = 0; i < 4; i++)
    if (cudaEventCreate(&c->ev[i]) != cudaSuccess) {
      st = infer_fail(INFER_ERR_DEVICE, "cudaEventCreate failed");
      goto fail;
    }
  if (e->opts.profile) {
    /* the profiled run is not graph-replayed: events around every step */
    c->use_graph = false;
    c->step_ev = calloc((size_t)ce->n_steps + 1, sizeof(cudaEvent_t));
    if (!c->step_ev) {
      st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
      goto fail;
    }
    for (int i = 0; i <= ce->n_steps; i++)
      if (cudaEventCreate(&c->step_ev[i]) != cudaSuccess) {
        st = infer_fail(INFER_ERR_DEVICE, "cudaEventCreate failed");
        goto fail;
      }
  }
#define ALLOC_DEV(ptr, bytes, what)                                                     \
  do {                                                                                  \
    cudaError_t ae_ = cudaMalloc(&(ptr), (size_t)((bytes) > 0 ? (bytes) : 1));          \
    if (ae_ != cudaSuccess) {                                                           \
      size_t fr_ = 0, to_ = 0;                                                          \
      cudaGetLastError();                                                               \
      cudaMemGetInfo(&fr_, &to_);                                                       \
      st = infer_fail(INFER_ERR_OUT_OF_MEMORY,                                          \
                      "cannot allocate %lld bytes of device memory for %s (%zu free): %s", \
                      (long long)(bytes), what, fr_, cudaGetErrorString(ae_));          \
      goto fail;                                                                        \
    }                                                                                   \
  } while (0)
  /* the memory limits: everything below is taken from them before it is allocated */
  {
    int64_t dev = ce->mem.arena_bytes + ce->ws_bytes + (c->x.cublas ? 32 << 20 : 0), pinned = 0;
    for (int i = 0; i < c->n_in; i++) {
      int v = g->inputs[i];
      int64_t nb = tensor_nbytes(engine_input_tensor(e, i));
      pinned += nb;
      if ((ce->storage[v] != g->values[v].t.dtype || engine_image_feed(e, i)) &&
          g->values[v].kind != VALUE_CONSTANT)
        dev += nb;
    }
    for (int o = 0; o < c->n_out; o++) {
      int v = g->outputs[o];
      if (ce->host_out_step[o] >= 0) continue; /* in the host scratch */
      pinned += bytes_of(&g->values[v]);
      if (ce->storage[v] != g->values[v].t.dtype) dev += bytes_of(&g->values[v]);
    }
    pinned += ce->host_ws_bytes; /* the host-fallback steps' scratch */
    char what[200];
    snprintf(what, sizeof what, "a CUDA context (arena %lld + workspace %lld bytes, with "
             "inputs, outputs and cuBLAS's workspace %lld bytes in all)",
             (long long)ce->mem.arena_bytes, (long long)ce->ws_bytes, (long long)dev);
    if ((st = mem_budget_take(&e->device_mem, dev, what)) != INFER_OK) goto fail;
    c->device_taken = dev;
    snprintf(what, sizeof what, "a CUDA context's pinned input and output staging");
    if ((st = mem_budget_take(&e->host_mem, pinned, what)) != INFER_OK) goto fail;
    c->host_taken = pinned;
  }
  ALLOC_DEV(c->arena, ce->mem.arena_bytes, "the arena");
  if (ce->ws_bytes > 0) {
    ALLOC_DEV(c->x.ws, ce->ws_bytes, "the workspace");
    c->x.ws_bytes = ce->ws_bytes;
  }
  if (ce->host_ws_bytes > 0) { /* zeroed: its first word is the run's failure flag */
    if (cudaHostAlloc(&c->x.host_ws, (size_t)ce->host_ws_bytes, cudaHostAllocDefault) != cudaSuccess) {
      cudaGetLastError();
      c->x.host_ws = NULL;
      st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate %lld bytes of pinned memory "
                      "for the steps run on the host", (long long)ce->host_ws_bytes);
      goto fail;
    }
    memset(c->x.host_ws, 0, (size_t)ce->host_ws_bytes);
  }
  /* cuBLAS gets its own workspace so that it never allocates during capture */
  if (c->x.cublas) {
    ALLOC_DEV(c->cublas_ws, 32 << 20, "the cuBLAS workspace");
    if (cublasSetWorkspace((cublasHandle_t)c->x.cublas, c->cublas_ws, 32 << 20) != CUBLAS_STATUS_SUCCESS) {
      st = infer_fail(INFER_ERR_DEVICE, "cublasSetWorkspace failed");
      goto fail;
    }
  }
  for (int v = 0; v < g->n_values; v++) {
    c->vals[v] = g->values[v].t;
    c->vals[v].dtype = ce->storage[v];
    c->vals[v].data = g->values[v].kind == VALUE_CONSTANT ? ce->dev_const[v]
                      : ce->buffer_of[v] >= 0 ? (uint8_t *)c->arena + ce->mem.offsets[ce->buffer_of[v]]
                                              : NULL;
    /* a Concat's part written in place lies at its offset in the Concat's buffer */
    if (c->vals[v].data && ce->into && ce->into[v] >= 0)
      c->vals[v].data = (uint8_t *)c->vals[v].data + ce->into_off[v];
  }
  for (int i = 0; i < c->n_in; i++) {
    int v = g->inputs[i];
    c->in_bytes[i] = tensor_nbytes(engine_input_tensor(e, i)); /* what the caller feeds */
    if (cudaHostAlloc(&c->in_host[i], (size_t)(c->in_bytes[i] ? c->in_bytes[i] : 1), cudaHostAllocDefault) != cudaSuccess) {
      st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate %lld bytes of pinned memory",
                      (long long)c->in_bytes[i]);
      goto fail;
    }
    if ((ce->storage[v] != g->values[v].t.dtype || engine_image_feed(e, i)) &&
        g->values[v].kind != VALUE_CONSTANT)
      ALLOC_DEV(c->in_dev[i], c->in_bytes[i], "an input");
  }
  for (int o = 0; o < c->n_out; o++) {
    int v = g->outputs[o];
    c->out_bytes[o] = ce->host_out_step[o] >= 0 ? 0 : bytes_of(&g->values[v]);
    if (cudaHostAlloc(&c->out_host[o], (size_t)(c->out_bytes[o] ? c->out_bytes[o] : 1), cudaHostAllocDefault) != cudaSuccess) {
      st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate %lld bytes of pinned memory",
                      (long long)c->out_bytes[o]);
      goto fail;
    }
    if (ce->storage[v] != g->values[v].t.dtype && ce->host_out_step[o] < 0)
      ALLOC_DEV(c->out_dev[o], c->out_bytes[o], "an output");
  }
#undef ALLOC_DEV
  *out = c;
  return INFER_OK;
fail:
  release_locked(c);
  return st;
}

void cuda_context_release(void *ctx) {
  cuda_context *c = ctx;
  if (!c) return;
  cuda_device_work_begin();
  release_locked(c);
  cuda_device_work_end();
}

static void release_locked(cuda_context *c) {
  cudaSetDevice(c->ce->device); /* frees below belong to that device */
  if (c->x.stream) cudaStreamSynchronize((cudaStream_t)c->x.stream);
  if (c->graph_exec) cudaGraphExecDestroy(c->graph_exec);
  if (c->graph) cudaGraphDestroy(c->graph);
  for (int i = 0; i < c->n_in; i++) {
    if (c->in_host && c->in_host[i]) cudaFreeHost(c->in_host[i]);
    if (c->in_dev && c->in_dev[i]) cudaFree(c->in_dev[i]);
  }
  for (int o = 0; o < c->n_out; o++) {
    if (c->out_host && c->out_host[o]) cudaFreeHost(c->out_host[o]);
    if (c->out_dev && c->out_dev[o]) cudaFree(c->out_dev[o]);
  }
  for (int i = 0; i < 4; i++)
    if (c->ev[i]) cudaEventDestroy(c->ev[i]);
  for (int i = 0; c->step_ev && i <= c->ce->n_steps; i++)
    if (c->step_ev[i]) cudaEventDestroy(c->step_ev[i]);
  free(c->step_ev);
  if (c->arena) cudaFree(c->arena);
  if (c->x.ws) cudaFree(c->x.ws);
  if (c->x.host_ws) cudaFreeHost(c->x.host_ws);
  if (c->cublas_ws) cudaFree(c->cublas_ws);
  mem_budget_give(&c->e->device_mem, c->device_taken);
  mem_budget_give(&c->e->host_mem, c->host_taken);
  cuda_exec_close(&c->x);
  free(c->vals);
  free(c->in);
  free(c->out);
  free(c->in_host);
  free(c->in_dev);
  free(c->in_bytes);
  free(c->out_host);
  free(c->out_dev);
  free(c->out_bytes);
  free(c->in_bind);
  free(c->out_bind);
  free(c->out_staged);
  free(c->ops);
  free(c);
}

infer_status cuda_context_set_input(void *ctx, int index, const infer_tensor *t) {
  cuda_context *c = ctx;
  const void *data = t->data;
  int64_t bytes = tensor_nbytes(t);
  if (c->in_bind[index]) {
    /* host data replaces the device binding: the captured graph copies from it */
    c->in_bind[index] = NULL;
    c->graph_stale = true;
  }
  if (bytes > 0) memcpy(c->in_host[index], data, (size_t)bytes);
  return INFER_OK;
}

infer_status cuda_context_input_buffer(void *ctx, int index, void **ptr) {
  cuda_context *c = ctx;
  if (c->in_bind[index]) { /* the staging is the source again, as after set_input */
    c->in_bind[index] = NULL;
    c->graph_stale = true;
  }
  *ptr = c->in_host[index];
  return INFER_OK;
}

infer_status cuda_context_output_buffer(void *ctx, int index, const void **ptr) {
  *ptr = ((cuda_context *)ctx)->out_host[index];
  return INFER_OK;
}

/* Refuses anything but device memory the engine's GPU can address: a host pointer
 * given by mistake would otherwise fault inside a later run, and a device fault
 * makes the context unusable for good. */
static infer_status check_device_ptr(const cuda_context *c, const void *ptr, const char *kind,
                                     const char *name) {
  struct cudaPointerAttributes a;
  memset(&a, 0, sizeof a);
  cudaError_t err = cudaPointerGetAttributes(&a, ptr);
  if (err != cudaSuccess) {
    cudaGetLastError(); /* not sticky; keep it from surfacing in a later call */
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "%s '%s': %p is not device memory "
                      "(cudaPointerGetAttributes: %s)", kind, name, ptr, cudaGetErrorString(err));
  }
  if (a.type == cudaMemoryTypeManaged) return INFER_OK; /* addressable from every GPU */
  if (a.type != cudaMemoryTypeDevice)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "%s '%s': %p is %s memory, not device memory "
                      "(bind a cudaMalloc'ed pointer of GPU %d, or use host staging)", kind, name,
                      ptr, a.type == cudaMemoryTypeHost ? "pinned host" : "host", c->ce->device);
  if (a.device != c->ce->device)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "%s '%s': %p is memory of GPU %d, but the "
                      "engine runs on GPU %d", kind, name, ptr, a.device, c->ce->device);
  return INFER_OK;
}

infer_status cuda_context_bind_input(void *ctx, int index, const void *ptr) {
  cuda_context *c = ctx;
  if (ptr) TRY(check_device_ptr(c, ptr, "input", c->e->g->values[c->e->g->inputs[index]].name));
  if (c->in_bind[index] != ptr) c->graph_stale = true;
  c->in_bind[index] = ptr;
  return INFER_OK;
}

infer_status cuda_context_bind_output(void *ctx, int index, void *ptr) {
  cuda_context *c = ctx;
  if (ptr && c->ce->host_out_step[index] >= 0)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "output '%s' has a shape known only after "
                      "a run and stays in host memory: read it with infer_context_get_output",
                      c->e->g->values[c->e->g->outputs[index]].name);
  if (ptr) TRY(check_device_ptr(c, ptr, "output", c->e->g->values[c->e->g->outputs[index]].name));
  if (c->out_bind[index] != ptr) c->graph_stale = true;
  c->out_bind[index] = ptr;
  return INFER_OK;
}

bool cuda_context_input_bound(const void *ctx, int index) {
  return ((const cuda_context *)ctx)->in_bind[index] != NULL;
}
bool cuda_context_output_bound(const void *ctx, int index) {
  return ((const cuda_context *)ctx)->out_bind[index] != NULL;
}

infer_status cuda_context_output(void *ctx, int index, int64_t run_batch, infer_tensor *out) {
  cuda_context *c = ctx;
  const graph *g = c->e->g;
  /* staging last written by an earlier run must not pass for this run's output */
  if (!c->out_staged[index])
    return infer_fail(INFER_ERR_RUNTIME, "output '%s' is not available here: the last run "
                      "wrote it to the device memory bound then; run again to read it here",
                      g->values[g->outputs[index]].name);
  int hs = c->ce->host_out_step[index];
  if (hs >= 0)
    return cuda_host_fallback_output(c->ce->steps[hs].state, c->x.host_ws,
                                     c->ce->host_out_slot[index], out);
  *out = g->values[g->outputs[index]].t;
  out->data = c->out_host[index];
  /* a smaller run batch: the first rows of the build batch's output */
  if (g->values[g->outputs[index]].shape_dep && run_batch > 0 && out->rank > 0)
    out->dims[0] = run_batch;
  return INFER_OK;
}

/* Everything a run enqueues, in order. */
static infer_status enqueue_run(cuda_context *c) {
  const infer_engine *e = c->e;
  const cuda_engine *ce = c->ce;
  const graph *g = e->g;
  cudaStream_t s = (cudaStream_t)c->x.stream;
  char d[256];
  CUDA_TRY(cudaEventRecordWithFlags(c->ev[0], s, c->event_flags));
  if (c->poison) {
    /* 0xFF bytes read as NaN in every float type. Inputs are rewritten below. */
    if (ce->mem.arena_bytes > 0) CUDA_TRY(cudaMemsetAsync(c->arena, 0xFF, (size_t)ce->mem.arena_bytes, s));
    /* the output casts' destinations: staging, or the caller's bound buffer */
    for (int o = 0; o < c->n_out; o++)
      if (c->out_dev[o])
        CUDA_TRY(cudaMemsetAsync(c->out_bind[o] ? c->out_bind[o] : c->out_dev[o], 0xFF,
                                 (size_t)c->out_bytes[o], s));
  }
  for (int i = 0; i < c->n_in; i++) {
    int v = g->inputs[i];
    if (g->values[v].kind == VALUE_CONSTANT) continue; /* fixed at build time */
    const void *bound = c->in_bind[i];
    const image_feed *f = engine_image_feed(e, i);
    if (f) {
      /* uint8 NHWC in; normalized into the storage dtype by one kernel, NHWC straight
       * into the leading Transpose's output in a channels-last engine */
      if (!bound && c->in_bytes[i] > 0)
        CUDA_TRY(cudaMemcpyAsync(c->in_dev[i], c->in_host[i], (size_t)c->in_bytes[i],
                                 cudaMemcpyHostToDevice, s));
      const int64_t *dm = g->values[v].t.dims; /* N, C, H, W */
      int tk = ce->in_transpose ? ce->in_transpose[i] : -1;
      void *dst = tk >= 0 ? c->vals[g->nodes[ce->steps[tk].node].outputs[0]].data : c->vals[v].data;
      k_image_norm norm;
      memcpy(norm.mean, f->mean, sizeof norm.mean);
      memcpy(norm.std, f->std, sizeof norm.std);
      CUDA_TRY(k_image_u8_nhwc(bound ? bound : c->in_dev[i], ce->storage[v], dst, tk >= 0, dm[0],
                               dm[2] * dm[3], f->channels, &norm, s));
      continue;
    }
    if (c->in_dev[i]) {
      /* the storage dtype differs: the cast reads the caller's buffer directly when
       * bound, else the device copy of the host staging */
      if (!bound && c->in_bytes[i] > 0)
        CUDA_TRY(cudaMemcpyAsync(c->in_dev[i], c->in_host[i], (size_t)c->in_bytes[i],
                                 cudaMemcpyHostToDevice, s));
      const void *src = bound ? bound : c->in_dev[i];
      int tk = ce->in_transpose ? ce->in_transpose[i] : -1;
      if (tk >= 0) {
        /* the graph edge of a channels-last engine: cast and transpose in one pass,
         * into the output of the Transpose step, which then does nothing */
        const int64_t *dm = g->values[v].t.dims;
        int t = g->nodes[ce->steps[tk].node].outputs[0];
        CUDA_TRY(k_cast_f32_nchw_to_f16_nhwc(src, c->vals[t].data, dm[0], dm[1], dm[2] * dm[3], s));
      } else {
        CUDA_TRY(k_cast(g->values[v].t.dtype, src, ce->storage[v], c->vals[v].data,
                        dims_count(g->values[v].t.rank, g->values[v].t.dims), s));
      }
    } else if (c->in_bytes[i] > 0) {
      /* a bound input still goes into its arena slot: ops read the input there */
      CUDA_TRY(cudaMemcpyAsync(c->vals[v].data, bound ? bound : c->in_host[i],
                               (size_t)c->in_bytes[i],
                               bound ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice, s));
    }
  }
  CUDA_TRY(cudaEventRecordWithFlags(c->ev[1], s, c->event_flags));
  for (int k = 0; k < ce->n_steps; k++) {
    const cuda_step *cs = &ce->steps[k];
    const node *n = &g->nodes[cs->node];
    for (int j = 0; j < n->n_inputs; j++) c->in[j] = n->inputs[j] >= 0 ? &c->vals[n->inputs[j]] : NULL;
    for (int j = 0; j < n->n_outputs; j++) c->out[j] = n->outputs[j] >= 0 ? &c->vals[n->outputs[j]] : NULL;
    if (c->step_ev) CUDA_TRY(cudaEventRecord(c->step_ev[k], s));
    infer_status st = c->ops[k]->run(&c->x, n, n->params, cs->state, c->in, c->out);
    if (st == INFER_OK && c->sync_each_op) {
      cudaError_t err = cudaStreamSynchronize(s);
      if (err == cudaSuccess) err = cudaGetLastError();
      if (err != cudaSuccess)
        st = infer_fail(INFER_ERR_RUNTIME, "kernel failed: %s", cudaGetErrorString(err));
      else if (host_fallback_failed(c))
        st = infer_fail(INFER_ERR_RUNTIME, "its CPU reference failed on the host: %s",
                        cuda_host_fallback_failure(c->x.host_ws));
    }
    if (st != INFER_OK) return infer_fail_prefix(st, "%s (GPU)", node_describe(g, cs->node, d, sizeof d));
  }
  if (c->step_ev) CUDA_TRY(cudaEventRecord(c->step_ev[ce->n_steps], s));
  CUDA_TRY(cudaEventRecordWithFlags(c->ev[2], s, c->event_flags));
  for (int o = 0; o < c->n_out; o++) {
    int v = g->outputs[o];
    if (ce->host_out_step[o] >= 0) continue; /* written on the host by its step */
    void *bound = c->out_bind[o];
    const void *src = c->vals[v].data;
    if (c->out_dev[o]) {
      /* cast straight into the caller's buffer when bound: nothing left to copy */
      void *dst = bound ? bound : c->out_dev[o];
      CUDA_TRY(k_cast(ce->storage[v], src, g->values[v].t.dtype, dst,
                      dims_count(g->values[v].t.rank, g->values[v].t.dims), s));
      if (bound) continue;
      src = dst;
    }
    if (c->out_bytes[o] > 0)
      CUDA_TRY(cudaMemcpyAsync(bound ? bound : c->out_host[o], src, (size_t)c->out_bytes[o],
                               bound ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost, s));
  }
  CUDA_TRY(cudaEventRecordWithFlags(c->ev[3], s, c->event_flags));
  return INFER_OK;
}

infer_status cuda_context_profile(void *ctx, infer_step_profile *prof) {
  cuda_context *c = ctx;
  const graph *g = c->e->g;
  for (int k = 0; k < c->ce->n_steps; k++) {
    const cuda_step *cs = &c->ce->steps[k];
    const node *n = &g->nodes[cs->node];
    float ms = 0;
    CUDA_TRY(cudaEventElapsedTime(&ms, c->step_ev[k], c->step_ev[k + 1]));
    for (int j = 0; j < n->n_inputs; j++) c->in[j] = n->inputs[j] >= 0 ? &c->vals[n->inputs[j]] : NULL;
    for (int j = 0; j < n->n_outputs; j++) c->out[j] = n->outputs[j] >= 0 ? &c->vals[n->outputs[j]] : NULL;
    prof[k].ms = ms;
    prof[k].impl = cuda_step_impl(c->e, k);
    step_cost(n, c->in, c->out, &prof[k].flops, &prof[k].bytes);
    if (c->ce->step_skip[k] != STEP_RUNS) prof[k].flops = prof[k].bytes = 0;
  }
  return INFER_OK;
}

infer_status cuda_context_timing(const void *ctx, infer_run_timing *t) {
  const cuda_context *c = ctx;
  float ms[3];
  for (int i = 0; i < 3; i++) CUDA_TRY(cudaEventElapsedTime(&ms[i], c->ev[i], c->ev[i + 1]));
  t->h2d_ms = ms[0];
  t->compute_ms = ms[1];
  t->d2h_ms = ms[2];
  return INFER_OK;
}

/* Drops the captured graph (the caller holds the capture lock, so that the
 * destruction cannot disturb another thread's capture). */
static void drop_graph(cuda_context *c) {
  if (c->graph_exec) cudaGraphExecDestroy(c->graph_exec);
  if (c->graph) cudaGraphDestroy(c->graph);
  c->graph_exec = NULL;
  c->graph = NULL;
}

/* Captures enqueue_run into a graph; on failure the context runs eagerly. After a
 * change of binding (graph_stale) it captures again: the old graph has the old
 * pointers baked into its copy and cast nodes. */
static void try_capture(cuda_context *c) {
  cudaStream_t s = (cudaStream_t)c->x.stream;
  cuda_capture_begin();
  c->graph_stale = false;
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    drop_graph(c);
    cuda_capture_end();
    cudaGetLastError();
    c->use_graph = false;
    return;
  }
  /* timing events inside a graph must be external nodes to be read after a replay */
  c->event_flags = cudaEventRecordExternal;
  infer_status st = enqueue_run(c);
  c->event_flags = cudaEventRecordDefault;
  cudaGraph_t graph = NULL;
  cudaError_t err = cudaStreamEndCapture(s, &graph);
  bool ok = st == INFER_OK && err == cudaSuccess && graph;
#if CUDART_VERSION >= 12000
  if (ok && c->graph_exec) {
    /* a re-capture differs from the last one only in the bound pointers, unless a
     * copy changed between host-to-device and device-to-device (binding or
     * unbinding): updating the instantiated graph in place is much cheaper than
     * instantiating it again, which is the fallback when the update is refused */
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(c->graph_exec, graph, &info) == cudaSuccess) {
      cudaGraphDestroy(c->graph);
      c->graph = graph;
      cuda_capture_end();
      return;
    }
    cudaGetLastError();
  }
#endif
  drop_graph(c);
  ok = ok && cudaGraphInstantiate(&c->graph_exec, graph, 0) == cudaSuccess;
  cuda_capture_end();
  if (!ok) {
    cudaGetLastError();
    if (graph) cudaGraphDestroy(graph);
    c->graph_exec = NULL;
    c->use_graph = false;
    log_warn(&c->e->opts.log, "cuda: graph capture failed (%s); running without CUDA graphs",
                st != INFER_OK ? infer_last_error() : cudaGetErrorString(err));
    return;
  }
  c->graph = graph;
}

infer_status cuda_context_health(const void *ctx) {
  const cuda_context *c = ctx;
  if (!c->failed) return INFER_OK;
  return infer_fail(INFER_ERR_RUNTIME, "the context failed and cannot be used again: %s",
                    c->failure);
}

infer_status cuda_context_enqueue(void *ctx) {
  cuda_context *c = ctx;
  if (c->failed)
    return infer_fail(INFER_ERR_RUNTIME, "the context failed in an earlier run and cannot be "
                      "used again: %s", c->failure);
  cudaStream_t s = (cudaStream_t)c->x.stream;
  CUDA_TRY(cudaSetDevice(c->ce->device));
  /* the test hook's failing run is enqueued eagerly, neither captured nor replayed */
  bool inject = c->fail_step >= 0 && c->hook_runs++ == c->fail_after;
  /* the first run is eager: cuDNN and cuBLAS finish their lazy set-up (plans,
   * allocations) there, which a capture would refuse */
  if (c->use_graph && c->eager_runs > 0 && (!c->graph_exec || c->graph_stale) && !inject)
    try_capture(c);
  infer_status st = INFER_OK;
  if (c->graph_exec && !inject) {
    cudaError_t err = cudaGraphLaunch(c->graph_exec, s);
    if (err != cudaSuccess)
      st = infer_fail(INFER_ERR_RUNTIME, "cudaGraphLaunch failed: %s", cudaGetErrorString(err));
  } else {
    if (inject) c->ops[c->fail_step] = &fail_op;
    st = enqueue_run(c);
    if (inject)
      c->ops[c->fail_step] = c->ce->step_skip[c->fail_step] != STEP_RUNS ? &skip_op
                                                                         : c->ce->steps[c->fail_step].op;
  }
  /* whatever went onto the stream is in flight: the wait synchronizes it and reports a
   * failure of the enqueueing too (its message may be wanted on another thread) */
  c->enq_status = st;
  if (st != INFER_OK) snprintf(c->enq_message, sizeof c->enq_message, "%s", infer_last_error());
  return INFER_OK;
}

infer_status cuda_context_wait(void *ctx) {
  cuda_context *c = ctx;
  cudaError_t err = cudaStreamSynchronize((cudaStream_t)c->x.stream);
  infer_status st = c->enq_status;
  if (st != INFER_OK) infer_fail(st, "%s", c->enq_message);
  if (st == INFER_OK && err != cudaSuccess)
    st = infer_fail(INFER_ERR_RUNTIME, "the run failed on the device: %s (build with "
                    "infer_options_set_sync_each_op to name the failing step)", cudaGetErrorString(err));
  if (st == INFER_OK && host_fallback_failed(c))
    st = infer_fail(INFER_ERR_RUNTIME, "a step run on the host (cuda.host_fallback) failed: %s",
                    cuda_host_fallback_failure(c->x.host_ws));
  c->enq_status = INFER_OK;
  if (st != INFER_OK) {
    /* a device error can poison the CUDA context; never hand out outputs again */
    c->failed = true;
    snprintf(c->failure, sizeof c->failure, "%s", infer_last_error());
    if (st != INFER_ERR_UNSUPPORTED && st != INFER_ERR_OUT_OF_MEMORY) st = INFER_ERR_RUNTIME;
  }
  for (int o = 0; o < c->n_out; o++) c->out_staged[o] = st == INFER_OK && !c->out_bind[o];
  if (st == INFER_OK && !c->graph_exec) c->eager_runs++;
  return st;
}

/* A kept value (config keep_values): its storage bytes copied off the device and widened
 * to float32. The copy is synchronous, on the context's stream, outside any run. */
static infer_status read_stored(cuda_context *c, int v, float *dst);

/* A graph input whose cast also did its NCHW -> NHWC Transpose (in_transpose) was never
 * written to its own slot: it is read from the Transpose's output, back in NCHW. */
infer_status cuda_context_read_value(void *ctx, int v, float *dst) {
  cuda_context *c = ctx;
  const graph *g = c->e->g;
  for (int i = 0; c->ce->in_transpose && i < g->n_inputs; i++) {
    int tk = c->ce->in_transpose[i];
    if (g->inputs[i] != v || tk < 0) continue;
    const int64_t *d = g->values[v].t.dims; /* N, C, H, W */
    int64_t hw = d[2] * d[3], n = dims_count(4, d);
    float *nhwc = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!nhwc) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory reading '%s'", g->values[v].name);
    infer_status st = read_stored(c, g->nodes[c->ce->steps[tk].node].outputs[0], nhwc);
    for (int64_t b = 0; st == INFER_OK && b < d[0]; b++)
      for (int64_t p = 0; p < hw; p++)
        for (int64_t ch = 0; ch < d[1]; ch++)
          dst[(b * d[1] + ch) * hw + p] = nhwc[(b * hw + p) * d[1] + ch];
    free(nhwc);
    return st;
  }
  return read_stored(c, v, dst);
}

static infer_status read_stored(cuda_context *c, int v, float *dst) {
  const tensor *t = &c->vals[v];
  const char *name = c->e->g->values[v].name;
  if (!t->data) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "value '%s' holds no device data", name);
  int64_t n = dims_count(t->rank, t->dims), nb = tensor_nbytes(t);
  if (n < 0 || nb < 0) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "value '%s' has no size", name);
  void *host = malloc(nb > 0 ? (size_t)nb : 1);
  if (!host) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory reading value '%s'", name);
  cudaError_t err = cudaMemcpyAsync(host, t->data, (size_t)nb, cudaMemcpyDeviceToHost,
                                    (cudaStream_t)c->x.stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize((cudaStream_t)c->x.stream);
  if (err != cudaSuccess) {
    free(host);
    return infer_fail(INFER_ERR_DEVICE, "reading value '%s' off the device: %s", name,
                      cudaGetErrorString(err));
  }
  tensor h = *t;
  h.data = host;
  for (int64_t i = 0; i < n; i++) dst[i] = (float)tensor_get_f64(&h, i);
  free(host);
  return INFER_OK;
}

const char *cuda_step_impl(const infer_engine *e, int k) {
  const cuda_engine *ce = e->be_state;
  const cuda_step *cs = &ce->steps[k];
  return ce->step_skip[k] == STEP_VIEW         ? "view"
         : ce->step_skip[k] == STEP_INPUT_CAST ? "input-cast"
         : cs->op->impl                        ? cs->op->impl(cs->state)
         : (cs->op->needs & CUDA_NEEDS_CUDNN)   ? "cudnn"
         : (cs->op->needs & CUDA_NEEDS_CUBLAS)  ? "cublas"
                                                : "kernel";
}
