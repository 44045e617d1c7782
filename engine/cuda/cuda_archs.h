/* cuda_archs.h: what a CUDA architecture list (CMAKE_CUDA_ARCHITECTURES, as the build
 * recorded it, entries separated by ',' or ';') puts in the binary, and how a GPU of a
 * given compute capability runs it. Pure C, no CUDA headers (tests/test_cuda_archs.c).
 *
 * Entries as CMake writes them: "NN" is SASS for sm_NN and PTX for compute_NN,
 * "NN-real" SASS only, "NN-virtual" PTX only; an "a"/"f" suffix (90a) is code for
 * exactly that compute capability. The driver runs SASS built for sm_XY on a GPU of the
 * same major version X and a minor version >= Y; without such SASS it JIT-compiles PTX
 * of a compute capability <= the GPU's (at first load: slower start, code not tuned
 * for the GPU). */
#ifndef INFER_CUDA_ARCHS_H
#define INFER_CUDA_ARCHS_H

#include <stddef.h>

typedef enum cuda_arch_fit {
  CUDA_ARCH_SASS,    /* the GPU runs compiled code of the list */
  CUDA_ARCH_PTX_JIT, /* only PTX fits: the driver compiles it at load */
  CUDA_ARCH_NONE     /* nothing in the list runs on it */
} cuda_arch_fit;

/* How a GPU of compute capability major.minor runs the code of `list`; *used (when not
 * NULL) gets the architecture number it runs (e.g. 80 for sm_80 SASS on an sm_86 GPU,
 * 90 for compute_90 PTX), or 0. */
cuda_arch_fit cuda_archs_fit(const char *list, int major, int minor, int *used);

/* "sm_80, sm_86, sm_89, sm_90; PTX compute_90" (or "(unknown)" for an empty list) into
 * buf, truncated to cap. */
void cuda_archs_describe(const char *list, char *buf, size_t cap);

#endif
