/* cuda_internal.h: the CUDA engine and context structures (engine/cuda only). */
#ifndef INFER_CUDA_INTERNAL_H
#define INFER_CUDA_INTERNAL_H

#include "../../ops/cuda_op.h"
#include "cuda_backend.h"
#include "../../core/cuda_check.h"

/* Why a step runs nothing: its bytes are already where they belong. */
typedef enum step_skip {
  STEP_RUNS = 0,
  STEP_INPUT_CAST, /* a Transpose the input cast does (in_transpose) */
  STEP_VIEW,       /* its output is a view of its input in the memory plan (alias_of) */
} step_skip;

typedef struct cuda_step {
  int node;
  const cuda_op *op;
  void *state;
} cuda_step;

struct cuda_engine {
  int device;
  char device_name[256];
  int sm_count;
  infer_precision precision;
  infer_dtype *storage; /* per value: dtype on the device */
  void *weights;        /* one allocation for every constant the steps read */
  int64_t weights_bytes;
  void **dev_const; /* per value: device address of a constant, or NULL */
  plan mem;         /* the device arena */
  int *buffer_of;
  int n_steps;
  cuda_step *steps;
  int64_t ws_bytes;
  int64_t host_ws_bytes; /* pinned host scratch of a context: host-fallback steps; 0: none */
  /* graph outputs of a shape known only at run (a HostRegion's): the step that gives
   * output o on the host (cuda_host_fallback_output) and its output index there; -1 for
   * the outputs copied off the device */
  int *host_out_step, *host_out_slot;
  int max_io; /* most inputs/outputs of one node */
  unsigned needs; /* CUDA_NEEDS_* of all steps */
  void *build_cudnn; /* cudnnHandle_t the build's cuDNN plans were made with */
  /* fp16 channels-last engines: per graph input, the step whose NCHW -> NHWC
   * Transpose the input's cast does in the same pass (-1: none); that step skips */
  int *in_transpose;
  unsigned char *step_skip; /* per step, a step_skip */
  int *alias_of;            /* per value: the value whose bytes it shares (a view), or -1 */
  /* per value: the Concat output it is written into as a part (cuda_concat_in_place.c),
   * or -1; its byte offset there; the pitch its producer was asked to write with */
  int *into;
  int64_t *into_off, *out_pitch;
};

/* Creates a stream and library handles bound to it (contexts and the build). */
infer_status cuda_exec_open(cuda_exec *x, int device, infer_precision p, unsigned needs);
void cuda_exec_close(cuda_exec *x);

/* CUDA stream capture fails, in the capturing thread or in another one, when a
 * thread synchronizes the device meanwhile (cudaFree, cuDNN's algorithm search,
 * context teardown). Builds, context creation and releases share this lock;
 * a capture takes it alone. Runs outside capture need no lock. */
void cuda_device_work_begin(void);
void cuda_device_work_end(void);
void cuda_capture_begin(void);
void cuda_capture_end(void);

#endif
