/* run_heap.c: see run_heap.h. */
#include "run_heap.h"

#include <stdlib.h>

#include "status.h"

infer_status run_heap_alloc(run_heap *h, int64_t bytes, const char *what, void **out) {
  *out = NULL;
  if (bytes < 0) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: the size overflows", what);
  if (h->n == h->cap) {
    int cap = h->cap ? h->cap * 2 : 64;
    void **grown = realloc(h->blocks, sizeof(void *) * (size_t)cap);
    if (!grown) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    h->blocks = grown;
    h->cap = cap;
  }
  TRY(mem_budget_take(h->budget, bytes, what));
  void *p = malloc(bytes > 0 ? (size_t)bytes : 1);
  if (!p) {
    mem_budget_give(h->budget, bytes);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate %lld bytes for %s",
                      (long long)bytes, what);
  }
  h->taken += bytes;
  h->blocks[h->n++] = p;
  *out = p;
  return INFER_OK;
}

void run_heap_reset(run_heap *h) {
  for (int i = 0; i < h->n; i++) free(h->blocks[i]);
  h->n = 0;
  mem_budget_give(h->budget, h->taken);
  h->taken = 0;
}

void run_heap_release(run_heap *h) {
  if (!h) return;
  run_heap_reset(h);
  free(h->blocks);
  h->blocks = NULL;
  h->cap = 0;
}
