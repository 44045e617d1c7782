/* cuda_backend.h: the CUDA backend's halves (engine/cuda only); the engine sees the
 * table `cuda_backend` (engine/backend.h), defined in cuda_engine.c. */
#ifndef INFER_CUDA_BACKEND_H
#define INFER_CUDA_BACKEND_H

#include "../backend.h"
#include "../engine_internal.h"

typedef struct cuda_engine cuda_engine;
typedef struct cuda_context cuda_context;

extern const backend cuda_backend;

/* Uploads weights (converted to the run precision), prepares every step (algorithm
 * choice, workspace size) and plans the device arena. */
infer_status cuda_engine_build(infer_engine *e, void **out);
void cuda_engine_release(void *ce);
/* Device memory of the engine's build. */
void cuda_engine_memory(const infer_engine *e, infer_memory_info *m);
int cuda_visible_devices(void);
/* Appends the CUDA section of infer_diagnose (engine/cuda/cuda_diagnose.c). */
void cuda_diagnose(report *r);

infer_status cuda_context_create(infer_engine *e, void **out);
void cuda_context_release(void *c);
/* Copies the host data of input `index` (already validated) into pinned staging; a
 * device binding of that input is dropped (the last call wins). */
infer_status cuda_context_set_input(void *c, int index, const infer_tensor *t);
/* Device-memory binding (infer_context_bind_*_device; index and size already
 * validated): checks that ptr is device memory of the engine's GPU, then makes
 * runs read input `index` from / write output `index` to it. NULL unbinds. A
 * change of pointer makes the next run capture its CUDA graph again. */
infer_status cuda_context_bind_input(void *c, int index, const void *ptr);
infer_status cuda_context_bind_output(void *c, int index, void *ptr);
bool cuda_context_input_bound(const void *c, int index);
bool cuda_context_output_bound(const void *c, int index);
/* The pinned staging of input / output `index` (infer_context_input_buffer / output_buffer);
 * input_buffer drops a device binding of the input, as set_input does. */
infer_status cuda_context_input_buffer(void *c, int index, void **ptr);
infer_status cuda_context_output_buffer(void *c, int index, const void **ptr);
/* enqueue puts the run on the context's stream (replaying its CUDA graph from the
 * second run on) and returns; wait synchronizes the stream and returns the run's status.
 * A failed run fails the context for good. */
infer_status cuda_context_enqueue(void *c);
infer_status cuda_context_wait(void *c);
/* INFER_OK, or the failure that made the context unusable. */
infer_status cuda_context_health(const void *c);
/* Per-step times of the last run (profiling contexts), plus cost and what ran it. */
infer_status cuda_context_profile(void *c, infer_step_profile *prof);
/* Event times of the last run. */
infer_status cuda_context_timing(const void *c, infer_run_timing *t);
/* Output `index` of the last run in pinned host staging, owned by the context; an
 * error when the last run wrote it to bound device memory. */
infer_status cuda_context_output(void *c, int index, int64_t run_batch, infer_tensor *out);
/* Value v of the last run (config keep_values) widened to float32, storage layout. */
infer_status cuda_context_read_value(void *c, int v, float *dst);
/* What runs step s: the op's implementation name, "view", "input-cast", "cudnn", ... */
const char *cuda_step_impl(const infer_engine *e, int s);

#endif
