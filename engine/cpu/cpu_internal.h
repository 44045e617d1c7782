/* cpu_internal.h: the CPU backend's engine and context halves (engine/cpu only). */
#ifndef INFER_CPU_INTERNAL_H
#define INFER_CPU_INTERNAL_H

#include "../backend.h"
#include "../engine_internal.h"

/* The CPU build: the scratch of the largest step whose shapes are known at build (steps
 * whose shapes wait for run-time data size theirs during the run). */
typedef struct cpu_engine {
  int64_t ws_bytes;
  /* config cpu.fp16_storage=1: every float32 value is rounded to float16 where it is
   * stored (weights at build, inputs and each step's outputs in the run), computing in
   * float32 in between: what an fp16 GPU engine's storage alone costs in accuracy */
  bool fp16_storage;
} cpu_engine;

infer_status cpu_context_create(infer_engine *e, void **ctx);
void cpu_context_release(void *ctx);
infer_status cpu_context_set_input(void *ctx, int index, const infer_tensor *t);
infer_status cpu_context_input_buffer(void *ctx, int index, void **ptr);
infer_status cpu_context_output_buffer(void *ctx, int index, const void **ptr);
infer_status cpu_context_enqueue(void *ctx);
infer_status cpu_context_wait(void *ctx);
infer_status cpu_context_output(void *ctx, int index, int64_t run_batch, infer_tensor *out);
infer_status cpu_context_profile(void *ctx, infer_step_profile *steps);
infer_status cpu_context_timing(const void *ctx, infer_run_timing *t);
infer_status cpu_context_read_value(void *ctx, int v, float *dst);
/* Rounds every element of a float32 tensor to the nearest float16 (cpu.fp16_storage). */
void cpu_round_to_fp16(tensor *t);

struct op_exec;
/* op_exec.run_graph of the CPU backend (cpu_subgraph.c): runs a subgraph of a control
 * node, every allocation through x->alloc. */
infer_status cpu_subgraph_run(struct op_exec *x, const graph *sg, const tensor *const *formal,
                              const tensor *const *node_in, tensor *result);

#endif
