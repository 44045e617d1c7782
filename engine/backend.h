/* backend.h: what a device backend gives the engine. The engine (engine.c, context.c)
 * validates the API's arguments and runs the device-independent stages (load, passes,
 * plan); everything that touches a device goes through one of these tables, so the
 * engine holds no #ifdef for any backend. The CPU backend lives in engine/cpu/, the CUDA
 * one in engine/cuda/; engine/backends.c answers which are in the build.
 *
 * Contract for the entries (all return statuses with a message, as the public API):
 * - build: after the passes and the plan, prepares the engine for this device (weights,
 *   algorithm choices, device memory plan) into *state (released with `release`).
 * - context_create: per-thread state (arena, stream, staging) into *ctx.
 * - set_input: copies input `index` (dtype and shape validated against what the caller
 *   feeds, engine_input_tensor: uint8 NHWC for an image input; t->dims[0] may be a
 *   smaller flexible batch) into the context, into the memory input_buffer hands out.
 * - input_buffer / output_buffer: the context's host memory of input / output `index`
 *   (validated; the output's shape is static), which the caller fills / reads in place;
 *   input_buffer makes it the input's source (dropping a device binding) at the full
 *   build shape. Contents persist between runs.
 * - bind_input / bind_output: device-memory binding (NULL in a table: unsupported).
 * - enqueue: starts one run on the inputs set or bound and returns; a failure there
 *   means nothing is in flight. wait: waits for it (called exactly once after each
 *   successful enqueue, possibly from another thread) and returns the run's status with
 *   its message set on the waiting thread. The CPU computes the run inside enqueue.
 *   After a successful wait `output` hands out output `index` (owned by the context)
 *   for the run's batch `run_batch` (0: the build's).
 * - profile: per-step figures of the last run when the engine was built profiling.
 * - read_value: after a successful wait, value v (not a constant) of the last run as
 *   float32 into dst (its element count), in the layout the backend holds it (a
 *   channels_last value's NHWC); right for every value only in an engine built with
 *   config keep_values=1 (engine/values.c checks that). Synchronous; outside a run.
 * - step_impl: what runs step s ("cpu", "cudnn", a kernel's name), static or the
 *   engine's storage.
 */
#ifndef INFER_BACKEND_H
#define INFER_BACKEND_H

#include <stdbool.h>

#include "../include/infer.h"
#include "diagnose.h"

typedef struct backend {
  const char *name;
  infer_device device;
  /* true: a run with a smaller flexible batch computes just its rows (the CPU); false:
   * the backend runs the build batch and hands out the first rows, which is right only
   * when rows are independent (engine/batch_rows.c) */
  bool computes_run_batch;
  int (*device_count)(void);
  void (*diagnose)(report *r); /* appends its section of infer_diagnose */

  infer_status (*build)(infer_engine *e, void **state);
  void (*release)(void *state);
  void (*memory)(const infer_engine *e, infer_memory_info *m);

  infer_status (*context_create)(infer_engine *e, void **ctx);
  void (*context_release)(void *ctx);
  infer_status (*set_input)(void *ctx, int index, const infer_tensor *t);
  infer_status (*input_buffer)(void *ctx, int index, void **ptr);
  infer_status (*output_buffer)(void *ctx, int index, const void **ptr);
  infer_status (*bind_input)(void *ctx, int index, const void *device_ptr);
  infer_status (*bind_output)(void *ctx, int index, void *device_ptr);
  bool (*input_bound)(const void *ctx, int index);
  bool (*output_bound)(const void *ctx, int index);
  infer_status (*enqueue)(void *ctx);
  infer_status (*wait)(void *ctx);
  infer_status (*health)(const void *ctx);
  infer_status (*output)(void *ctx, int index, int64_t run_batch, infer_tensor *out);
  infer_status (*profile)(void *ctx, infer_step_profile *steps);
  infer_status (*timing)(const void *ctx, infer_run_timing *t);
  infer_status (*read_value)(void *ctx, int v, float *dst);
  const char *(*step_impl)(const infer_engine *e, int s);
} backend;

/* The backend for device d in this build, or NULL when the build has none. */
const backend *backend_for(infer_device d);

extern const backend cpu_backend; /* engine/cpu/cpu_backend.c */

#endif
