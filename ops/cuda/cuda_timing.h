/* cuda_timing.h: the build-time timing every measured choice uses (convolution
 * algorithms and alternatives, cuBLASLt algorithms, cuDNN graph plans, attention). */
#ifndef INFER_CUDA_TIMING_H
#define INFER_CUDA_TIMING_H

#include <stdbool.h>

/* Milliseconds per call of run(ctx), which enqueues one run on `stream` (a
 * cudaStream_t) and says whether it could: warm but median-free, three calls timed by
 * CUDA events after one warm-up. -1 when a call or the timing fails; a launch error is
 * cleared either way, so the build goes on with the other candidates. */
float cuda_time_runs(void *stream, bool (*run)(void *ctx), void *ctx);

#endif
