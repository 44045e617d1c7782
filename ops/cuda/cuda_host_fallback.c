/* cuda_host_fallback.c: an op without a GPU kernel (or whose kernel refuses the
 * instance), run by its CPU reference on the host in the stream's order (config
 * cuda.host_fallback, on unless set to 0). A run enqueues: the inputs copied off the
 * device into the context's pinned host scratch, a host function (cudaLaunchHostFunc)
 * that widens float16 storage to the op's own dtype, runs the op and narrows its outputs
 * back, and the outputs copied onto the device. The host thread never waits: the stream
 * does, as for a kernel, and a CUDA graph captures the host function as a host node.
 *
 * Control flow (If, Loop, Scan) runs here too when its output shapes were derived at
 * build (ops/control_shapes.c; the engine refuses the others earlier): the host function
 * runs the op's `control` with the engine's subgraph executor (the CPU backend's,
 * engine/cpu/cpu_subgraph.c, handed over at prepare) on the model-dtype inputs, captures
 * included (widened like any input). Its subgraph values come from a heap of the step
 * (core/run_heap.h, charged to the engine's host memory budget) that lives for that one
 * host function: malloc'ed per value as the CPU backend's own subgraph runs are, the
 * results checked against the derived shapes (control_output_check) and copied into the
 * step's staging, then every block freed before the host function returns.
 *
 * Each such step owns a region of the context's host scratch (cuda_exec.host_ws),
 * placed at build by cuda_host_fallback_place: a call record, the io tensors the op
 * reads, the staging of each input and output and the op's own workspace. The
 * scratch's head is the context's failure flag and the first failure's message: a
 * failing op sets them (the host function cannot return a status) and
 * cuda_context_wait reports them (cuda_host_fallback_failure). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../../core/cuda_check.h"
#include "../../core/run_heap.h"
#include "../cuda_op.h"
#include "../op.h"

#define HF_ALIGN 64

/* The head of a context's host scratch (zeroed at its creation): the run's failure flag
 * (first: cuda_context.c reads it as an int) and the first failing step's message. */
typedef struct hf_head {
  int failed;
  char message[500];
} hf_head;

typedef struct hf_io {
  tensor host;          /* the op's view: model dtype and dims; data set in the call */
  infer_dtype stored;   /* dtype on the device */
  int64_t stored_bytes; /* bytes on the device */
  int64_t count;        /* elements */
  int64_t stage_off;    /* staging of the stored bytes in the step's region */
  int64_t wide_off;     /* the float32 copy of float16 storage, else -1 */
  const void *constant; /* a constant input's host data (model dtype): no copy */
  bool present;
  /* a graph output of a control node (HostRegion) whose shape is known only after the
   * run: it stays on the host in its model dtype, at stage_off a hf_result and then up to
   * stored_bytes of data (config cuda.dynamic_output_bytes) */
  bool dynamic;
  const char *name; /* the value's, for a failure */
} hf_io;

/* What a run gave a dynamic output: its dtype and dims (data follows, HF_ALIGN on). */
typedef struct hf_result {
  tensor t;
} hf_result;

typedef struct hf_state {
  const node *n;
  const op_desc *op;
  const void *params;
  char what[256];            /* the node, for the failure message */
  cuda_host_subgraphs sub;   /* control flow: how its subgraphs run */
  int n_in, n_out;
  hf_io *in, *out;
  int64_t ws_off, ws_bytes; /* the op's scratch in the region */
  int64_t bytes;            /* the region's size */
  int64_t base;             /* the region's offset in the context's scratch */
} hf_state;

/* What a host function reads: written at enqueue, at the start of the step's region;
 * the same every run of a context (a captured graph keeps pointing at it). */
typedef struct hf_call {
  const hf_state *s;
  unsigned char *region;
  hf_head *head;         /* the context's scratch head */
  volatile int *failed;  /* its flag */
  const tensor **in; /* n_in pointers, then the tensors, in the region */
  tensor **out;
} hf_call;

static int64_t align_up(int64_t v) { return (v + HF_ALIGN - 1) / HF_ALIGN * HF_ALIGN; }

static void hf_release(void *p) {
  hf_state *s = p;
  if (!s) return;
  free(s->in);
  free(s->out);
  free(s);
}

/* Bytes of the call record with its io pointer and tensor arrays. */
static int64_t call_bytes(int n_in, int n_out) {
  return align_up((int64_t)sizeof(hf_call) +
                  (int64_t)(n_in + n_out) * (int64_t)(sizeof(void *) + sizeof(tensor)));
}

/* Whether every output of control node n has a shape derived at build, or is a graph
 * output (handed out from the host). */
static bool outputs_static(const graph *g, const node *n) {
  for (int k = 0; k < n->n_outputs; k++) {
    const value *v = n->outputs[k] >= 0 ? &g->values[n->outputs[k]] : NULL;
    if (v && !v->shape_known && !v->is_output) return false;
  }
  return true;
}

infer_status cuda_host_fallback_prepare(const cuda_exec *x, const graph *g, const node *n,
                                        const tensor *const *in, tensor *const *out,
                                        const cuda_host_subgraphs *sub, void **state) {
  *state = NULL;
  if (!n->op || !n->op->run)
    return infer_fail(INFER_ERR_UNSUPPORTED, "the op has no GPU implementation, and no "
                      "CPU one the host fallback could run");
  if (n->op->control && (!sub || !sub->run_graph || !outputs_static(g, n)))
    return infer_fail(INFER_ERR_UNSUPPORTED, "host fallback: the output shapes of this "
                      "control flow are known only after a run");
  hf_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  s->n = n;
  s->op = n->op;
  s->params = n->params;
  if (n->op->control) s->sub = *sub;
  if (n >= g->nodes && n < g->nodes + g->n_nodes)
    node_describe(g, (int)(n - g->nodes), s->what, sizeof s->what);
  else
    snprintf(s->what, sizeof s->what, "%s", n->op_type);
  s->n_in = n->n_inputs;
  s->n_out = n->n_outputs;
  s->in = calloc((size_t)s->n_in + 1, sizeof *s->in);
  s->out = calloc((size_t)s->n_out + 1, sizeof *s->out);
  if (!s->in || !s->out) {
    hf_release(s);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  int64_t off = call_bytes(s->n_in, s->n_out);
  for (int side = 0; side < 2; side++) {
    int count = side ? s->n_out : s->n_in;
    for (int k = 0; k < count; k++) {
      int v = side ? n->outputs[k] : n->inputs[k];
      const tensor *dev = side ? out[k] : in[k];
      hf_io *io = side ? &s->out[k] : &s->in[k];
      if (v < 0 || !dev) continue;
      const value *val = &g->values[v];
      io->present = true;
      io->host = val->t;
      /* a constant's own bytes stay readable: the op's workspace query at build and
       * its run may read them (DFT's dft_length) */
      io->host.data = !side && val->kind == VALUE_CONSTANT ? val->t.data : NULL;
      io->stored = dev->dtype;
      io->stored_bytes = tensor_nbytes(dev);
      io->wide_off = -1;
      if (!side && val->kind == VALUE_CONSTANT && val->t.data) {
        io->constant = val->t.data; /* the model's own bytes, kept by the graph */
        continue;
      }
      if (side && !val->shape_known && n->op->control && val->is_output) {
        io->dynamic = true;
        io->name = val->name;
        io->stored = val->t.dtype;
        io->stored_bytes = config_int(x->cfg, "cuda.dynamic_output_bytes", 8 << 20);
        io->stage_off = off;
        off += align_up(sizeof(hf_result)) + align_up(io->stored_bytes);
        continue;
      }
      if (io->stored_bytes < 0 || tensor_nbytes(&io->host) < 0) {
        hf_release(s);
        return infer_fail(INFER_ERR_UNSUPPORTED, "host fallback: the size of %s %d is not "
                          "known at build (it depends on run-time data)",
                          side ? "output" : "input", k);
      }
      /* the one storage that differs from the model's dtype: float32 kept as float16 */
      if (io->stored != io->host.dtype &&
          (io->stored != INFER_DTYPE_FLOAT16 || io->host.dtype != INFER_DTYPE_FLOAT32)) {
        hf_release(s);
        return infer_fail(INFER_ERR_UNSUPPORTED, "host fallback: %s %d is %s on the device "
                          "for a %s value", side ? "output" : "input", k,
                          infer_dtype_name(io->stored), infer_dtype_name(io->host.dtype));
      }
      io->count = dims_count(io->host.rank, io->host.dims);
      io->stage_off = off;
      off += align_up(io->stored_bytes);
      if (io->stored != io->host.dtype) {
        io->wide_off = off;
        off += align_up(tensor_nbytes(&io->host));
      }
    }
  }
  /* the op's scratch, asked with the model-dtype tensors */
  if (s->op->workspace) {
    const tensor **ti = calloc((size_t)s->n_in + 1, sizeof *ti);
    tensor **to = calloc((size_t)s->n_out + 1, sizeof *to);
    if (!ti || !to) {
      free(ti);
      free(to);
      hf_release(s);
      return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int k = 0; k < s->n_in; k++) ti[k] = s->in[k].present ? &s->in[k].host : NULL;
    for (int k = 0; k < s->n_out; k++) to[k] = s->out[k].present ? &s->out[k].host : NULL;
    s->ws_bytes = s->op->workspace(n, s->params, ti, to);
    free(ti);
    free(to);
    if (s->ws_bytes < 0) {
      hf_release(s);
      return infer_fail(INFER_ERR_UNSUPPORTED, "host fallback: the op's workspace is unknown");
    }
  }
  s->ws_off = off;
  off += align_up(s->ws_bytes);
  s->bytes = off;
  *state = s;
  return INFER_OK;
}

int64_t cuda_host_fallback_place(void *state, int64_t offset) {
  hf_state *s = state;
  /* the head (failure flag and message) comes first */
  s->base = align_up(offset > 0 ? offset : (int64_t)sizeof(hf_head));
  return s->base + s->bytes;
}

infer_status cuda_host_fallback_output(const void *state, const void *host_ws, int k,
                                       tensor *out) {
  const hf_state *s = state;
  if (!s || k < 0 || k >= s->n_out || !s->out[k].dynamic || !host_ws)
    return infer_fail(INFER_ERR_INTERNAL, "host fallback: output %d is not one of a shape "
                      "known only at run", k);
  const hf_result *r = (const hf_result *)((const unsigned char *)host_ws + s->base +
                                           s->out[k].stage_off);
  *out = r->t;
  return INFER_OK;
}

const char *cuda_host_fallback_failure(const void *host_ws) {
  const hf_head *h = host_ws;
  return h && h->failed ? h->message : "";
}

/* float16 storage to the float32 the op computes in, and back */
static void widen(const uint16_t *src, float *dst, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = half_to_float(src[i]);
}
static void narrow(const float *src, uint16_t *dst, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = float_to_half(src[i]);
}

/* The first failure of the run: its message, then the flag (the wait reads them after
 * synchronizing the stream). */
static void hf_fail(hf_call *c, const char *why) {
  snprintf(c->head->message, sizeof c->head->message, "%s: %s", c->s->what, why);
  *c->failed = 1;
}

static void *hf_alloc(op_exec *x, int64_t bytes) {
  void *p = NULL;
  return run_heap_alloc(x->state, bytes, "a subgraph value on the host", &p) == INFER_OK ? p : NULL;
}

/* Dynamic output k as the run gave it (got), into its staging: the dims in the header,
 * the bytes after it; more than the staging holds is refused, naming the key to raise. */
static infer_status dynamic_result(hf_call *c, int k, const tensor *got) {
  const hf_io *io = &c->s->out[k];
  hf_result *r = (hf_result *)(c->region + io->stage_off);
  int64_t nb = tensor_nbytes(got);
  if (nb < 0 || nb > io->stored_bytes) {
    char d[128];
    return infer_fail(INFER_ERR_RUNTIME, "output '%s' is %s %s at this run, %lld bytes, more "
                      "than the %lld that config cuda.dynamic_output_bytes gives an output of a "
                      "shape known only at run (raise it)", io->name, infer_dtype_name(got->dtype),
                      dims_format(got->rank, got->dims, d, sizeof d), (long long)nb,
                      (long long)io->stored_bytes);
  }
  r->t = *got;
  r->t.data = c->region + io->stage_off + align_up(sizeof(hf_result));
  if (nb > 0) memcpy(r->t.data, got->data, (size_t)nb);
  return INFER_OK;
}

/* A control-flow op on the host: its subgraphs run through the engine's executor on the
 * step's heap; each output, checked against the shape derived at build, goes into its
 * staging (c->out, model dtype), and the heap is emptied before returning. */
static infer_status hf_control(hf_call *c) {
  const hf_state *s = c->s;
  run_heap h = {.budget = s->sub.budget};
  op_exec x = {.run_graph = s->sub.run_graph, .alloc = hf_alloc, .state = &h, .depth = 0};
  tensor *res = hf_alloc(&x, (int64_t)sizeof(tensor) * (s->n_out + 1));
  tensor **res_of = hf_alloc(&x, (int64_t)sizeof(tensor *) * (s->n_out + 1));
  infer_status st = res && res_of ? INFER_OK : infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int k = 0; st == INFER_OK && k < s->n_out; k++) {
    res_of[k] = c->out[k] ? &res[k] : NULL;
    memset(&res[k], 0, sizeof res[k]);
  }
  if (st == INFER_OK) st = s->op->control(s->n, s->params, c->in, res_of, &x);
  for (int k = 0; st == INFER_OK && k < s->n_out; k++) {
    if (!c->out[k]) continue;
    if (s->out[k].dynamic) {
      st = dynamic_result(c, k, &res[k]);
      continue;
    }
    st = control_output_check(s->n, k, &s->out[k].host, &res[k]);
    int64_t nb = tensor_nbytes(&s->out[k].host);
    if (st == INFER_OK && nb > 0) memcpy(c->out[k]->data, res[k].data, (size_t)nb);
  }
  run_heap_release(&h);
  return st;
}

static void CUDART_CB hf_host(void *p) {
  hf_call *c = p;
  const hf_state *s = c->s;
  if (*c->failed) return; /* an earlier step of this run failed: its outputs are garbage */
  tensor *ts = (tensor *)(c->out + s->n_out);
  for (int k = 0; k < s->n_in; k++) {
    const hf_io *io = &s->in[k];
    c->in[k] = NULL;
    if (!io->present) continue;
    tensor *t = &ts[k];
    *t = io->host;
    if (io->constant) {
      t->data = (void *)io->constant;
    } else if (io->wide_off >= 0) {
      t->data = c->region + io->wide_off;
      widen((const uint16_t *)(c->region + io->stage_off), t->data, io->count);
    } else {
      t->data = c->region + io->stage_off;
    }
    c->in[k] = t;
  }
  for (int k = 0; k < s->n_out; k++) {
    const hf_io *io = &s->out[k];
    c->out[k] = NULL;
    if (!io->present) continue;
    tensor *t = &ts[s->n_in + k];
    *t = io->host;
    t->data = c->region + (io->wide_off >= 0 ? io->wide_off : io->stage_off);
    c->out[k] = t;
  }
  infer_status st = s->op->control ? hf_control(c)
                                   : s->op->run(s->n, s->params, c->in, c->out,
                                                s->ws_bytes > 0 ? c->region + s->ws_off : NULL);
  if (st != INFER_OK) {
    hf_fail(c, infer_last_error()); /* this thread's message: the op's own words */
    return;
  }
  for (int k = 0; k < s->n_out; k++) {
    const hf_io *io = &s->out[k];
    if (!io->present || io->wide_off < 0) continue;
    narrow(c->out[k]->data, (uint16_t *)(c->region + io->stage_off), io->count);
  }
}

static infer_status hf_run(const cuda_exec *x, const node *n, const void *params,
                           const void *state, const tensor *const *in, tensor *const *out) {
  (void)n;
  (void)params;
  const hf_state *s = state;
  if (!x->host_ws)
    return infer_fail(INFER_ERR_INTERNAL, "host fallback: the context has no host scratch");
  cudaStream_t st = (cudaStream_t)x->stream;
  unsigned char *region = (unsigned char *)x->host_ws + s->base;
  hf_call *c = (hf_call *)region;
  c->s = s;
  c->region = region;
  c->head = (hf_head *)x->host_ws;
  c->failed = &c->head->failed;
  c->in = (const tensor **)(region + sizeof(hf_call));
  c->out = (tensor **)(c->in + s->n_in);
  for (int k = 0; k < s->n_in; k++) {
    const hf_io *io = &s->in[k];
    if (!io->present || io->constant || io->stored_bytes == 0) continue;
    if (!in[k] || !in[k]->data)
      return infer_fail(INFER_ERR_INTERNAL, "host fallback: input %d has no device data", k);
    CUDA_TRY(cudaMemcpyAsync(region + io->stage_off, in[k]->data, (size_t)io->stored_bytes,
                             cudaMemcpyDeviceToHost, st));
  }
  CUDA_TRY(cudaLaunchHostFunc(st, hf_host, c));
  for (int k = 0; k < s->n_out; k++) {
    const hf_io *io = &s->out[k];
    if (!io->present || io->dynamic || io->stored_bytes == 0) continue;
    if (!out[k] || !out[k]->data)
      return infer_fail(INFER_ERR_INTERNAL, "host fallback: output %d has no device data", k);
    CUDA_TRY(cudaMemcpyAsync(out[k]->data, region + io->stage_off, (size_t)io->stored_bytes,
                             cudaMemcpyHostToDevice, st));
  }
  return INFER_OK;
}

static const char *hf_impl(const void *state) {
  (void)state;
  return "host-fallback";
}

/* prepare is cuda_host_fallback_prepare (it needs the graph's model dtypes), called by
 * the engine for the steps it gives this op */
const cuda_op cuda_op_host_fallback = {
    .name = "host fallback", .run = hf_run, .release = hf_release, .impl = hf_impl};
