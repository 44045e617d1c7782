// test_depthwise_tiled_emu.cpp: the tiled depthwise kernel's logic checked on the CPU.
// The real code of kernels/conv_depthwise_tiled*.cu (planning, launch, kernel template)
// is compiled by the host C++ compiler, each CUDA thread run as a std::thread with a
// barrier for __syncthreads, cudaLaunchKernel and the occupancy query replaced; the
// outputs (poisoned with NaN before) are compared with a direct float64 depthwise
// convolution of the same fp16 data, activation and input clamp, over the shapes the
// models have and random ones: every variant (4, 2, 1 channels per thread, windows 1..7
// by 1..7, strides 1 and 2, pads 0..3), bias, residual (also in place: z = y), NaN
// inputs, several chunks and blocks. What it cannot see: anything of the GPU itself
// (memory model, caches, alignment traps, register limits); the gpu tests do that.
// No GPU needed; CUDA builds only (it includes the CUDA headers for fp16).
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

struct emu_dim { unsigned x = 0, y = 0, z = 0; };
thread_local emu_dim threadIdx, blockIdx;
emu_dim blockDim, gridDim;

// __syncthreads for the std::threads of one emulated block
struct emu_barrier {
  std::mutex m;
  std::condition_variable cv;
  unsigned count, waiting = 0, generation = 0;
  explicit emu_barrier(unsigned n) : count(n) {}
  void wait() {
    std::unique_lock<std::mutex> l(m);
    unsigned gen = generation;
    if (++waiting == count) {
      waiting = 0;
      generation++;
      cv.notify_all();
    } else {
      cv.wait(l, [&] { return gen != generation; });
    }
  }
};
static emu_barrier *g_bar;
inline void __syncthreads() { g_bar->wait(); }
template <class T> T __ldg(const T *p) { return *p; }
#define __expf expf
#define __fdividef(a, b) ((a) / (b))
#define __launch_bounds__(...)
alignas(16) float4 dwt_smem[16384];
#include "conv_depthwise_tiled_v4.cu"
#include "conv_depthwise_tiled_v21.cu"

// The occupancy query answers g_bps blocks per SM (varied by the cases).
static int g_bps = 2;
static long g_launches = 0;
template <class T> cudaError_t emu_occ(int *b, T, int, size_t) {
  *b = g_bps;
  return cudaSuccess;
}

// cudaLaunchKernel: the grid's blocks one after the other, each block's threads at once;
// shared memory poisoned with NaN first. Launch shapes the GPU refuses are refused.
cudaError_t emu_launch(const void *f, dim3 grid, dim3 block, void **args, size_t smem,
                       cudaStream_t) {
  dwt_fn fn = (dwt_fn)f;
  const dwt_args a = *(const dwt_args *)args[0];
  if (smem > 48 * 1024 || smem > sizeof dwt_smem || block.x < 1 || block.x > 1024 ||
      block.y != 1 || block.z != 1 || grid.x < 1 || grid.y < 1 || grid.y > 65535)
    return cudaErrorInvalidConfiguration;
  gridDim = {grid.x, grid.y, 1};
  blockDim = {block.x, 1, 1};
  g_launches++;
  for (unsigned by = 0; by < grid.y; by++)
    for (unsigned bx = 0; bx < grid.x; bx++) {
      float *sm = (float *)dwt_smem;
      for (size_t i = 0; i < sizeof dwt_smem / 4; i++) sm[i] = NAN; // poison
      emu_barrier bar(block.x);
      g_bar = &bar;
      std::vector<std::thread> th;
      for (unsigned t = 0; t < block.x; t++)
        th.emplace_back([=] { threadIdx = {t, 0, 0}; blockIdx = {bx, by, 0}; fn(a); });
      for (auto &t : th) t.join();
    }
  return cudaSuccess;
}
#define cudaLaunchKernel emu_launch
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor emu_occ
#include "conv_depthwise_tiled.cu"

// The activations as the CPU reference (ops/conv_fused.h) and the unfused ops: NaN passes
// through Relu, Clip and the hard ones (k_nan.h), as conv_act.cuh now does.
static double act_ref(int act, double a, double b, double v) {
  switch (act) {
    case 1: return K_NAN_RELU(v);
    case 2: return K_NAN_CLAMP(v, a, b);
    case 3: return v < 0 ? a * v : v;
    case 4: return 1 / (1 + exp(-v));
    case 5: return tanh(v);
    case 6: { double t = a * v + b; return K_NAN_CLAMP(t, 0.0, 1.0); }
    case 7: return v / (1 + exp(-a * v));
    case 8: { double t = v / 6 + 0.5; return v * K_NAN_CLAMP(t, 0.0, 1.0); }
    case 9: return 0.5 * v * (1 + erf(v * 0.70710678118654752440));
    default: return v;
  }
}

static std::mt19937 rng(7);
static int ri(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
static float rf(float s) { return std::normal_distribution<float>(0, s)(rng); }

// One case; returns the number of mismatching outputs (printing the first few).
static int run_case(int n, int c, int h, int w, int r, int s, int ph, int pw, int sh, int sw,
                    int act, bool bias, int zmode /* 0 none, 1 separate, 2 in place */,
                    bool clamp, bool nan, int sm_count) {
  k_dw_geom g;
  g.n = n; g.c = c; g.h = h; g.w = w; g.r = r; g.s = s;
  g.pad_h = ph; g.pad_w = pw; g.stride_h = sh; g.stride_w = sw;
  g.out_h = (h + 2 * ph - r) / sh + 1;
  g.out_w = (w + 2 * pw - s) / sw + 1;
  if (!k_dwt_supported(&g)) {
    printf("  not supported\n");
    return 1;
  }
  int v = c % 4 == 0 ? 4 : c % 2 == 0 ? 2 : 1;
  k_dwt_plan plan;
  if (k_dwt_plan_make(&g, v, sm_count, &plan) != cudaSuccess) {
    printf("  no plan\n");
    return 1;
  }
  size_t nx = (size_t)n * h * w * c, ny = (size_t)n * g.out_h * g.out_w * c;
  std::vector<__half> x(nx), wt((size_t)c * r * s), b(c), z(ny), y(ny);
  for (auto &e : x) e = __float2half(rf(1));
  for (auto &e : wt) e = __float2half(rf(0.4f));
  for (auto &e : b) e = __float2half(rf(0.3f));
  for (auto &e : z) e = __float2half(rf(1));
  float xm = clamp ? 0.75f : INFINITY;
  if (nan) x[ri(0, (int)nx - 1)] = __float2half(NAN);
  float al = act == 2 ? -0.5f : act == 3 ? 0.1f : act == 6 ? 0.2f : 1.0f;
  float be = act == 2 ? 0.8f : act == 6 ? 0.5f : 0.0f;
  for (auto &e : y) e = __float2half(NAN); // poison: every output must be written
  if (zmode == 2) y = z;
  const void *zp = zmode == 1 ? (const void *)z.data() : zmode == 2 ? (const void *)y.data()
                                                                    : nullptr;
  cudaError_t e = k_dwt(&g, &plan, x.data(), wt.data(), bias ? b.data() : nullptr, zp,
                        y.data(), act, al, be, xm, 0);
  if (e != cudaSuccess) {
    printf("  launch failed: %d\n", (int)e);
    return 1;
  }
  int bad = 0;
  for (int in = 0; in < n; in++)
    for (int oh = 0; oh < g.out_h; oh++)
      for (int ow = 0; ow < g.out_w; ow++)
        for (int ch = 0; ch < c; ch++) {
          double acc = 0;
          for (int kr = 0; kr < r; kr++)
            for (int ks = 0; ks < s; ks++) {
              int ih = oh * sh - ph + kr, iw = ow * sw - pw + ks;
              if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
              double xv = __half2float(x[(((size_t)in * h + ih) * w + iw) * c + ch]);
              if (xv > xm) xv = xm; // NaN kept
              acc += xv * (double)__half2float(wt[((size_t)ch * r + kr) * s + ks]);
            }
          size_t yi = (((size_t)in * g.out_h + oh) * g.out_w + ow) * c + ch;
          if (bias) acc += __half2float(b[ch]);
          if (zmode) acc += __half2float(z[yi]);
          double ref = act_ref(act, al, be, acc);
          double got = __half2float(y[yi]);
          bool ok = std::isnan(ref) ? std::isnan(got) : fabs(got - ref) <= 2e-3 + 2e-3 * fabs(ref);
          if (!ok && bad++ < 5)
            printf("  n %d oh %d ow %d c %d: got %g, expected %g\n", in, oh, ow, ch, got, ref);
        }
  return bad;
}

int main(int argc, char **argv) {
  int cases = argc > 1 ? atoi(argv[1]) : 150;
  int passed = 0, failed = 0;
  // the models' shapes (ConvNeXt 7x7 C = 96 and 768, EfficientNet 5x5, ShuffleNetV2 3x3
  // C = 58, two chunks, odd C), with widths that have interior and edge strips
  struct { int n, c, h, w, r, s, p, st; } named[] = {
      {2, 96, 9, 35, 7, 7, 3, 1},  {1, 20, 12, 21, 7, 7, 3, 1}, {2, 40, 8, 34, 5, 5, 2, 1},
      {2, 40, 8, 34, 5, 5, 2, 2},  {2, 58, 9, 33, 3, 3, 1, 2},  {1, 58, 9, 33, 3, 3, 1, 1},
      {1, 136, 5, 20, 3, 3, 1, 1}, {1, 13, 6, 19, 3, 3, 1, 1},  {1, 768, 7, 7, 7, 7, 3, 1}};
  for (auto &q : named)
    for (int act = 0; act < 10; act += 3) {
      int bad = run_case(q.n, q.c, q.h, q.w, q.r, q.s, q.p, q.p, q.st, q.st, act, true,
                         act % 2 ? 2 : act ? 1 : 0, act == 3, false, 3);
      if (bad)
        printf("FAIL: n %d c %d %dx%d window %dx%d pad %d stride %d act %d: %d outputs\n", q.n,
               q.c, q.h, q.w, q.r, q.s, q.p, q.st, act, bad);
      (bad ? failed : passed)++;
    }
  const int cs[] = {4, 8, 12, 20, 24, 40, 96, 132, 2, 6, 18, 58, 1, 3, 13, 35};
  for (int t = 0; t < cases; t++) {
    int c = cs[ri(0, 15)], r = ri(1, 7), s = ri(1, 7), sh = ri(1, 2), sw = ri(1, 2);
    int ph = ri(0, 3), pw = ri(0, 3), h, w;
    do { // a window that fits the padded input
      h = ri(1, 14);
      w = ri(1, 40);
    } while (h + 2 * ph < r || w + 2 * pw < s);
    int n = ri(1, 3), act = ri(0, 9), zmode = ri(0, 2);
    bool bias = ri(0, 1), clamp = ri(0, 3) == 0, nan = ri(0, 5) == 0;
    g_bps = ri(1, 3);
    int sm = ri(1, 6);
    int bad = run_case(n, c, h, w, r, s, ph, pw, sh, sw, act, bias, zmode, clamp, nan, sm);
    if (bad)
      printf("FAIL: case %d: n %d c %d %dx%d window %dx%d pads %d,%d strides %d,%d act %d "
             "bias %d z %d clamp %d nan %d blocks/SM %d SMs %d: %d outputs\n",
             t, n, c, h, w, r, s, ph, pw, sh, sw, act, bias, zmode, clamp, nan, g_bps, sm, bad);
    (bad ? failed : passed)++;
  }
  printf("%d launches emulated\n%d passed, %d failed\n", (int)g_launches, passed, failed);
  return failed != 0;
}
