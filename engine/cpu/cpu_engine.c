/* cpu_engine.c: the CPU backend's table, its build (the scratch size) and memory
 * figures. The run is engine/cpu/cpu_context.c. */
#include <stdlib.h>

#include "../../core/config.h"
#include "../../core/status.h"
#include "../../ops/op.h"
#include "cpu_internal.h"

static infer_status cpu_build(infer_engine *e, void **state) {
  cpu_engine *ce = calloc(1, sizeof *ce);
  if (!ce) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = ce;
  const graph *g = e->g;
  ce->fp16_storage = config_flag(&e->opts.cfg, "cpu.fp16_storage", false);
  /* the weights as an fp16 GPU engine uploads them (the engine owns its graph) */
  for (int v = 0; ce->fp16_storage && v < g->n_values; v++)
    if (g->values[v].kind == VALUE_CONSTANT && g->values[v].t.data && !g->values[v].keep_fp32)
      cpu_round_to_fp16(&g->values[v].t);
  const tensor *in[256];
  tensor *out[256];
  for (int s = 0; s < e->n_steps; s++) {
    const node *n = &g->nodes[e->steps[s]];
    if (!n->op->workspace || n->n_inputs > 256 || n->n_outputs > 256) continue;
    bool known = true;
    for (int k = 0; k < n->n_inputs; k++) {
      in[k] = n->inputs[k] >= 0 ? &g->values[n->inputs[k]].t : NULL;
      if (n->inputs[k] >= 0 && !g->values[n->inputs[k]].shape_known) known = false;
    }
    for (int k = 0; k < n->n_outputs; k++) {
      out[k] = n->outputs[k] >= 0 ? &g->values[n->outputs[k]].t : NULL;
      if (n->outputs[k] >= 0 && !g->values[n->outputs[k]].shape_known) known = false;
    }
    if (!known) continue;
    int64_t w = n->op->workspace(n, n->params, in, out);
    if (w < 0) return infer_fail(INFER_ERR_INVALID_MODEL, "workspace size overflows");
    if (w > ce->ws_bytes) ce->ws_bytes = w;
  }
  return INFER_OK;
}

static void cpu_release(void *state) { free(state); }

static const char *cpu_step_impl(const infer_engine *e, int s) {
  (void)s;
  return ((const cpu_engine *)e->be_state)->fp16_storage ? "cpu-fp16-storage" : "cpu";
}

/* Weights: the constants the steps read (folded-away originals are not held for the
 * run) and the constants handed out as outputs. */
static void cpu_memory(const infer_engine *e, infer_memory_info *m) {
  const graph *g = e->g;
  bool *seen = calloc((size_t)g->n_values + 1, sizeof(bool));
  for (int s = 0; seen && s < e->n_steps; s++) {
    const node *n = &g->nodes[e->steps[s]];
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0) seen[n->inputs[k]] = true;
  }
  for (int o = 0; seen && o < g->n_outputs; o++) seen[g->outputs[o]] = true;
  for (int v = 0; v < g->n_values; v++)
    if (g->values[v].kind == VALUE_CONSTANT && (!seen || seen[v]))
      m->weights += tensor_nbytes(&g->values[v].t);
  free(seen);
  m->arena = e->mem.arena_bytes;
  m->naive = e->mem.naive_bytes;
  m->workspace = ((const cpu_engine *)e->be_state)->ws_bytes;
}

static int cpu_device_count(void) { return 1; }

static void cpu_diagnose(report *r) {
#ifdef INFER_HAVE_CBLAS
  report_add(r, "CPU backend: GEMM through CBLAS (OpenBLAS)\n");
#else
  report_add(r, "CPU backend: built-in GEMM (no OpenBLAS found at build: install "
                "libopenblas-dev and rebuild for faster CPU runs)\n");
#endif
}

const backend cpu_backend = {
    .name = "cpu",
    .device = INFER_DEVICE_CPU,
    .computes_run_batch = true,
    .device_count = cpu_device_count,
    .diagnose = cpu_diagnose,
    .build = cpu_build,
    .release = cpu_release,
    .memory = cpu_memory,
    .context_create = cpu_context_create,
    .context_release = cpu_context_release,
    .set_input = cpu_context_set_input,
    .input_buffer = cpu_context_input_buffer,
    .output_buffer = cpu_context_output_buffer,
    .enqueue = cpu_context_enqueue,
    .wait = cpu_context_wait,
    .output = cpu_context_output,
    .profile = cpu_context_profile,
    .timing = cpu_context_timing,
    .read_value = cpu_context_read_value,
    .step_impl = cpu_step_impl,
};
