/* plan.h: the memory planner: lifetimes of intermediates -> offsets in one arena. */
#ifndef INFER_PLAN_H
#define INFER_PLAN_H

#include <stdint.h>

#include "../include/infer.h"

#define PLAN_ALIGN 256

/* One buffer to place: `size` bytes live from step `first` to step `last`
 * (inclusive). */
typedef struct plan_buffer {
  int64_t size;
  int first, last;
} plan_buffer;

typedef struct plan {
  int n;
  int64_t *offsets;    /* per buffer */
  int64_t *sizes;      /* per buffer, as asked (unaligned) */
  int64_t arena_bytes; /* total */
  int64_t naive_bytes; /* sum of all aligned sizes, for comparison */
} plan;

/* Places buffers so that no two with overlapping lifetimes share bytes
 * (greedy: largest first, lowest offset that fits). offsets owned by p. */
infer_status plan_assign_offsets(const plan_buffer *bufs, int n, plan *p);
void plan_free(plan *p);

#endif
