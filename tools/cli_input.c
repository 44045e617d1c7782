/* cli_input.c: the seeded random inputs the command, --bench and --profile use when no
 * input file is given. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

/* splitmix64: small, seeded, the same everywhere */
static uint64_t next_random(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Fills `data` (room for info's count of info's dtype) like cli_random_input. */
void cli_random_fill(const infer_tensor *info, uint64_t *seed, void *data) {
  infer_tensor t = *info;
  t.data = data;
  int64_t n = infer_tensor_count(&t);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next_random(seed);
    double u = (double)(r >> 11) / 9007199254740992.0;
    switch (t.dtype) {
      case INFER_DTYPE_FLOAT32: case INFER_DTYPE_FLOAT64:
      case INFER_DTYPE_FLOAT16: case INFER_DTYPE_BFLOAT16: infer_tensor_set(&t, i, 2 * u - 1); break;
      case INFER_DTYPE_BOOL: infer_tensor_set(&t, i, (double)(r & 1)); break;
      default: infer_tensor_set(&t, i, (double)(r % 10)); break;
    }
  }
}

/* Random input of the model's shape: floats uniform in [-1, 1), integers in
 * [0, 10), booleans 0/1 (never all zeros). */
int cli_random_input(const infer_engine *e, int index, uint64_t *seed, infer_tensor *t) {
  const char *name;
  infer_engine_input_info(e, index, &name, t);
  int64_t n = infer_tensor_count(t);
  size_t es = infer_dtype_size(t->dtype);
  if (n < 0 || es == 0) {
    fprintf(stderr, "infer: cannot make a random value for input '%s'\n", name);
    return EXIT_USAGE;
  }
  t->data = malloc(n ? (size_t)n * es : 1);
  if (!t->data) {
    fprintf(stderr, "infer: out of memory for input '%s'\n", name);
    return EXIT_DEVICE;
  }
  cli_random_fill(t, seed, t->data);
  return EXIT_OK;
}
