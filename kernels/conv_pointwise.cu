// conv_pointwise.cu: Y = act(X * W^T + bias + Z) for a 1x1 convolution of fp16
// channels-last data, one kernel, fp32 accumulation on tensor cores (WMMA).
//
// A block computes a tile of PW_BM pixels x BN output channels:
// - the reduction over input channels runs in chunks of PW_BK: the next chunk's X and
//   W tiles are loaded into registers (16-byte vectors, zero past the edges) while the
//   tensor cores work on the current one from shared memory;
// - 8 warps, 4 along the pixels x 2 along the channels, each own a 32 x BN/2 block of
//   16 x 16 accumulator fragments;
// - the accumulators then go through shared memory (fp32) so that each thread can
//   finish 8 consecutive channels of one pixel: bias, residual, activation and one
//   16-byte store, rows written whole (coalesced).
// The blocks of one pixel tile are launched next to each other (output channel tile
// fastest), so X is read from DRAM about once even when it takes several tiles of W.
#include <mma.h>

#include "conv_act.cuh"
#include "conv_pointwise.h"
#include "k_common.cuh"

using namespace nvcuda;

#define PW_BM 128
#define PW_BK 32
#define PW_LDS (PW_BK + 8) // halves per shared row: staggers the banks, keeps 32-byte alignment
#define PW_THREADS 256

struct pw_args {
  const __half *x, *w, *bias, *z;
  __half *y;
  int64_t pixels;
  int c, k, ntn; // input channels, output channels, output channel tiles
  int act;
  float alpha, beta;
};

template <int BN> constexpr size_t pw_smem_bytes() {
  size_t tiles = (size_t)(PW_BM + BN) * PW_LDS * sizeof(__half);
  size_t acc = (size_t)PW_BM * (BN + 4) * sizeof(float);
  return tiles > acc ? tiles : acc;
}

// two blocks per SM at least: 16 warps to cover DRAM latency in the memory-bound shapes
template <int BN> __global__ void __launch_bounds__(PW_THREADS, 2) pw_kernel(const pw_args a) {
  extern __shared__ float4 pw_smem[]; // float4: 16-byte aligned
  __half *xs = reinterpret_cast<__half *>(pw_smem); // [PW_BM][PW_LDS]
  __half *ws = xs + PW_BM * PW_LDS;                 // [BN][PW_LDS]
  float *cs = reinterpret_cast<float *>(pw_smem);   // [PW_BM][BN + 4], after the k loop
  constexpr int WN = BN / 2, FN = WN / 16;          // a warp: 32 pixels x WN channels
  constexpr int VPR = PW_BK / 8;                    // 16-byte vectors per tile row
  constexpr int XV = PW_BM * VPR / PW_THREADS, WV = BN * VPR / PW_THREADS;
  const int tid = threadIdx.x, warp = tid >> 5, wm = warp >> 1, wn = warp & 1;
  const int nt = (int)(blockIdx.x % (unsigned)a.ntn);
  const int64_t p0 = (int64_t)(blockIdx.x / (unsigned)a.ntn) * PW_BM;
  const int n0 = nt * BN;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][FN];
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < FN; j++) wmma::fill_fragment(acc[i][j], 0.f);

  uint4 xr[XV], wr[WV];
  auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < XV; i++) {
      const int q = tid + i * PW_THREADS, row = q / VPR, k = k0 + (q % VPR) * 8;
      const int64_t p = p0 + row;
      xr[i] = p < a.pixels && k < a.c
                  ? __ldg(reinterpret_cast<const uint4 *>(a.x + p * a.c + k))
                  : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int i = 0; i < WV; i++) {
      const int q = tid + i * PW_THREADS, row = q / VPR, k = k0 + (q % VPR) * 8;
      const int n = n0 + row;
      wr[i] = n < a.k && k < a.c
                  ? __ldg(reinterpret_cast<const uint4 *>(a.w + (int64_t)n * a.c + k))
                  : make_uint4(0, 0, 0, 0);
    }
  };
  auto stash = [&]() {
#pragma unroll
    for (int i = 0; i < XV; i++) {
      const int q = tid + i * PW_THREADS;
      *reinterpret_cast<uint4 *>(xs + (q / VPR) * PW_LDS + (q % VPR) * 8) = xr[i];
    }
#pragma unroll
    for (int i = 0; i < WV; i++) {
      const int q = tid + i * PW_THREADS;
      *reinterpret_cast<uint4 *>(ws + (q / VPR) * PW_LDS + (q % VPR) * 8) = wr[i];
    }
  };

  load(0);
  for (int k0 = 0; k0 < a.c; k0 += PW_BK) {
    stash();
    __syncthreads();
    if (k0 + PW_BK < a.c) load(k0 + PW_BK); // in flight during this chunk's MMAs
#pragma unroll
    for (int kk = 0; kk < PW_BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb[FN];
#pragma unroll
      for (int i = 0; i < 2; i++)
        wmma::load_matrix_sync(fa[i], xs + (wm * 32 + i * 16) * PW_LDS + kk, PW_LDS);
      // B = W^T: element (k, n) is ws[n][k], a column-major view
#pragma unroll
      for (int j = 0; j < FN; j++)
        wmma::load_matrix_sync(fb[j], ws + (wn * WN + j * 16) * PW_LDS + kk, PW_LDS);
#pragma unroll
      for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < FN; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads(); // the tiles are overwritten next (or become cs)
  }

  constexpr int LDC = BN + 4;
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < FN; j++)
      wmma::store_matrix_sync(cs + (wm * 32 + i * 16) * LDC + wn * WN + j * 16, acc[i][j], LDC,
                              wmma::mem_row_major);
  __syncthreads();

  constexpr int CV = BN / 8; // 8-channel vectors per tile row
  for (int q = tid; q < PW_BM * CV; q += PW_THREADS) {
    const int row = q / CV, n = n0 + (q % CV) * 8;
    const int64_t p = p0 + row;
    if (p >= a.pixels || n >= a.k) continue;
    const float4 *c4 = reinterpret_cast<const float4 *>(cs + row * LDC + (q % CV) * 8);
    const float4 lo = c4[0], hi = c4[1];
    float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    float t[8];
    if (a.bias) {
      k_half8_unpack(__ldg(reinterpret_cast<const uint4 *>(a.bias + n)), t);
#pragma unroll
      for (int e = 0; e < 8; e++) v[e] += t[e];
    }
    const int64_t o = p * a.k + n;
    if (a.z) { // plain load: z may be y itself
      k_half8_unpack(*reinterpret_cast<const uint4 *>(a.z + o), t);
#pragma unroll
      for (int e = 0; e < 8; e++) v[e] += t[e];
    }
    conv_act_n<8>(a.act, a.alpha, a.beta, v);
    *reinterpret_cast<uint4 *>(a.y + o) = k_half8_pack(v);
  }
}

// 128 output channels a tile when that pads K no further than 64 would (one read of
// X serves more channels), else 64.
static int pw_bn(int k) {
  int64_t pad64 = (k + 63) / 64 * 64, pad128 = (k + 127) / 128 * 128;
  return k > 64 && pad128 == pad64 ? 128 : 64;
}

extern "C" int k_conv_pointwise_supported(const k_pw_problem *p) {
  if (p->pixels < 1 || p->channels < 8 || p->out_channels < 8 || p->channels % 8 ||
      p->out_channels % 8 || p->act < 0 || p->act > 9) // conv_act.cuh
    return 0;
  int bn = pw_bn(p->out_channels);
  int64_t ntn = (p->out_channels + bn - 1) / bn, mtiles = (p->pixels + PW_BM - 1) / PW_BM;
  // the grid is one dimension; pixel offsets p * channels fit int64 trivially
  return mtiles * ntn <= 0x7fffffff;
}

extern "C" cudaError_t k_conv_pointwise_init(void) {
  cudaError_t e = cudaFuncSetAttribute(pw_kernel<64>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       (int)pw_smem_bytes<64>());
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute(pw_kernel<128>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)pw_smem_bytes<128>());
  return e;
}

extern "C" cudaError_t k_conv_pointwise(const k_pw_problem *p, const void *x, const void *w,
                                        const void *bias, const void *z, void *y,
                                        cudaStream_t s) {
  if (!k_conv_pointwise_supported(p)) return cudaErrorInvalidValue;
  if (((uintptr_t)x | (uintptr_t)w | (uintptr_t)bias | (uintptr_t)z | (uintptr_t)y) % 16)
    return cudaErrorMisalignedAddress;
  pw_args a;
  a.x = (const __half *)x;
  a.w = (const __half *)w;
  a.bias = (const __half *)bias;
  a.z = (const __half *)z;
  a.y = (__half *)y;
  a.pixels = p->pixels;
  a.c = p->channels;
  a.k = p->out_channels;
  a.act = p->act;
  a.alpha = p->alpha;
  a.beta = p->beta;
  int bn = pw_bn(p->out_channels);
  a.ntn = (p->out_channels + bn - 1) / bn;
  unsigned blocks = (unsigned)(((p->pixels + PW_BM - 1) / PW_BM) * a.ntn);
  if (bn == 128)
    pw_kernel<128><<<blocks, PW_THREADS, pw_smem_bytes<128>(), s>>>(a);
  else
    pw_kernel<64><<<blocks, PW_THREADS, pw_smem_bytes<64>(), s>>>(a);
  return cudaGetLastError();
}
