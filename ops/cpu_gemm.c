/* cpu_gemm.c: cpu_sgemm through CBLAS when available, else a blocked C loop. */
#include "cpu_gemm.h"

#include <pthread.h>

#include <limits.h>

#ifdef INFER_HAVE_CBLAS
#include <cblas.h>
#endif

/* The fallback: the classic packed GEMM. A KC-deep slice of op(B) is packed NR
 * columns at a time, MC rows of op(A) (times alpha) MR at a time, and an MR x NR
 * block of C is accumulated in registers (fixed trip counts, so the compiler
 * vectorizes it). Tails are zero-padded in the packs, so every element of C is
 * computed by the same instruction sequence: rows with equal inputs give equal
 * outputs wherever they fall. Packs live on the stack (about 48 KiB). */
enum { MR = 4, NR = 8, KC = 256, MC = 32 };

static void scale_c(int64_t m, int64_t n, float beta, float *c, int64_t ldc) {
  for (int64_t i = 0; i < m; i++) {
    float *row = c + i * ldc;
    if (beta == 0.0f)
      for (int64_t j = 0; j < n; j++) row[j] = 0.0f;
    else if (beta != 1.0f)
      for (int64_t j = 0; j < n; j++) row[j] *= beta;
  }
}

/* acc (MR x NR) = sum over p of ap[p][r] * bp[p][c]; then C += acc (valid part). */
static void micro_kernel(int64_t kc, const float *restrict ap, const float *restrict bp, float *c,
                         int64_t ldc, int64_t mr, int64_t nr) {
  float acc[MR][NR];
  for (int r = 0; r < MR; r++)
    for (int j = 0; j < NR; j++) acc[r][j] = 0.0f;
  for (int64_t p = 0; p < kc; p++) {
    const float *b = bp + p * NR, *a = ap + p * MR;
    for (int r = 0; r < MR; r++)
      for (int j = 0; j < NR; j++) acc[r][j] += a[r] * b[j];
  }
  for (int64_t r = 0; r < mr; r++)
    for (int64_t j = 0; j < nr; j++) c[r * ldc + j] += acc[r][j];
}

static void gemm_fallback(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                          const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                          float *c, int64_t ldc) {
  float apack[MC * KC], bpack[KC * NR];
  scale_c(m, n, beta, c, ldc);
  if (k == 0 || alpha == 0.0f) return;
  for (int64_t p0 = 0; p0 < k; p0 += KC) {
    int64_t kc = k - p0 < KC ? k - p0 : KC;
    for (int64_t i0 = 0; i0 < m; i0 += MC) {
      int64_t mc = m - i0 < MC ? m - i0 : MC;
      /* apack: MC/MR panels, each kc x MR, zero rows past m */
      for (int64_t ib = 0; ib < mc; ib += MR)
        for (int64_t p = 0; p < kc; p++)
          for (int64_t r = 0; r < MR; r++) {
            int64_t i = i0 + ib + r, pp = p0 + p;
            float v = i < m ? (trans_a ? a[pp * lda + i] : a[i * lda + pp]) : 0.0f;
            apack[ib * kc + p * MR + r] = alpha * v;
          }
      for (int64_t j0 = 0; j0 < n; j0 += NR) {
        int64_t nr = n - j0 < NR ? n - j0 : NR;
        for (int64_t p = 0; p < kc; p++)
          for (int64_t j = 0; j < NR; j++) {
            int64_t jj = j0 + j, pp = p0 + p;
            bpack[p * NR + j] = j < nr ? (trans_b ? b[jj * ldb + pp] : b[pp * ldb + jj]) : 0.0f;
          }
        for (int64_t ib = 0; ib < mc; ib += MR) {
          int64_t mr = mc - ib < MR ? mc - ib : MR;
          micro_kernel(kc, apack + ib * kc, bpack, c + (i0 + ib) * ldc + j0, ldc, mr, nr);
        }
      }
    }
  }
}

#if defined(INFER_HAVE_CBLAS) && defined(OPENBLAS_VERSION)
/* The reference backend runs OpenBLAS on one thread: its results then do not
 * depend on how work is split between threads (which changes rounding per output
 * row), and on the 2-core development machines it was not slower (ResNet-50:
 * 1.07 s vs 1.04 s; VGG-19 3.9 s vs 6.5 s). */
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static void blas_single_thread(void) { openblas_set_num_threads(1); }
#endif

void cpu_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
               int64_t ldc) {
  if (m <= 0 || n <= 0) return;
#if defined(INFER_HAVE_CBLAS) && defined(OPENBLAS_VERSION)
  pthread_once(&blas_once, blas_single_thread);
#endif
#ifdef INFER_HAVE_CBLAS
  /* CBLAS takes int sizes (OpenBLAS without INTERFACE64); larger problems and the
   * degenerate k == 0 (which some BLAS builds skip without scaling C) use the loop. */
  if (k > 0 && m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && lda <= INT_MAX && ldb <= INT_MAX &&
      ldc <= INT_MAX) {
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, a,
                (int)(lda > 0 ? lda : 1), b, (int)(ldb > 0 ? ldb : 1), beta, c, (int)ldc);
    return;
  }
#endif
  gemm_fallback(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
