/* test_nhwc_kernels.c: the channels-last fast paths of the memory-bound kernels against
 * their general paths, on the device (label gpu; exit 77 without a CUDA device).
 *
 * - k_conv_epilogue with inner = 1 (rows of channels) against the same data transposed
 *   to NCHW (inner = rows, the per-element kernel): every activation, with and without
 *   bias and residual, NaN and infinities in the input; bit for bit.
 * - k_ew_binary on [B, H, W, C] op [B or 1, 1, 1, C] (both operand orders, in place
 *   too), whose geometry takes the row path (k_ew_binary_rows_applies), against the same
 *   op through an unmerged rank-4 geometry (the general broadcast kernel): every float
 *   arithmetic op; bit for bit.
 * - k_bn_apply_act with s = 1 against the transposed data with s = rows; bit for bit;
 *   with Relu also against BatchNormalization then the Relu kernel.
 * - k_reduce_mid against k_reduce_3d (one thread per output): Max/Min bit for bit,
 *   sums within a tolerance scaled to the summed magnitudes (another summation order);
 *   planned and forced chunk counts; two runs with a poisoned workspace between them
 *   must give the same bits.
 * C is 1 to 520 (multiples of 8 and not; above 256 vectors per row), rows not multiples
 * of any block size, pointers offset by one or two elements (narrower vectors). Every
 * output buffer has guard bytes around it that must stay untouched. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "core/tensor.h"
#include "kernels/conv_epilogue.h"
#include "kernels/elementwise.h"
#include "kernels/norm.h"
#include "kernels/reduce.h"

#define GUARD 512

static int failures, cases;

#define CK(expr)                                                                      \
  do {                                                                                \
    cudaError_t e_ = (expr);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,                   \
              cudaGetErrorString(e_));                                                \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

static void fail(const char *fmt, const char *what, long long a, long long b) {
  failures++;
  if (failures <= 40) {
    fprintf(stderr, "FAIL %s: ", what);
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
  }
}

/* ---- host values ---------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double rnd(void) { /* [0, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}
static float uni(float lo, float hi) { return lo + (hi - lo) * (float)rnd(); }

static size_t esz(int dt) { return dt == K_F32 ? 4 : 2; }

static void pack(int dt, const float *src, void *dst, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (dt == K_F32) ((float *)dst)[i] = src[i];
    else if (dt == K_F16) ((uint16_t *)dst)[i] = float_to_half(src[i]);
    else ((uint16_t *)dst)[i] = float_to_bf16(src[i]);
  }
}

static float unpack1(int dt, const void *p, size_t i) {
  if (dt == K_F32) return ((const float *)p)[i];
  if (dt == K_F16) return half_to_float(((const uint16_t *)p)[i]);
  return bf16_to_float(((const uint16_t *)p)[i]);
}

/* Index of the first element whose bits differ (NaN equals NaN), or -1. */
static long long first_diff(int dt, const void *a, const void *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    float x = unpack1(dt, a, i), y = unpack1(dt, b, i);
    if (isnan(x) && isnan(y)) continue;
    bool same = dt == K_F32 ? ((const uint32_t *)a)[i] == ((const uint32_t *)b)[i]
                            : ((const uint16_t *)a)[i] == ((const uint16_t *)b)[i];
    if (!same) return (long long)i;
  }
  return -1;
}

/* y[c][r] = x[r][c] for rows x cols elements of es bytes. */
static void transpose(const void *x, void *y, size_t rows, size_t cols, size_t es) {
  for (size_t r = 0; r < rows; r++)
    for (size_t c = 0; c < cols; c++)
      memcpy((char *)y + (c * rows + r) * es, (const char *)x + (r * cols + c) * es, es);
}

/* Random values in [lo, hi) with a NaN, infinities and a negative zero sprinkled in
 * (when `specials`). */
static void fill(float *v, size_t n, float lo, float hi, bool specials) {
  for (size_t i = 0; i < n; i++) v[i] = uni(lo, hi);
  if (!specials || n < 4) return;
  v[(n * 3) / 7] = NAN;
  v[(n * 5) / 11] = INFINITY;
  v[(n * 9) / 13] = -INFINITY;
  v[n / 3] = -0.0f;
}

/* ---- device buffers with guard bytes ------------------------------------------------ */

typedef struct dbuf {
  unsigned char *base;
  size_t total, off, bytes;
} dbuf;

static void *dbuf_new(dbuf *b, const void *host, size_t bytes, size_t misalign) {
  b->bytes = bytes;
  b->off = GUARD + misalign;
  b->total = bytes + 2 * GUARD;
  CK(cudaMalloc((void **)&b->base, b->total));
  CK(cudaMemset(b->base, 0xA5, b->total));
  if (host && bytes) CK(cudaMemcpy(b->base + b->off, host, bytes, cudaMemcpyHostToDevice));
  return b->base + b->off;
}

static void dbuf_put(dbuf *b, const void *host) {
  if (b->bytes) CK(cudaMemcpy(b->base + b->off, host, b->bytes, cudaMemcpyHostToDevice));
}

/* Copies the data out; false (and a failure) when a guard byte changed. */
static bool dbuf_get(dbuf *b, void *host, const char *what) {
  unsigned char *all = malloc(b->total);
  if (!all) exit(1);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(all, b->base, b->total, cudaMemcpyDeviceToHost));
  bool ok = true;
  for (size_t i = 0; i < b->total; i++)
    if ((i < b->off || i >= b->off + b->bytes) && all[i] != 0xA5) {
      fail("byte %lld outside the output changed (data at %lld)", what, (long long)i,
           (long long)b->off);
      ok = false;
      break;
    }
  if (host) memcpy(host, all + b->off, b->bytes);
  free(all);
  return ok;
}

static void dbuf_free(dbuf *b) {
  if (b->base) cudaFree(b->base);
  b->base = NULL;
}

/* ---- the convolution epilogue ------------------------------------------------------- */

static void test_epilogue(int dt, size_t rows, size_t c, size_t mis) {
  const size_t n = rows * c, es = esz(dt);
  float *fy = malloc(n * 4), *fz = malloc(n * 4), *fb = malloc(c * 4);
  void *hy = malloc(n * es), *hz = malloc(n * es), *hb = malloc(c * es);
  void *hyt = malloc(n * es), *hzt = malloc(n * es), *out = malloc(n * es),
       *outt = malloc(n * es), *gen = malloc(n * es);
  fill(fy, n, -6, 6, true);
  fill(fz, n, -2, 2, false);
  fill(fb, c, -1, 1, false);
  pack(dt, fy, hy, n);
  pack(dt, fz, hz, n);
  pack(dt, fb, hb, c);
  transpose(hy, hyt, rows, c, es);
  transpose(hz, hzt, rows, c, es);
  dbuf by, bz, bb, byt, bzt;
  void *dy = dbuf_new(&by, hy, n * es, mis * es), *dz = dbuf_new(&bz, hz, n * es, mis * es);
  void *db = dbuf_new(&bb, hb, c * es, 0);
  void *dyt = dbuf_new(&byt, hyt, n * es, 0), *dzt = dbuf_new(&bzt, hzt, n * es, 0);
  /* act, alpha, beta, bias, z */
  static const struct { int act; float a, b; int bias, z; } v[] = {
      {0, 0, 0, 1, 1},   {1, 0, 0, 1, 1},     {2, 0, 6, 1, 1}, {3, 0.1f, 0, 1, 1},
      {4, 0, 0, 1, 1},   {5, 0, 0, 1, 1},     {6, 0.2f, 0.5f, 1, 1}, {7, 1, 0, 1, 1},
      {8, 0, 0, 1, 1},   {9, 0, 0, 1, 1},     {7, 1.5f, 0, 0, 0}, {8, 0, 0, 1, 0},
      {1, 0, 0, 0, 1},   {0, 0, 0, 1, 0}};
  for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
    char what[160];
    snprintf(what, sizeof what, "epilogue dt=%d rows=%zu C=%zu mis=%zu act=%d bias=%d z=%d", dt,
             rows, c, mis, v[k].act, v[k].bias, v[k].z);
    cases++;
    dbuf_put(&by, hy);
    dbuf_put(&byt, hyt);
    CK(k_conv_epilogue(dt, dy, v[k].bias ? db : NULL, v[k].z ? dz : NULL, (int64_t)n,
                       (int64_t)c, 1, v[k].act, v[k].a, v[k].b, 0));
    CK(k_conv_epilogue(dt, dyt, v[k].bias ? db : NULL, v[k].z ? dzt : NULL, (int64_t)n,
                       (int64_t)c, (int64_t)rows, v[k].act, v[k].a, v[k].b, 0));
    if (!dbuf_get(&by, out, what) || !dbuf_get(&byt, outt, what)) continue;
    transpose(outt, gen, c, rows, es);
    long long d = first_diff(dt, out, gen, n);
    if (d >= 0) fail("element %lld differs from the general path (of %lld)", what, d, (long long)n);
  }
  dbuf_free(&by);
  dbuf_free(&bz);
  dbuf_free(&bb);
  dbuf_free(&byt);
  dbuf_free(&bzt);
  free(fy), free(fz), free(fb), free(hy), free(hz), free(hb);
  free(hyt), free(hzt), free(out), free(outt), free(gen);
}

/* ---- broadcast binary ops ----------------------------------------------------------- */

static const int bin_ops[] = {K_BIN_ADD, K_BIN_SUB, K_BIN_MUL, K_BIN_DIV, K_BIN_MOD,
                              K_BIN_FMOD, K_BIN_POW, K_BIN_MAX, K_BIN_MIN, K_BIN_PRELU};

static void test_binary(int dt, int64_t B, int64_t H, int64_t W, int64_t C, bool per_batch,
                        bool small_first, size_t mis) {
  const size_t n = (size_t)(B * H * W * C), es = esz(dt);
  const int64_t Bs = per_batch ? B : 1;
  const size_t ns = (size_t)(Bs * C);
  const int64_t od[4] = {B, H, W, C}, sd[4] = {Bs, 1, 1, C};
  const int ranks[2] = {4, 4};
  const int64_t *dims[2] = {small_first ? sd : od, small_first ? od : sd};
  k_ew_geom g, gm;
  char what[200];
  snprintf(what, sizeof what, "binary dt=%d [%lld,%lld,%lld,%lld] small=[%lld,1,1,%lld]%s mis=%zu",
           dt, (long long)B, (long long)H, (long long)W, (long long)C, (long long)Bs,
           (long long)C, small_first ? " first" : "", mis);
  if (k_ew_geom_init(&g, 4, od, 2, ranks, dims) != 0) {
    fail("geometry refused (%lld, %lld)", what, 0, 0);
    return;
  }
  /* the same broadcast, unmerged: the general kernel */
  memset(&gm, 0, sizeof gm);
  gm.n_in = 2;
  gm.rank = 4;
  gm.n = (int64_t)n;
  for (int d = 0; d < 4; d++) gm.dims[d] = od[d];
  const int big = small_first ? 1 : 0, sm = 1 - big;
  const int64_t bst[4] = {H * W * C, W * C, C, 1}, sst[4] = {per_batch ? C : 0, 0, 0, 1};
  for (int d = 0; d < 4; d++) {
    gm.strides[big][d] = bst[d];
    gm.strides[sm][d] = sst[d];
  }
  float *fbig = malloc(n * 4), *fsm = malloc(ns * 4);
  void *hbig = malloc(n * es), *hsm = malloc(ns * es), *out = malloc(n * es),
       *gen = malloc(n * es);
  fill(fbig, n, -3, 3, true);
  fill(fsm, ns, -3, 3, ns >= 8);
  for (size_t i = 0; i < ns; i += 5) /* whole exponents for Pow */
    if (isfinite(fsm[i])) fsm[i] = (float)(int)fsm[i];
  pack(dt, fbig, hbig, n);
  pack(dt, fsm, hsm, ns);
  dbuf bbig, bsm, by, bg;
  void *dbig = dbuf_new(&bbig, hbig, n * es, mis * es);
  void *dsm = dbuf_new(&bsm, hsm, ns * es, mis * es);
  void *dy = dbuf_new(&by, NULL, n * es, mis * es), *dg = dbuf_new(&bg, NULL, n * es, 0);
  for (size_t k = 0; k < sizeof bin_ops / sizeof bin_ops[0]; k++) {
    const int op = bin_ops[k];
    char w2[240];
    snprintf(w2, sizeof w2, "%s op=%d", what, op);
    cases++;
    if (!k_ew_binary_rows_applies(op, dt, &g) || k_ew_binary_rows_applies(op, dt, &gm)) {
      fail("the row path applies to the merged geometry: %lld, to the unmerged one: %lld", w2,
           k_ew_binary_rows_applies(op, dt, &g), k_ew_binary_rows_applies(op, dt, &gm));
      continue;
    }
    const void *a = small_first ? dsm : dbig, *b = small_first ? dbig : dsm;
    CK(k_ew_binary(op, dt, a, b, dy, &g, 0));
    CK(k_ew_binary(op, dt, a, b, dg, &gm, 0));
    if (!dbuf_get(&by, out, w2) || !dbuf_get(&bg, gen, w2)) continue;
    long long d = first_diff(dt, out, gen, n);
    if (d >= 0) fail("element %lld differs from the general path (of %lld)", w2, d, (long long)n);
    if (!small_first) { /* y = a in place (variadic accumulation) */
      CK(k_ew_binary(op, dt, dbig, dsm, dbig, &g, 0));
      if (dbuf_get(&bbig, out, w2) && (d = first_diff(dt, out, gen, n)) >= 0)
        fail("in place: element %lld differs from the general path (of %lld)", w2, d,
             (long long)n);
      dbuf_put(&bbig, hbig);
    }
  }
  dbuf_free(&bbig);
  dbuf_free(&bsm);
  dbuf_free(&by);
  dbuf_free(&bg);
  free(fbig), free(fsm), free(hbig), free(hsm), free(out), free(gen);
}

/* ---- BatchNormalization ------------------------------------------------------------- */

static void test_bn(int dt, size_t rows, size_t c, size_t mis) {
  const size_t n = rows * c, es = esz(dt);
  float *fx = malloc(n * 4), *sc = malloc(c * 4), *sh = malloc(c * 4);
  void *hx = malloc(n * es), *hxt = malloc(n * es), *out = malloc(n * es),
       *outt = malloc(n * es), *gen = malloc(n * es), *sep = malloc(n * es);
  fill(fx, n, -3, 3, true);
  fill(sc, c, -2, 2, false);
  fill(sh, c, -1, 1, false);
  pack(dt, fx, hx, n);
  transpose(hx, hxt, rows, c, es);
  dbuf bx, by, bxt, byt, bs, bsh, b2;
  void *dx = dbuf_new(&bx, hx, n * es, mis * es), *dy = dbuf_new(&by, NULL, n * es, mis * es);
  void *dxt = dbuf_new(&bxt, hxt, n * es, 0), *dyt = dbuf_new(&byt, NULL, n * es, 0);
  void *ds = dbuf_new(&bs, sc, c * 4, 0), *dsh = dbuf_new(&bsh, sh, c * 4, 0);
  void *d2 = dbuf_new(&b2, NULL, n * es, mis * es);
  for (int act = 0; act < 2; act++) {
    char what[160];
    snprintf(what, sizeof what, "bn dt=%d rows=%zu C=%zu mis=%zu relu=%d", dt, rows, c, mis, act);
    cases++;
    CK(k_bn_apply_act(dt, (int64_t)rows, (int64_t)c, 1, dx, dy, ds, dsh, act, 0));
    CK(k_bn_apply_act(dt, 1, (int64_t)c, (int64_t)rows, dxt, dyt, ds, dsh, act, 0));
    if (!dbuf_get(&by, out, what) || !dbuf_get(&byt, outt, what)) continue;
    transpose(outt, gen, c, rows, es);
    long long d = first_diff(dt, out, gen, n);
    if (d >= 0) fail("element %lld differs from the general path (of %lld)", what, d, (long long)n);
    if (act) { /* BatchNormalization, then the Relu op's kernel */
      k_ew_params p = {0};
      CK(k_bn_apply_act(dt, (int64_t)rows, (int64_t)c, 1, dx, d2, ds, dsh, 0, 0));
      CK(k_ew_unary(K_UN_RELU, dt, d2, d2, (int64_t)n, &p, 0));
      if (dbuf_get(&b2, sep, what) && (d = first_diff(dt, out, sep, n)) >= 0)
        fail("element %lld differs from BN then Relu (of %lld)", what, d, (long long)n);
    }
  }
  dbuf_free(&bx), dbuf_free(&by), dbuf_free(&bxt), dbuf_free(&byt);
  dbuf_free(&bs), dbuf_free(&bsh), dbuf_free(&b2);
  free(fx), free(sc), free(sh), free(hx), free(hxt), free(out), free(outt), free(gen), free(sep);
}

/* ---- reductions over the middle axis -------------------------------------------------- */

static const char *kind_name(int k) {
  static const char *const n[] = {"sum", "mean", "max", "min", "prod", "l1", "l2", "sumsq",
                                  "logsum"};
  return k >= 0 && k < 9 ? n[k] : "?";
}

static void test_reduce(int dt, int kind, int64_t outer, int64_t r, int64_t inner,
                        int64_t force_chunks, size_t mis, int sm_count) {
  const size_t n = (size_t)(outer * r * inner), no = (size_t)(outer * inner), es = esz(dt);
  float *fx = malloc(n * 4);
  void *hx = malloc(n * es), *y1 = malloc(no * es), *y2 = malloc(no * es), *yr = malloc(no * es);
  double *mag = calloc(no, sizeof(double));
  if (kind == K_RED_PROD) fill(fx, n, 0.97f, 1.03f, false);
  else if (kind == K_RED_LOGSUM) fill(fx, n, 0.f, 1.f, false);
  else fill(fx, n, -2, 2, false);
  if ((kind == K_RED_MAX || kind == K_RED_MIN) && inner > 1) /* NaN propagates in a column */
    fx[(size_t)((0 * r + r / 2) * inner + 1)] = NAN;
  pack(dt, fx, hx, n);
  for (int64_t o = 0; o < outer; o++) /* the summed magnitude per output */
    for (int64_t i = 0; i < r; i++)
      for (int64_t k = 0; k < inner; k++) {
        double v = unpack1(dt, hx, (size_t)((o * r + i) * inner + k));
        mag[o * inner + k] += kind == K_RED_SUMSQ || kind == K_RED_L2 ? v * v : fabs(v);
      }
  int64_t ws = 0, chunks = k_reduce_mid_chunks(dt, outer, r, inner, sm_count, &ws);
  char what[200];
  snprintf(what, sizeof what, "reduce %s dt=%d [%lld,%lld,%lld] chunks=%lld%s mis=%zu",
           kind_name(kind), dt, (long long)outer, (long long)r, (long long)inner,
           (long long)(force_chunks ? force_chunks : chunks), force_chunks ? " (forced)" : "",
           mis);
  cases++;
  if (chunks < 1 || (chunks > 1) != (ws > 0)) {
    fail("planned %lld chunks, %lld workspace bytes", what, chunks, ws);
    goto out;
  }
  if (force_chunks) {
    chunks = force_chunks;
    ws = chunks > 1 ? chunks * outer * inner * 4 : 0;
  }
  dbuf bx, by, br, bw;
  void *dx = dbuf_new(&bx, hx, n * es, mis * es), *dy = dbuf_new(&by, NULL, no * es, 0);
  void *dr = dbuf_new(&br, NULL, no * es, 0);
  void *dw = dbuf_new(&bw, NULL, (size_t)ws, 0);
  CK(cudaMemset(dw, 0xFF, (size_t)ws)); /* NaN floats: every partial must be written */
  CK(k_reduce_mid(dt, kind, outer, r, inner, chunks, dx, dy, ws ? dw : NULL, 0));
  bool ok = dbuf_get(&by, y1, what) && dbuf_get(&bw, NULL, what);
  CK(cudaMemset(dw, 0xFF, (size_t)ws));
  CK(cudaMemset(dy, 0, no * es));
  CK(k_reduce_mid(dt, kind, outer, r, inner, chunks, dx, dy, ws ? dw : NULL, 0));
  ok = ok && dbuf_get(&by, y2, what);
  CK(k_reduce_3d(dt, kind, outer, r, inner, dx, dr, 0));
  ok = ok && dbuf_get(&br, yr, what);
  if (ok) {
    long long d = first_diff(dt, y1, y2, no);
    if (d >= 0) fail("output %lld differs between two runs (of %lld)", what, d, (long long)no);
    /* fp32 accumulation in another order: errors grow like sqrt(r) ulps of what is summed;
     * fp16 outputs add their own rounding (one ulp either side) */
    const double acc = 6e-8 * 4 * sqrt((double)r);
    const double rel = (dt == K_F32 ? 2e-6 : 2e-3) + acc + (kind == K_RED_PROD ? 1e-7 * r : 0);
    for (size_t o = 0; o < no; o++) {
      double a = unpack1(dt, y1, o), b = unpack1(dt, yr, o);
      if (isnan(a) || isnan(b)) {
        if (isnan(a) != isnan(b)) {
          fail("output %lld: NaN in one result only (of %lld)", what, (long long)o,
               (long long)no);
          break;
        }
        continue;
      }
      if (kind == K_RED_MAX || kind == K_RED_MIN) {
        if (first_diff(dt, (const char *)y1 + o * es, (const char *)yr + o * es, 1) >= 0) {
          fail("output %lld differs from the general path (of %lld)", what, (long long)o,
               (long long)no);
          break;
        }
        continue;
      }
      if (isinf(a) || isinf(b)) {
        if (a != b) {
          fail("output %lld: infinity in one result only (of %lld)", what, (long long)o,
               (long long)no);
          break;
        }
        continue;
      }
      double scale = kind == K_RED_MEAN ? mag[o] / (double)r
                     : kind == K_RED_SUM || kind == K_RED_L1 || kind == K_RED_SUMSQ ? mag[o]
                                                                                     : 0;
      double tol = rel * fabs(b) + acc * scale + 1e-6;
      if (fabs(a - b) > tol) {
        fprintf(stderr, "  got %.9g, general path %.9g, tolerance %.3g\n", a, b, tol);
        fail("output %lld differs from the general path beyond the tolerance (of %lld)", what,
             (long long)o, (long long)no);
        break;
      }
    }
  }
  dbuf_free(&bx), dbuf_free(&by), dbuf_free(&br), dbuf_free(&bw);
out:
  free(fx), free(hx), free(y1), free(y2), free(yr), free(mag);
}

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
    printf("SKIP: no CUDA device is visible\n");
    return 77;
  }
  int sm = 0;
  CK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, 0));
  static const size_t cs[] = {1, 2, 3, 8, 20, 24, 32, 96, 264, 520};
  static const size_t rows[] = {2, 37, 1001};
  const int float_dts[] = {K_F16, K_F32};
  for (int t = 0; t < 2; t++)
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
      for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++)
        for (size_t mis = 0; mis < 3; mis++) test_epilogue(float_dts[t], rows[ri], cs[ci], mis);
  printf("epilogue: %d cases, %d failures so far\n", cases, failures);

  static const int64_t shapes[][4] = {{2, 3, 5, 32}, {3, 7, 9, 24}, {2, 5, 3, 20}, {1, 4, 4, 8},
                                      {2, 3, 3, 3},  {4, 2, 2, 300}, {2, 1, 7, 520},
                                      {1, 11, 13, 2}};
  for (int t = 0; t < 2; t++)
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
      for (int pb = 0; pb < 2; pb++)
        for (int first = 0; first < 2; first++)
          for (size_t mis = 0; mis < 3; mis++)
            test_binary(float_dts[t], shapes[si][0], shapes[si][1], shapes[si][2], shapes[si][3],
                        pb, first, mis);
  printf("binary: %d cases, %d failures so far\n", cases, failures);

  const int bn_dts[] = {K_F16, K_F32, K_BF16};
  static const size_t bn_rows[] = {2, 5, 257};
  for (int t = 0; t < 3; t++)
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
      for (size_t ri = 0; ri < 3; ri++)
        for (size_t mis = 0; mis < 3; mis++) test_bn(bn_dts[t], bn_rows[ri], cs[ci], mis);
  printf("batchnorm: %d cases, %d failures so far\n", cases, failures);

  static const int64_t rshapes[][3] = {{3, 2, 2},    {2, 3136, 32}, {3, 63, 24}, {2, 77, 20},
                                       {5, 2, 3},    {1, 5000, 16}, {2, 9, 300}, {4, 49, 1152},
                                       {16, 196, 40}, {1, 3, 520}};
  static const int kinds[] = {K_RED_SUM, K_RED_MEAN, K_RED_MAX,   K_RED_MIN,   K_RED_PROD,
                              K_RED_L1,  K_RED_L2,   K_RED_SUMSQ, K_RED_LOGSUM};
  for (int t = 0; t < 2; t++)
    for (size_t si = 0; si < sizeof rshapes / sizeof rshapes[0]; si++) {
      const int64_t *s = rshapes[si];
      for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        test_reduce(float_dts[t], kinds[k], s[0], s[1], s[2], 0, 0, sm);
      /* forced chunk counts (uneven splits, more chunks than the plan), misaligned x */
      const int64_t forced[] = {1, 3, 7};
      for (int f = 0; f < 3; f++)
        if (forced[f] <= s[1]) {
          test_reduce(float_dts[t], K_RED_MEAN, s[0], s[1], s[2], forced[f], (size_t)f, sm);
          test_reduce(float_dts[t], K_RED_MAX, s[0], s[1], s[2], forced[f], (size_t)f, sm);
        }
      int64_t ws;
      printf("  reduce dt=%d [%lld,%lld,%lld]: %lld chunks planned for %d SMs\n", float_dts[t],
             (long long)s[0], (long long)s[1], (long long)s[2],
             (long long)k_reduce_mid_chunks(float_dts[t], s[0], s[1], s[2], sm, &ws), sm);
    }
  printf("reduce: %d cases, %d failures in all\n", cases, failures);
  if (failures) {
    printf("FAIL: %d of %d cases\n", failures, cases);
    return 1;
  }
  printf("ok: %d cases\n", cases);
  return 0;
}
