/* plan.c: greedy-by-size placement of buffers against overlapping lifetimes. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "../core/tensor.h"

typedef struct sized {
  int64_t size;
  int index;
} sized;

/* largest first; ties by index keep plans deterministic */
static int by_size_desc(const void *a, const void *b) {
  const sized *x = a, *y = b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  return x->index - y->index;
}

static int64_t align_up(int64_t x) { return (x + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN; }

void plan_free(plan *p) {
  if (!p) return;
  free(p->offsets);
  free(p->sizes);
  memset(p, 0, sizeof *p);
}

infer_status plan_assign_offsets(const plan_buffer *bufs, int n, plan *p) {
  memset(p, 0, sizeof *p);
  p->n = n;
  p->offsets = calloc((size_t)n + 1, sizeof(int64_t));
  p->sizes = calloc((size_t)n + 1, sizeof(int64_t));
  sized *order = calloc((size_t)n + 1, sizeof(sized));
  int *placed = calloc((size_t)n + 1, sizeof(int));
  /* intervals taken by placed buffers that overlap in time with the current one */
  int64_t *lo = calloc((size_t)n + 1, sizeof(int64_t));
  int64_t *hi = calloc((size_t)n + 1, sizeof(int64_t));
  if (!p->offsets || !p->sizes || !order || !placed || !lo || !hi) {
    free(order); free(placed); free(lo); free(hi);
    plan_free(p);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory planning %d buffers", n);
  }
  for (int i = 0; i < n; i++) {
    order[i] = (sized){bufs[i].size, i};
    p->sizes[i] = bufs[i].size;
    if (bufs[i].size < 0 || !size_add(p->naive_bytes, align_up(bufs[i].size), &p->naive_bytes)) {
      free(order); free(placed); free(lo); free(hi);
      plan_free(p);
      return infer_fail(INFER_ERR_INVALID_MODEL, "intermediate sizes overflow");
    }
  }
  qsort(order, (size_t)n, sizeof(sized), by_size_desc);
  int n_placed = 0;
  for (int k = 0; k < n; k++) {
    int b = order[k].index;
    int64_t size = align_up(bufs[b].size);
    int m = 0;
    for (int j = 0; j < n_placed; j++) {
      int o = placed[j];
      if (bufs[o].first <= bufs[b].last && bufs[b].first <= bufs[o].last) {
        lo[m] = p->offsets[o];
        hi[m] = p->offsets[o] + align_up(bufs[o].size);
        m++;
      }
    }
    /* lowest offset where [off, off+size) misses every conflicting interval:
     * candidates are 0 and the end of each conflicting interval */
    int64_t best = -1;
    for (int c = -1; c < m; c++) {
      int64_t off = c < 0 ? 0 : hi[c];
      if (best >= 0 && off >= best) continue;
      bool ok = true;
      for (int j = 0; j < m && ok; j++)
        if (off < hi[j] && lo[j] < off + size) ok = false;
      if (ok) best = off;
    }
    p->offsets[b] = best;
    if (best + size > p->arena_bytes) p->arena_bytes = best + size;
    placed[n_placed++] = b;
  }
  free(order); free(placed); free(lo); free(hi);
  return INFER_OK;
}
