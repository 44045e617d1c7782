/* test_plan.c: the memory planner on random lifetimes: no two buffers whose lifetimes
 * overlap share a byte (brute force), offsets are aligned, and the arena is never
 * larger than the naive sum. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/plan.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

int main(void) {
  int failures = 0;
  for (int trial = 0; trial < 500 && !failures; trial++) {
    int n = 1 + (int)(next() % 60), steps = 1 + (int)(next() % 40);
    plan_buffer *b = calloc((size_t)n, sizeof *b);
    for (int i = 0; i < n; i++) {
      b[i].size = (int64_t)(next() % 5000); /* zero-size buffers too */
      b[i].first = (int)(next() % (unsigned)steps);
      b[i].last = b[i].first + (int)(next() % (unsigned)(steps - b[i].first));
    }
    plan p;
    if (plan_assign_offsets(b, n, &p) != INFER_OK) {
      printf("FAIL trial %d: planner error\n", trial);
      failures++;
    }
    for (int i = 0; i < n && !failures; i++) {
      if (p.offsets[i] % PLAN_ALIGN) {
        printf("FAIL trial %d: offset %lld not aligned\n", trial, (long long)p.offsets[i]);
        failures++;
      }
      if (p.offsets[i] + b[i].size > p.arena_bytes) {
        printf("FAIL trial %d: buffer %d ends past the arena\n", trial, i);
        failures++;
      }
      for (int j = i + 1; j < n && !failures; j++) {
        bool time = b[i].first <= b[j].last && b[j].first <= b[i].last;
        bool space = p.offsets[i] < p.offsets[j] + b[j].size && p.offsets[j] < p.offsets[i] + b[i].size;
        if (time && space && b[i].size && b[j].size) {
          printf("FAIL trial %d: buffers %d and %d overlap in time and space\n", trial, i, j);
          failures++;
        }
      }
    }
    if (p.arena_bytes > p.naive_bytes) {
      printf("FAIL trial %d: arena %lld > naive %lld\n", trial, (long long)p.arena_bytes,
             (long long)p.naive_bytes);
      failures++;
    }
    plan_free(&p);
    free(b);
  }
  /* a chain a->b->c: a and c can share, so the arena is below the naive sum */
  plan_buffer chain[3] = {{1024, 0, 1}, {1024, 1, 2}, {1024, 2, 3}};
  plan p;
  plan_assign_offsets(chain, 3, &p);
  if (p.arena_bytes != 2048) {
    printf("FAIL chain: arena %lld, expected 2048\n", (long long)p.arena_bytes);
    failures++;
  }
  plan_free(&p);
  printf(failures ? "%d failures\n" : "all passed\n", failures);
  return failures != 0;
}
