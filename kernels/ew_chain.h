/* ew_chain.h: one kernel for a chain of elementwise steps over broadcast inputs
 * (kernels/ew_chain_ops.h), so a chain of N elementwise ops reads and writes memory once
 * instead of N times. */
#ifndef INFER_K_EW_CHAIN_H
#define INFER_K_EW_CHAIN_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "ew_chain_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The output's dims (merged where every input walks them contiguously) and each input's
 * strides over them in elements (0 where it broadcasts); dims[rank - 1] is innermost. */
typedef struct k_ewc_geom {
  int rank;
  int n_in;
  int64_t dims[EWC_MAX_RANK];
  int64_t strides[EWC_MAX_INPUTS][EWC_MAX_RANK];
  int64_t offset[EWC_MAX_INPUTS]; /* each input's first element */
} k_ewc_geom;

/* y = chain(in[0], in[1], ...) for float32, float16 or bfloat16 (k_dtype codes; every
 * input and the output of that dtype). */
cudaError_t k_ew_chain(int dtype, const void *const *in, void *y, const k_ewc_geom *g,
                       const ewc_step *steps, int n_steps, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
