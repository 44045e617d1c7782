/* quant_gemm.c: exact int32 products through float GEMM chunks (see quant_gemm.h). */
#include "quant_gemm.h"

#include <math.h>

#include "cpu_gemm.h"

/* 2^24: every integer of smaller magnitude is a float. */
#define EXACT_LIMIT 16777216.0

float quant_absmax(const float *v, int64_t count) {
  float m = 0.0f;
  for (int64_t i = 0; i < count; i++) m = fmaxf(m, fabsf(v[i]));
  return m;
}

static inline int32_t wrap_add(int32_t a, int64_t b) {
  return (int32_t)(uint32_t)((uint32_t)a + (uint32_t)b);
}

void quant_gemm_exact(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                      const float *b, int64_t ldb, float amax, float bmax, float *part,
                      int32_t *c, int64_t ldc) {
  double prod = (double)amax * (double)bmax;
  /* kc products of magnitude <= prod keep every partial sum below 2^24 */
  int64_t kc = prod > 0 ? (int64_t)((EXACT_LIMIT - 1) / prod) : k;
  if (kc > k) kc = k;
  if (kc < 1) { /* single products beyond float: 64-bit integer loop */
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        int64_t acc = 0;
        for (int64_t p = 0; p < k; p++)
          acc += (int64_t)a[i * lda + p] * (int64_t)b[p * ldb + j];
        c[i * ldc + j] = wrap_add(0, acc);
      }
    return;
  }
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) c[i * ldc + j] = 0;
  if (k == 0) return;
  for (int64_t p0 = 0; p0 < k; p0 += kc) {
    int64_t len = k - p0 < kc ? k - p0 : kc;
    cpu_sgemm(false, false, m, n, len, 1.0f, a + p0, lda, b + p0 * ldb, ldb, 0.0f, part, n);
    for (int64_t i = 0; i < m; i++) {
      const float *pr = part + i * n;
      int32_t *cr = c + i * ldc;
      for (int64_t j = 0; j < n; j++) cr[j] = wrap_add(cr[j], (int64_t)pr[j]);
    }
  }
}
