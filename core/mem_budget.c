/* mem_budget.c: see mem_budget.h. */
#include "mem_budget.h"

#include <stdbool.h>

#include "status.h"

infer_status mem_budget_take(mem_budget *b, int64_t bytes, const char *what) {
  if (!b || bytes <= 0) return INFER_OK;
  int64_t used = __atomic_load_n(&b->used, __ATOMIC_RELAXED);
  for (;;) {
    if ((b->limit > 0 && (bytes > b->limit || used > b->limit - bytes)) ||
        bytes > INT64_MAX - used)
      return infer_fail(INFER_ERR_OUT_OF_MEMORY,
                        "%s needs %lld bytes of %s memory, which would exceed the %s memory "
                        "limit of %lld bytes (%lld in use; infer_options_set_memory_limit)",
                        what, (long long)bytes, b->kind, b->kind, (long long)b->limit,
                        (long long)used);
    if (__atomic_compare_exchange_n(&b->used, &used, used + bytes, true, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
      return INFER_OK;
  }
}

void mem_budget_give(mem_budget *b, int64_t bytes) {
  if (b && bytes > 0) __atomic_fetch_sub(&b->used, bytes, __ATOMIC_RELAXED);
}
