/* mem_budget.h: a memory limit and what has been taken of it (infer_options_set_memory_limit).
 * An engine has one for host and one for device memory; its build (model file, weights,
 * folded constants, device weights) and each of its contexts (arena, workspace, staging)
 * take their bytes from it BEFORE allocating them and give them back when freed, so that
 * exceeding the limit fails with a status and a message instead of an allocation that
 * the system may grant lazily and kill the process for later. Thread-safe: contexts of
 * one engine are created and released concurrently. */
#ifndef INFER_MEM_BUDGET_H
#define INFER_MEM_BUDGET_H

#include <stdint.h>

#include "../include/infer.h"

typedef struct mem_budget {
  int64_t limit;    /* bytes; 0: unlimited (still counted) */
  int64_t used;     /* taken and not given back; atomic */
  const char *kind; /* "host" or "device", for messages */
} mem_budget;

/* Takes `bytes` for `what` (e.g. "the arena of a context"); b NULL or bytes <= 0 takes
 * nothing. Fails with INFER_ERR_OUT_OF_MEMORY when it would exceed the limit, naming
 * what asked for how much, what is in use and the limit. */
infer_status mem_budget_take(mem_budget *b, int64_t bytes, const char *what);
/* Gives back what mem_budget_take took (b NULL or bytes <= 0: nothing). */
void mem_budget_give(mem_budget *b, int64_t bytes);

#endif
