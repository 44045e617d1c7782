/* test_tensor.c: fp16/bf16 conversion, checked sizes, dims formatting. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/tensor.h"
#include "check.h"

int main(void) {
  /* every finite half survives half -> float -> half */
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue; /* nan payloads */
    uint16_t back = float_to_half(half_to_float((uint16_t)h));
    if (back != h) {
      printf("FAIL half round trip %04x -> %g -> %04x\n", h, half_to_float((uint16_t)h), back);
      failures++;
      break;
    }
  }
  CHECK(half_to_float(0x3c00) == 1.0f);
  CHECK(half_to_float(0xc000) == -2.0f);
  CHECK(half_to_float(0x0001) == ldexpf(1, -24));
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(65520.0f) == 0x7c00); /* rounds to inf */
  CHECK(float_to_half(1.0f + ldexpf(1, -11)) == 0x3c00); /* tie to even */
  CHECK(float_to_half(1.0f + 3 * ldexpf(1, -11)) == 0x3c02);
  CHECK(isnan(half_to_float(float_to_half(NAN))));
  CHECK(bf16_to_float(float_to_bf16(1.5f)) == 1.5f);
  CHECK(float_to_bf16(1.0f + ldexpf(1, -8)) == 0x3f80); /* tie to even */
  CHECK(isnan(bf16_to_float(float_to_bf16(NAN))));

  int64_t out;
  CHECK(size_mul(1 << 20, 1 << 20, &out) && out == (int64_t)1 << 40);
  CHECK(!size_mul(INT64_MAX / 2 + 1, 2, &out));
  CHECK(!size_mul(-1, 2, &out));
  int64_t big[3] = {1 << 30, 1 << 30, 1 << 30};
  CHECK(dims_count(3, big) == -1);
  int64_t dims[4] = {1, 3, 224, 224};
  CHECK(tensor_nbytes_of(INFER_DTYPE_FLOAT32, 4, dims) == 4 * 3 * 224 * 224);
  char buf[64];
  CHECK(strcmp(dims_format(4, dims, buf, sizeof buf), "1x3x224x224") == 0);
  CHECK(strcmp(dims_format(0, dims, buf, sizeof buf), "scalar") == 0);
  printf(failures ? "%d failures\n" : "all passed\n", failures);
  return failures != 0;
}
