/* tensor_limits.h: the size the engine accepts for one tensor. Shape inference and
 * constant folding (engine/fold.c, the CPU's run-time re-inference) and the loader's
 * initializers refuse a tensor above it before allocating anything, so that a few
 * bytes of model (a Tile with repeats 3e9, a ConstantOfShape of a huge shape) cannot
 * ask for gigabytes. It is per tensor; what an engine may take in all is the memory
 * limit of infer_options_set_memory_limit (core/mem_budget.h). */
#ifndef INFER_TENSOR_LIMITS_H
#define INFER_TENSOR_LIMITS_H

#include <stdint.h>

#include "../include/infer.h"

/* 2^31 elements: 8 GiB of float32, far above any activation or weight of the models
 * this engine runs (the largest embedding tables are ~10^9 elements), and what the
 * kernels' int32 indexing of one tensor can address. */
#define TENSOR_MAX_ELEMENTS ((int64_t)1 << 31)

/* INFER_OK when a tensor of rank/dims (dims known, >= 0) is within
 * TENSOR_MAX_ELEMENTS; else INFER_ERR_OUT_OF_MEMORY (it is refused for its size, like
 * a memory limit: the remedy is a smaller batch or model) with a message "WHAT has N elements
 * (shape), above the limit of ... (TENSOR_MAX_ELEMENTS)". `what` names it. */
infer_status tensor_check_limits(int rank, const int64_t *dims, const char *what);

#endif
