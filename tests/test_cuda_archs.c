/* test_cuda_archs.c: engine/cuda/cuda_archs.c, which tells --diagnose whether a GPU
 * runs this build's compiled code or JIT-compiles its PTX. The expectations follow
 * NVIDIA's compatibility rules (CUDA C++ Programming Guide, "Binary Compatibility" and
 * "PTX Compatibility"): sm_XY SASS runs on X.Z for Z >= Y; compute_XY PTX is compiled
 * for any later compute capability; sm_90a code runs on 9.0 only. No GPU needed. */
#include <stdio.h>
#include <string.h>

#include "engine/cuda/cuda_archs.h"
#include "check.h"

static void fit(const char *list, int major, int minor, cuda_arch_fit want, int want_used) {
  int used = -1;
  cuda_arch_fit got = cuda_archs_fit(list, major, minor, &used);
  CHECK(got == want && used == want_used, "'%s' on %d.%d: fit %d using %d, expected %d using %d",
        list, major, minor, (int)got, used, (int)want, want_used);
}

static void describe(const char *list, const char *want) {
  char buf[256];
  cuda_archs_describe(list, buf, sizeof buf);
  CHECK(strcmp(buf, want) == 0, "describe('%s') = '%s', expected '%s'", list, buf, want);
}

int main(void) {
  const char *dflt = "80-real,86-real,89-real,90"; /* the build's default list */
  fit(dflt, 8, 0, CUDA_ARCH_SASS, 80);
  fit(dflt, 8, 6, CUDA_ARCH_SASS, 86);
  fit(dflt, 8, 7, CUDA_ARCH_SASS, 86); /* Jetson Orin runs the sm_86 code */
  fit(dflt, 8, 9, CUDA_ARCH_SASS, 89);
  fit(dflt, 9, 0, CUDA_ARCH_SASS, 90);
  fit(dflt, 10, 0, CUDA_ARCH_PTX_JIT, 90); /* Blackwell: the compute_90 PTX */
  fit(dflt, 12, 0, CUDA_ARCH_PTX_JIT, 90);
  fit(dflt, 7, 5, CUDA_ARCH_NONE, 0);
  /* CMake's own default for nvcc 13 when nothing is set: an H200 JIT-compiles it */
  fit("75", 9, 0, CUDA_ARCH_PTX_JIT, 75);
  fit("75", 7, 5, CUDA_ARCH_SASS, 75);
  fit("75-real", 9, 0, CUDA_ARCH_NONE, 0);
  fit("90-virtual", 9, 0, CUDA_ARCH_PTX_JIT, 90);
  fit("90a-real", 9, 0, CUDA_ARCH_SASS, 90);
  fit("90a-real", 10, 0, CUDA_ARCH_NONE, 0);
  fit("90a", 10, 0, CUDA_ARCH_NONE, 0); /* compute_90a PTX is for 9.0 only too */
  fit("86-real", 8, 0, CUDA_ARCH_NONE, 0); /* SASS never runs on an older minor */
  fit("90;80-real", 8, 6, CUDA_ARCH_SASS, 80); /* ';' separates as well, any order */
  fit("", 9, 0, CUDA_ARCH_NONE, 0);
  fit(NULL, 9, 0, CUDA_ARCH_NONE, 0);

  describe("80-real,86-real,89-real,90", "sm_80, sm_86, sm_89, sm_90; PTX compute_90");
  describe("90-real", "sm_90");
  describe("90-virtual", "PTX compute_90");
  describe("75", "sm_75; PTX compute_75");
  describe("90a-real;100-real", "sm_90a, sm_100");
  describe("", "(unknown)");
  char small[8];
  cuda_archs_describe("80-real,86-real", small, sizeof small);
  CHECK(strlen(small) < sizeof small, "truncation must stay in the buffer");
  return check_report("test_cuda_archs");
}
