// test_ew_chain_emu.cpp: the FusedChain kernel's logic (kernels/ew_chain.cu) checked on the
// CPU. Its own code is compiled by the host C++ compiler and every CUDA thread of a launch
// run in turn (the kernel has no shared memory and no barrier); the outputs, poisoned with
// NaN first, are compared with the CPU reference's steps (ewc_apply, ops/elementwise_chain.c,
// in float) over random chains and geometries: fp16 and fp32, the vector and the scalar
// path, ranks 1 to 4, inputs walked whole, broadcast per channel, per row or as a scalar
// (the hoisted ones), concatenated parts (even and odd widths), many rows a thread, the
// BatchNorm (+ ReLU) chains of the loop-free path. What it
// cannot see: anything of the GPU itself; the gpu tests do that. CUDA builds only.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

struct emu_dim {
  unsigned x = 0, y = 0, z = 0;
};
static emu_dim threadIdx, blockIdx, blockDim, gridDim;
#define __launch_bounds__(...)

cudaError_t emu_launch(const void *f, dim3 grid, dim3 block, void **args, size_t smem,
                       cudaStream_t s);
#define cudaLaunchKernel emu_launch
#define k_ew_chain emu_k_ew_chain // the library's own (GPU) k_ew_chain is linked too
#include "ew_chain.cu"
#undef cudaLaunchKernel
#undef k_ew_chain

// the CPU reference's step (ops/elementwise_chain.h), from the library
extern "C" float ewc_apply(const ewc_step *s, float a, float b);

static long g_launches = 0, g_threads_rows = 0, g_affine = 0;

// The grid's blocks and threads one after the other. Launch shapes the GPU refuses are
// refused.
cudaError_t emu_launch(const void *f, dim3 grid, dim3 block, void **args, size_t smem,
                       cudaStream_t) {
  typedef void (*fn_t)(const chain_args, int64_t, int64_t);
  const fn_t fn = (fn_t)f;
  const chain_args a = *(const chain_args *)args[0];
  const int64_t cvecs = *(const int64_t *)args[1], rows = *(const int64_t *)args[2];
  if (smem || block.x * block.y * block.z > 1024 || block.x < 1 || grid.x < 1 || grid.y < 1 ||
      grid.y > 65535)
    return cudaErrorInvalidConfiguration;
  g_launches++;
  g_affine += a.affine;
  gridDim = {grid.x, grid.y, 1};
  blockDim = {block.x, block.y, 1};
  if ((int64_t)grid.y * block.y < rows) g_threads_rows++; // a thread walks several rows
  for (unsigned by = 0; by < grid.y; by++)
    for (unsigned bx = 0; bx < grid.x; bx++)
      for (unsigned ty = 0; ty < block.y; ty++)
        for (unsigned tx = 0; tx < block.x; tx++) {
          blockIdx = {bx, by, 0};
          threadIdx = {tx, ty, 0};
          fn(a, cvecs, rows);
        }
  return cudaSuccess;
}

static std::mt19937 rng(11);
static int ri(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
static float rf(float s) { return std::normal_distribution<float>(0, s)(rng); }

// One input's values as floats (the kernel's view of them) and in their storage type.
struct buf {
  std::vector<float> f;
  std::vector<__half> h;
  const void *ptr(bool half) const {
    return half ? (const void *)h.data() : (const void *)f.data();
  }
};

static buf make_buf(size_t n, bool half) {
  buf b;
  b.f.resize(n);
  if (half) b.h.resize(n);
  for (size_t i = 0; i < n; i++) {
    float v = rf(1);
    if (half) {
      b.h[i] = __float2half(v);
      v = __half2float(b.h[i]);
    }
    b.f[i] = v;
  }
  return b;
}

// One random chain over a random geometry; returns the mismatching outputs.
static int run_case(int t) {
  const bool half = ri(0, 1);
  const int rank = ri(1, 4);
  k_ewc_geom g;
  memset(&g, 0, sizeof g);
  g.rank = rank;
  int64_t n = 1;
  for (int d = 0; d < rank; d++) {
    g.dims[d] = d == rank - 1 ? 8 * ri(1, 6) - (ri(0, 3) == 0 ? ri(1, 7) : 0) : ri(1, 9);
    n *= g.dims[d];
  }
  if (t < 2) { // many rows a thread: more than EWC_MIN_BLOCKS blocks' worth (t 1: parts)
    g.rank = 2;
    g.dims[0] = t ? 300000 : 600000;
    g.dims[1] = t ? 24 : 8;
    n = g.dims[0] * g.dims[1];
  }
  const int last = g.rank - 1;
  const int64_t cols = g.dims[last], rows = n / cols;
  // input 0: whole, or (one case in three, rank >= 2) the concatenation of parts
  // one case in four is a BatchNorm (+ ReLU): per-channel scale and shift, the kernel's
  // loop-free path
  const bool affine = t % 4 == 2;
  g.n_in = affine ? ri(3, 5) : ri(2, 5);
  std::vector<buf> in(g.n_in);
  std::vector<const void *> ptrs(g.n_in);
  const bool concat = t == 1 || (g.rank >= 2 && ri(0, 2) == 0);
  std::vector<buf> parts;
  // kinds of the other inputs: 0 whole, 1 per channel (hoisted), 2 per row, 3 scalar
  std::vector<int> kind(g.n_in, 0);
  for (int k = 0; k < g.n_in; k++) {
    int64_t elems = n;
    if (k > 0) {
      kind[k] = affine && k <= 2 ? 1 : ri(0, 3);
      elems = kind[k] == 0 ? n : kind[k] == 1 ? cols : kind[k] == 2 ? rows : 1;
    }
    in[k] = make_buf((size_t)elems, half);
    ptrs[k] = in[k].ptr(half);
    int64_t st = 1;
    for (int d = last; d >= 0; d--) {
      bool walks = kind[k] == 0 || (kind[k] == 1 && d == last) || (kind[k] == 2 && d < last);
      g.strides[k][d] = walks ? st : 0;
      if (walks) st *= g.dims[d];
    }
  }
  if (concat) {
    int64_t c = 0;
    while (c < cols && g.n_parts < 6) {
      int64_t w = g.n_parts == 5 ? cols - c : std::min<int64_t>(cols - c, 8 * ri(0, 2) + ri(0, 1) * ri(1, 7));
      if (w <= 0) w = cols - c < 8 ? cols - c : 8;
      parts.push_back(make_buf((size_t)(rows * w), half));
      c += w;
      g.part_end[g.n_parts++] = c;
    }
    for (int p = 0; p < g.n_parts; p++) g.part[p] = parts[p].ptr(half);
  }
  // the steps
  ewc_step steps[EWC_MAX_STEPS];
  const int n_steps = affine ? (t % 8 == 2 ? 3 : 2) : ri(1, 6);
  static const int unary[] = {EWC_RELU, EWC_SIGMOID, EWC_SWISH, EWC_CLIP, EWC_HARD_SWISH,
                              EWC_TANH, EWC_NEG};
  static const int binary_ops[] = {EWC_ADD, EWC_SUB, EWC_MUL, EWC_MAX, EWC_MIN};
  for (int s = 0; s < n_steps; s++) {
    ewc_step &st = steps[s];
    st.swap = ri(0, 1);
    if (affine) { // x * scale + shift [then ReLU]
      st.op = s == 0 ? EWC_MUL : s == 1 ? EWC_ADD : EWC_RELU;
      st.operand = s < 2 ? s + 1 : EWC_IMMEDIATE;
      st.p0 = st.p1 = 0;
      continue;
    }
    st.p0 = st.p1 = 0;
    if (ri(0, 2)) {
      st.op = binary_ops[ri(0, 4)];
      st.operand = ri(0, 4) == 0 ? EWC_IMMEDIATE : ri(1, g.n_in - 1);
      st.p0 = rf(1);
    } else {
      st.op = unary[ri(0, 6)];
      st.operand = EWC_IMMEDIATE;
      st.p0 = st.op == EWC_CLIP ? -0.5f : 1.f;
      st.p1 = st.op == EWC_CLIP ? 0.7f : 0.f;
    }
  }
  // run
  std::vector<float> yf(n, NAN);
  std::vector<__half> yh(half ? n : 0, __float2half(NAN));
  void *y = half ? (void *)yh.data() : (void *)yf.data();
  cudaError_t e = emu_k_ew_chain(half ? K_F16 : K_F32, ptrs.data(), y, &g, steps, n_steps, 0);
  if (e != cudaSuccess) {
    printf("  case %d: launch failed (%d)\n", t, (int)e);
    return 1;
  }
  // reference: each output element from its inputs through ewc_apply
  int bad = 0;
  std::vector<int64_t> coord(g.rank);
  for (int64_t i = 0; i < n; i++) {
    int64_t r = i;
    for (int d = last; d >= 0; d--) {
      coord[d] = r % g.dims[d];
      r /= g.dims[d];
    }
    const int64_t row = i / cols, col = coord[last];
    auto value = [&](int k) {
      if (k == 0 && concat) {
        int p = 0;
        while (col >= g.part_end[p]) p++;
        const int64_t start = p ? g.part_end[p - 1] : 0, w = g.part_end[p] - start;
        return parts[p].f[(size_t)(row * w + col - start)];
      }
      int64_t off = 0;
      for (int d = 0; d < g.rank; d++) off += coord[d] * g.strides[k][d];
      return in[k].f[(size_t)off];
    };
    float acc = value(0);
    for (int s = 0; s < n_steps; s++) {
      const ewc_step &st = steps[s];
      const float b = st.op < EWC_BINARY_END && st.operand != EWC_IMMEDIATE ? value(st.operand) : st.p0;
      acc = ewc_apply(&st, acc, b);
    }
    const float ref = half ? __half2float(__float2half(acc)) : acc;
    const float got = half ? __half2float(yh[i]) : yf[i];
    const float tol = half ? 2e-3f + 2e-3f * fabsf(ref) : 1e-5f + 1e-5f * fabsf(ref);
    const bool ok = std::isnan(ref) ? std::isnan(got) : fabsf(got - ref) <= tol;
    if (!ok && bad++ < 4)
      printf("  case %d (%s, rank %d, cols %lld, %s, %d steps): element %lld: got %g, expected %g\n",
             t, half ? "fp16" : "fp32", g.rank, (long long)cols, concat ? "concat" : "whole",
             n_steps, (long long)i, got, ref);
  }
  return bad;
}

int main(int argc, char **argv) {
  const int cases = argc > 1 ? atoi(argv[1]) : 400;
  int failed = 0;
  for (int t = 0; t < cases; t++)
    if (run_case(t)) failed++;
  printf("%ld launches emulated, %ld of them with several rows a thread, %ld on the affine "
         "path\n", g_launches, g_threads_rows, g_affine);
  printf("%d passed, %d failed\n", cases - failed, failed);
  return failed || g_threads_rows == 0 || (cases > 2 && g_affine == 0) ? 1 : 0;
}
