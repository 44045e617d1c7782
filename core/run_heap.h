/* run_heap.h: the heap a run takes the buffers of shapes known only then from (values of
 * data-dependent shapes, control flow's subgraph values): blocks malloc'ed one by one,
 * each first taken from a memory budget (core/mem_budget.h), all freed at once. The CPU
 * context keeps one per context and empties it at the start of each run
 * (engine/cpu/cpu_context.c); a host-fallback step of a control-flow op keeps one for
 * the duration of its host function (ops/cuda/cuda_host_fallback.c); the build folds a
 * control-flow node on one (engine/fold.c). Not thread-safe: one owner at a time. */
#ifndef INFER_RUN_HEAP_H
#define INFER_RUN_HEAP_H

#include <stdint.h>

#include "mem_budget.h"

typedef struct run_heap {
  mem_budget *budget; /* charged for every block; NULL: none */
  void **blocks;
  int n, cap;
  int64_t taken; /* what the blocks took of the budget */
} run_heap;

/* A block of `bytes` (>= 0; 0 gives a 1-byte block) into *out, for `what` (named in
 * the message when the budget or malloc refuses: INFER_ERR_OUT_OF_MEMORY). */
infer_status run_heap_alloc(run_heap *h, int64_t bytes, const char *what, void **out);
/* Frees every block and gives their bytes back; the heap stays usable. */
void run_heap_reset(run_heap *h);
/* run_heap_reset and the block table itself (h may be NULL). */
void run_heap_release(run_heap *h);

#endif
