/* fuzz_npy.c: libFuzzer target for the NumPy .npy reader (loaders/npy.c), in memory.
 * Any status is fine; a parsed tensor's bytes are all read back (ASan checks they were
 * allocated as large as its shape says). */
#include <stdint.h>
#include <stdlib.h>

#include "core/tensor.h"
#include "loaders/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tensor t;
  if (npy_parse(data, size, "fuzz.npy", &t) == INFER_OK) {
    int64_t n = tensor_nbytes(&t);
    volatile uint8_t sum = 0;
    for (int64_t b = 0; b < n; b++) sum ^= ((const uint8_t *)t.data)[b];
    (void)sum;
  }
  infer_tensor_clear(&t);
  return 0;
}
