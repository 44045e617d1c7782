// conv_pointwise_stream.cu: Y = act(X * W^T + bias + Z) for a 1x1 convolution of fp16
// channels-last data with at most 256 input channels, fp32 accumulation on tensor cores
// (mma.sync m16n8k16).
//
// Why a second pointwise kernel (beside conv_pointwise.cu's and cuBLASLt's): with few
// input channels the reduction is one to sixteen MMA steps, and the time goes into
// moving data: reading X once, writing the wide Y. On the H200 both others wrote such
// expansions at 10-15% of the memory bandwidth (EfficientNet-B0's 16 -> 96 at 112x112:
// 1.23 ms for 719 MB). Here:
// - a block owns one tile of BN output channels for a range of pixel tiles: its
//   filters (BN x C) and bias are loaded into shared memory once;
// - pixel tiles of PS_BM rows x all C channels are copied in with cp.async through a
//   ring of up to 8 buffers: with 16 input channels a tile is 2 KB, and one tile of
//   look-ahead would leave each block waiting on DRAM latency every tile;
// - the grid is what the device holds at once, the blocks of one pixel range next to
//   each other (channel tile fastest), so X comes from DRAM about once;
// - the accumulators go through shared memory (fp32) so that each thread finishes 8
//   consecutive channels of one pixel: bias, residual, activation, one 16-byte store,
//   rows written whole.
#include <cuda_fp16.h>
#include <stdint.h>

#include "conv_act.cuh"
#include "conv_pointwise_stream.h"
#include "k_common.cuh"
#include "k_mma.cuh"

#define PS_BM 64       // pixels a tile
#define PS_THREADS 256 // 8 warps
#define PS_CMAX 256    // input channels at most
#define PS_STAGES 8    // X tiles in flight at most
#define PS_X_BUDGET (64 * 1024) // shared bytes for the ring of X tiles (at least 2 of them)

struct ps_args {
  const __half *x, *w, *bias, *z;
  __half *y;
  int64_t pixels;
  int c, cpad, k, ntn, tiles, chunks;
  int stages; // X buffers in the ring (2 .. PS_STAGES)
  int act;
  float alpha, beta;
  // stride > 1: output pixel (n, oh, ow) reads input pixel (n, oh * stride, ow * stride)
  int stride, in_h, in_w, out_w;
  int64_t out_hw;
  int64_t y_pitch; // elements from one output pixel to the next
};

// Warp layout of a PS_BM x BN tile: BN 128 as 2 x 4 warps of 32 x 32, BN 96 and 64 as
// 4 x 2 warps of 16 x 48 or 16 x 32.
template <int BN> struct ps_cfg {
  static_assert(BN == 128 || BN == 96 || BN == 64, "ps_cfg: a tile width of 64, 96 or 128");
  static constexpr int WARPS_N = BN == 128 ? 4 : 2, WARPS_M = 8 / WARPS_N;
  static constexpr int WM = PS_BM / WARPS_M, WN = BN / WARPS_N;
  static constexpr int MT = WM / 16, NT = WN / 8; // m16 and n8 fragments a warp
  static constexpr int LDC = BN + 8;              // fp32 staging row: half-warps conflict-free
};

// Halves per shared row of X and W: the padded channels plus 8, so that the eight rows
// one ldmatrix reads fall in different banks.
__host__ __device__ static inline int ps_lds(int cpad) { return cpad + 8; }

// Ring depth: as many X tiles as fit the budget, 2 .. PS_STAGES.
static int ps_stages(int cpad) {
  int n = PS_X_BUDGET / (PS_BM * ps_lds(cpad) * (int)sizeof(__half));
  return n < 2 ? 2 : n > PS_STAGES ? PS_STAGES : n;
}

template <int BN> static size_t ps_smem_bytes(int cpad) {
  return (size_t)(BN + ps_stages(cpad) * PS_BM) * ps_lds(cpad) * sizeof(__half) +
         (size_t)PS_BM * ps_cfg<BN>::LDC * sizeof(float) + (size_t)BN * sizeof(float);
}

#if K_MMA_AVAILABLE
// Waits until tile t's group has landed: all but the newest stages - 1 groups.
__device__ __forceinline__ void ps_wait_tile(int stages) {
  switch (stages) {
    case 2: k_cp_async_wait<1>(); break;
    case 3: k_cp_async_wait<2>(); break;
    case 4: k_cp_async_wait<3>(); break;
    case 5: k_cp_async_wait<4>(); break;
    case 6: k_cp_async_wait<5>(); break;
    case 7: k_cp_async_wait<6>(); break;
    default: k_cp_async_wait<7>(); break;
  }
}

// rows x cpad halves from rows `first`.. of a row-major [count x c] array into shared
// memory (row stride lds); rows past count and channels past c read as zeros.
__device__ __forceinline__ void ps_load_rows(__half *dst, const __half *src, int64_t first,
                                             int64_t count, int rows, int c, int cpad,
                                             int lds) {
  const int vpr = cpad / 8;
  for (int q = threadIdx.x; q < rows * vpr; q += PS_THREADS) {
    const int row = q / vpr, ch = (q - row * vpr) * 8;
    const int64_t r = first + row;
    const bool ok = r < count && ch < c;
    k_cp_async16(dst + row * lds + ch, ok ? src + r * c + ch : src, ok);
  }
}

// The same for a tile of pixels: with a stride, output pixel r's input row is the
// subsampled one.
__device__ __forceinline__ void ps_load_pixels(__half *dst, const ps_args &a, int64_t first,
                                               int lds) {
  if (a.stride <= 1) {
    ps_load_rows(dst, a.x, first, a.pixels, PS_BM, a.c, a.cpad, lds);
    return;
  }
  const int vpr = a.cpad / 8;
  for (int q = threadIdx.x; q < PS_BM * vpr; q += PS_THREADS) {
    const int row = q / vpr, ch = (q - row * vpr) * 8;
    const int64_t r = first + row;
    const bool ok = r < a.pixels && ch < a.c;
    const int64_t n = r / a.out_hw, rem = r - n * a.out_hw;
    const int oh = (int)(rem / a.out_w), ow = (int)(rem - (int64_t)oh * a.out_w);
    const int64_t src = ((n * a.in_h + (int64_t)oh * a.stride) * a.in_w + (int64_t)ow * a.stride) * a.c;
    k_cp_async16(dst + row * lds + ch, ok ? a.x + src + ch : a.x, ok);
  }
}

#endif

template <int BN> __global__ void __launch_bounds__(PS_THREADS, 1) ps_kernel(const ps_args a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  typedef ps_cfg<BN> G;
  extern __shared__ float4 ps_smem[]; // float4: 16-byte aligned
  const int lds = ps_lds(a.cpad);
  __half *ws = reinterpret_cast<__half *>(ps_smem); // [BN][lds]
  __half *xs = ws + BN * lds;                       // [stages][PS_BM][lds]
  float *cs = reinterpret_cast<float *>(xs + a.stages * PS_BM * lds); // [PS_BM][LDC]
  float *bs = cs + PS_BM * G::LDC;                              // [BN]
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / G::WARPS_N, wn = warp % G::WARPS_N;
  const int nt = (int)(blockIdx.x % (unsigned)a.ntn), chunk = (int)(blockIdx.x / (unsigned)a.ntn);
  const int n0 = nt * BN;
  const int t0 = (int)((int64_t)chunk * a.tiles / a.chunks);
  const int t1 = (int)((int64_t)(chunk + 1) * a.tiles / a.chunks);
  if (t0 >= t1) return;

  // groups: W with tile t0, then one a tile (empty ones past t1), so that tile t has
  // landed once all but the newest stages - 1 groups have
  ps_load_rows(ws, a.w + (int64_t)n0 * a.c, 0, a.k - n0, BN, a.c, a.cpad, lds);
  for (int j = 0; j < a.stages - 1; j++) {
    if (t0 + j < t1)
      ps_load_pixels(xs + j * PS_BM * lds, a, (int64_t)(t0 + j) * PS_BM, lds);
    k_cp_async_commit();
  }
  for (int i = tid; i < BN; i += PS_THREADS)
    bs[i] = a.bias && n0 + i < a.k ? __half2float(a.bias[n0 + i]) : 0.f;

  // ldmatrix lanes: A rows (lane & 15), column half (lane >> 4); B rows (lane & 7) of
  // the first or second n8 fragment (lane >> 4), column half ((lane >> 3) & 1)
  const int a_row = wm * G::WM + (lane & 15), a_col = (lane >> 4) * 8;
  const int b_row = wn * G::WN + (lane & 7) + ((lane >> 4) << 3), b_col = ((lane >> 3) & 1) * 8;
  const int g = lane >> 2, t4 = lane & 3; // accumulator row and column pair
  constexpr int CV = BN / 8;              // 8-channel vectors a tile row

  for (int t = t0; t < t1; t++) {
    const int it = t - t0, buf = it % a.stages;
    // tile t + stages - 1 into the buffer the previous tile was multiplied from
    if (t + a.stages - 1 < t1)
      ps_load_pixels(xs + ((it + a.stages - 1) % a.stages) * PS_BM * lds, a,
                     (int64_t)(t + a.stages - 1) * PS_BM, lds);
    k_cp_async_commit();
    ps_wait_tile(a.stages);
    __syncthreads(); // tile t (and W, bias) visible; the previous write-out done with cs

    float acc[G::MT][G::NT][4];
#pragma unroll
    for (int i = 0; i < G::MT; i++)
#pragma unroll
      for (int j = 0; j < G::NT; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[i][j][e] = 0.f;
    const __half *xt = xs + buf * PS_BM * lds;
    for (int k0 = 0; k0 < a.cpad; k0 += 16) {
      uint32_t af[G::MT][4], bf[G::NT / 2][4];
#pragma unroll
      for (int i = 0; i < G::MT; i++) k_ldsm_x4(af[i], xt + (a_row + i * 16) * lds + k0 + a_col);
#pragma unroll
      for (int j = 0; j < G::NT / 2; j++)
        k_ldsm_x4(bf[j], ws + (b_row + j * 16) * lds + k0 + b_col);
#pragma unroll
      for (int i = 0; i < G::MT; i++)
#pragma unroll
        for (int j = 0; j < G::NT; j++)
          k_mma16816(acc[i][j], af[i], &bf[j / 2][(j & 1) * 2]);
    }
#pragma unroll
    for (int i = 0; i < G::MT; i++)
#pragma unroll
      for (int j = 0; j < G::NT; j++) {
        float *c0 = cs + (wm * G::WM + i * 16 + g) * G::LDC + wn * G::WN + j * 8 + 2 * t4;
        *reinterpret_cast<float2 *>(c0) = make_float2(acc[i][j][0], acc[i][j][1]);
        *reinterpret_cast<float2 *>(c0 + 8 * G::LDC) = make_float2(acc[i][j][2], acc[i][j][3]);
      }
    __syncthreads(); // cs complete; every warp is done with buffer buf

    const int64_t p0 = (int64_t)t * PS_BM;
    for (int q = tid; q < PS_BM * CV; q += PS_THREADS) {
      const int row = q / CV, col = (q - row * CV) * 8, n = n0 + col;
      const int64_t p = p0 + row;
      if (p >= a.pixels || n >= a.k) continue;
      const float4 *c4 = reinterpret_cast<const float4 *>(cs + row * G::LDC + col);
      const float4 lo = c4[0], hi = c4[1];
      float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
      const float4 b0 = *reinterpret_cast<const float4 *>(bs + col), b1 = *reinterpret_cast<const float4 *>(bs + col + 4);
      v[0] += b0.x, v[1] += b0.y, v[2] += b0.z, v[3] += b0.w;
      v[4] += b1.x, v[5] += b1.y, v[6] += b1.z, v[7] += b1.w;
      const int64_t o = p * a.k + n;
      if (a.z) { // plain load: z may be y itself (this thread alone reads and writes o;
                 // a dense y then: the engine writes no slice with a residual)
        float zt[8];
        k_half8_unpack(*reinterpret_cast<const uint4 *>(a.z + o), zt);
#pragma unroll
        for (int e = 0; e < 8; e++) v[e] += zt[e];
      }
      conv_act_n<8>(a.act, a.alpha, a.beta, v);
      *reinterpret_cast<uint4 *>(a.y + p * a.y_pitch + n) = k_half8_pack(v);
    }
  }
#endif // sm_80+: k_pws_plan_make refuses code built for older targets
}

// The tile width (128, 96 or 64 output channels) that pads K least, the wider on a tie:
// the expansions' K = 96, 480, 672 fit 96 exactly, where 128 would leave a quarter of
// the last tile's lanes idle.
static int ps_bn(int k) {
  static const int widths[3] = {128, 96, 64};
  int best = 128, pad = INT32_MAX;
  for (int i = 0; i < 3; i++) {
    int p = (k + widths[i] - 1) / widths[i] * widths[i];
    if (p < pad) pad = p, best = widths[i];
  }
  return best;
}

template <int BN> static const void *ps_fn() { return (const void *)ps_kernel<BN>; }

static size_t ps_tile_smem(int bn, int cpad) {
  return bn == 128 ? ps_smem_bytes<128>(cpad) : bn == 96 ? ps_smem_bytes<96>(cpad)
                                                        : ps_smem_bytes<64>(cpad);
}

extern "C" int k_conv_pointwise_stream_supported(const k_pw_problem *p) {
  if (p->pixels < 1 || p->channels < 8 || p->channels > PS_CMAX || p->out_channels < 8 ||
      p->channels % 8 || p->out_channels % 8 || p->act < 0 || p->act > 9) // conv_act.cuh
    return 0;
  if (p->y_pitch && (p->y_pitch < p->out_channels || p->y_pitch % 8)) return 0;
  if (p->stride > 1) { // the output image is the subsampled input's
    if (p->in_h < 1 || p->in_w < 1) return 0;
    const int64_t oh = (p->in_h - 1) / p->stride + 1, ow = (p->in_w - 1) / p->stride + 1;
    if (p->pixels % (oh * ow)) return 0;
  }
  return (p->pixels + PS_BM - 1) / PS_BM <= 0x7fffffff;
}

extern "C" cudaError_t k_pws_plan_make(const k_pw_problem *p, int sm_count, k_pws_plan *plan) {
  if (!k_conv_pointwise_stream_supported(p) || sm_count < 1) return cudaErrorInvalidValue;
  plan->p = *p;
  plan->bn = ps_bn(p->out_channels);
  plan->ntn = (p->out_channels + plan->bn - 1) / plan->bn;
  const int cpad = (p->channels + 15) / 16 * 16;
  const size_t smem = ps_tile_smem(plan->bn, cpad);
  plan->smem = (int)smem;
  const void *fn = plan->bn == 128 ? ps_fn<128>() : plan->bn == 96 ? ps_fn<96>() : ps_fn<64>();
  // the limit of the widest problem, whatever this one needs: the attribute is the
  // kernel's, shared by every plan
  const size_t most = ps_tile_smem(plan->bn, PS_CMAX);
  cudaFuncAttributes fa;
  cudaError_t e = cudaFuncGetAttributes(&fa, fn);
  if (e != cudaSuccess) return e;
  if (fa.binaryVersion < 80) return cudaErrorNoKernelImageForDevice; // an empty body
  e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)most);
  if (e != cudaSuccess) return e;
  int per_sm = 0;
  e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, PS_THREADS, smem);
  if (e != cudaSuccess) return e;
  if (per_sm < 1) return cudaErrorInvalidConfiguration;
  const int64_t tiles = (p->pixels + PS_BM - 1) / PS_BM;
  int64_t chunks = (int64_t)sm_count * per_sm / plan->ntn;
  if (chunks < 1) chunks = 1;
  if (chunks > tiles) chunks = tiles;
  plan->chunks = (int)chunks;
  return cudaSuccess;
}

extern "C" cudaError_t k_conv_pointwise_stream(const k_pws_plan *plan, const void *x,
                                               const void *w, const void *bias, const void *z,
                                               void *y, cudaStream_t s) {
  const k_pw_problem *p = &plan->p;
  if (!k_conv_pointwise_stream_supported(p)) return cudaErrorInvalidValue;
  if (((uintptr_t)x | (uintptr_t)w | (uintptr_t)z | (uintptr_t)y) % 16 || (uintptr_t)bias % 2)
    return cudaErrorMisalignedAddress;
  ps_args a;
  a.x = (const __half *)x;
  a.w = (const __half *)w;
  a.bias = (const __half *)bias;
  a.z = (const __half *)z;
  a.y = (__half *)y;
  a.pixels = p->pixels;
  a.c = p->channels;
  a.cpad = (p->channels + 15) / 16 * 16;
  a.k = p->out_channels;
  a.ntn = plan->ntn;
  a.tiles = (int)((p->pixels + PS_BM - 1) / PS_BM);
  a.chunks = plan->chunks;
  a.stages = ps_stages(a.cpad);
  a.act = p->act;
  a.alpha = p->alpha;
  a.beta = p->beta;
  a.stride = p->stride > 1 ? p->stride : 1;
  a.in_h = p->in_h;
  a.in_w = p->in_w;
  a.out_w = a.stride > 1 ? (p->in_w - 1) / a.stride + 1 : 1;
  a.out_hw = a.stride > 1 ? (int64_t)((p->in_h - 1) / a.stride + 1) * a.out_w : 1;
  a.y_pitch = p->y_pitch ? p->y_pitch : p->out_channels;
  const unsigned blocks = (unsigned)plan->ntn * (unsigned)plan->chunks;
  if (plan->bn == 128)
    ps_kernel<128><<<blocks, PS_THREADS, plan->smem, s>>>(a);
  else if (plan->bn == 96)
    ps_kernel<96><<<blocks, PS_THREADS, plan->smem, s>>>(a);
  else
    ps_kernel<64><<<blocks, PS_THREADS, plan->smem, s>>>(a);
  return cudaGetLastError();
}
