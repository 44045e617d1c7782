/* cuda_backend.h: the CUDA backend as the engine sees it. Only built with
 * INFER_HAVE_CUDA. */
#ifndef INFER_CUDA_BACKEND_H
#define INFER_CUDA_BACKEND_H

#include "../engine_internal.h"

typedef struct cuda_engine cuda_engine;
typedef struct cuda_context cuda_context;

/* Uploads weights (converted to the run precision), prepares every step (algorithm
 * choice, workspace size) and plans the device arena. */
infer_status cuda_engine_build(infer_engine *e, cuda_engine **out);
void cuda_engine_release(cuda_engine *ce);

infer_status cuda_context_create(infer_engine *e, cuda_context **out);
void cuda_context_release(cuda_context *c);
/* Copies host data of input `index` (already validated) into pinned staging; a
 * device binding of that input is dropped (the last call wins). */
infer_status cuda_context_set_input(cuda_context *c, int index, const void *data, int64_t bytes);
/* Device-memory binding (infer_context_bind_*_device; index and size already
 * validated): checks that ptr is device memory of the engine's GPU, then makes
 * runs read input `index` from / write output `index` to it. NULL unbinds. A
 * change of pointer makes the next run capture its CUDA graph again. */
infer_status cuda_context_bind_input(cuda_context *c, int index, const void *ptr);
infer_status cuda_context_bind_output(cuda_context *c, int index, void *ptr);
bool cuda_context_input_bound(const cuda_context *c, int index);
bool cuda_context_output_bound(const cuda_context *c, int index);
infer_status cuda_context_run(cuda_context *c);
/* INFER_OK, or the failure that made the context unusable. */
infer_status cuda_context_health(const cuda_context *c);
/* Per-step times of the last run (profiling contexts), plus cost and what ran it. */
infer_status cuda_context_profile(cuda_context *c, infer_step_profile *prof);
/* Event times of the last run. */
infer_status cuda_context_timing(cuda_context *c, infer_run_timing *t);
/* Device memory of the engine's build. */
void cuda_engine_memory(const cuda_engine *ce, infer_memory_info *m);
/* Host (pinned) copy of output `index` after a run; owned by the context. NULL
 * when the output was bound to device memory in the last run. */
void *cuda_context_output(cuda_context *c, int index);

#endif
