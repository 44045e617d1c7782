/* gpu_available.c: exit 0 when this build sees a CUDA device, else print why and
 * exit 77 (CTest's skip code). Used by tests/run_gpu.sh. */
#include <stdio.h>

#include "infer.h"

int main(void) {
  int n = infer_device_count(INFER_DEVICE_CUDA);
  if (n > 0) return 0;
  printf("SKIP: no CUDA device is visible to this build of infer\n");
  return 77;
}
