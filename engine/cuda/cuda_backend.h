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
/* Copies host data of input `index` (already validated) into pinned staging. */
infer_status cuda_context_set_input(cuda_context *c, int index, const void *data, int64_t bytes);
infer_status cuda_context_run(cuda_context *c);
/* INFER_OK, or the failure that made the context unusable. */
infer_status cuda_context_health(const cuda_context *c);
/* Per-step times of the last run (profiling contexts), plus cost and what ran it. */
infer_status cuda_context_profile(cuda_context *c, infer_step_profile *prof);
/* Event times of the last run. */
infer_status cuda_context_timing(cuda_context *c, infer_run_timing *t);
/* Device memory of the engine's build. */
void cuda_engine_memory(const cuda_engine *ce, infer_memory_info *m);
/* Host (pinned) copy of output `index` after a run; owned by the context. */
void *cuda_context_output(cuda_context *c, int index);

#endif
