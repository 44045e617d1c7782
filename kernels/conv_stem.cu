// conv_stem.cu: the few-input-channel convolution of conv_stem.h as an implicit GEMM,
// Y[pixels x K] = A[pixels x R*S*cp] * W[K x R*S*cp]^T, on mma.sync m16n8k16 with fp32
// accumulators.
//
// Reduction index k = (r * S + s) * cp + ch: a tap's cp channels are adjacent, so the
// two terms a thread's A fragment holds per register (k even, k + 1) are one aligned
// 32-bit word of the staged window, at the pixel's base plus a per-k offset (koff, made
// once a block). Channels C..cp-1 are zero in the window and in the filters alike (0 * 0:
// an infinity in the input meets only real weights, as in a direct convolution); k past
// R * S * cp reads nothing (koff -1) and multiplies zero filters.
//
// A block: 4 warps, an output tile of 8 rows x 16 columns (128 pixels); warp w owns
// tile rows 2w and 2w + 1 (two m16 tiles, one row of 16 pixels each) and all BN output
// channels (BN / 8 n8 tiles, B fragments by ldmatrix from the [BN][kpad + 8] filters:
// the odd multiple of 16 bytes a row makes the eight rows' addresses conflict-free).
// Blocks stay resident and walk the tiles of their channel block, so the filters are
// read from global memory once a block.
#include <cuda_fp16.h>
#include <stdint.h>

#include "conv_act.cuh"
#include "conv_stem.h"
#include "k_common.cuh"
#include "k_mma.cuh"

namespace {

constexpr int ST_TH = 8, ST_TW = 16, ST_PIX = ST_TH * ST_TW, ST_THREADS = 128;
constexpr int ST_KPAD_MAX = 512;    // reduction length (R * S * cp, padded)
constexpr int ST_PF = 8;            // window pixels a thread prefetches
constexpr int ST_WINDOW_MAX = ST_PF * ST_THREADS;
constexpr int ST_ZERO_BYTES = 1024; // zeros after the window (the fixed kernels' padding)
constexpr int ST_BN_MAX = 64;

struct stem_args {
  const __half *x, *w, *bias, *z;
  __half *y;
  int h, w_in, c, k, r, s, oh, ow;
  int pad_h, pad_w, sh, sw, dh, dw;
  int act;
  float alpha, beta;
  int has_x_max;
  float x_max;
  int kpad, in_th, in_tw, ntn;
  int tiles_x, tiles_y;
  int64_t tiles;
  int64_t y_pitch; /* elements from one output pixel to the next */
};

__host__ __device__ constexpr int st_align16(int b) { return (b + 15) / 16 * 16; }
__host__ __device__ constexpr int st_ldw(int kpad) { return kpad + 8; } // halves a filter row
__host__ __device__ constexpr int st_ldc(int bn) { return bn + 8; }     // floats a result row
__host__ __device__ constexpr int st_kpad_of(int r, int s, int cp) {
  return (r * s * cp + 15) / 16 * 16;
}

// Shared memory, in order: filters, tap offsets, bias, input window (+ zeros), results.
struct st_layout {
  int ws, koff, bs, xs, cs, total;
};
__host__ __device__ inline st_layout st_smem(int bn, int kpad, int window, int cp) {
  st_layout l;
  l.ws = 0;
  l.koff = st_align16(bn * st_ldw(kpad) * 2);
  l.bs = l.koff + st_align16(kpad / 2 * 4);
  l.xs = l.bs + st_align16(bn * 4);
  l.cs = l.xs + st_align16(window * cp * 2) + ST_ZERO_BYTES;
  l.total = l.cs + ST_PIX * st_ldc(bn) * 4;
  return l;
}

__device__ __forceinline__ uint32_t st_lds32(const __half *p) {
  return *reinterpret_cast<const uint32_t *>(p);
}

// A window pixel's cp channels, as one vector (8 or 16 bytes).
template <int CP> struct st_px {
  __half v[CP];
};

// The kernel. R > 0 fixes the geometry at compile time (R x S window, strides SH, SW,
// no dilation: the stems of the zoo), so that the tap offsets of a thread's A rows are
// registers set once and each A word is one load at a constant distance from them;
// R == 0 reads the geometry from the arguments and the offsets from a shared table.
template <int BN, int CP, int R, int S, int SH, int SW>
__global__ void __launch_bounds__(ST_THREADS, 3) stem_kernel(stem_args a) {
#if defined(K_MMA_AVAILABLE)
  constexpr bool FIX = R > 0;
  constexpr int NT = BN / 8, MT = 2, CV = BN / 8, LDC = st_ldc(BN);
  constexpr int KPAD_F = FIX ? st_kpad_of(R, S, CP) : 16, KS_F = KPAD_F / 16;
  constexpr int TW_F = (ST_TW - 1) * SW + S, TH_F = (ST_TH - 1) * SH + R;
  const int kpad = FIX ? KPAD_F : a.kpad;
  const int in_tw = FIX ? TW_F : a.in_tw, in_th = FIX ? TH_F : a.in_th;
  const int sh = FIX ? SH : a.sh, sw = FIX ? SW : a.sw;
  const int fr = FIX ? R : a.r, fs = FIX ? S : a.s;
  const int dh = FIX ? 1 : a.dh, dw = FIX ? 1 : a.dw;
  const int window = in_th * in_tw;

  extern __shared__ __align__(16) unsigned char st_smem_raw[];
  const int ldw = st_ldw(kpad);
  const st_layout L = st_smem(BN, kpad, window, CP);
  __half *ws = reinterpret_cast<__half *>(st_smem_raw + L.ws);
  int *koff = reinterpret_cast<int *>(st_smem_raw + L.koff);
  float *bs = reinterpret_cast<float *>(st_smem_raw + L.bs);
  __half *xs = reinterpret_cast<__half *>(st_smem_raw + L.xs);
  float *cs = reinterpret_cast<float *>(st_smem_raw + L.cs);

  const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
  const int nb = blockIdx.x % a.ntn, n0 = nb * BN;
  const int chunk = blockIdx.x / a.ntn, chunks = gridDim.x / a.ntn;
  const int taps = fr * fs;

  // once a block: the filters widened to cp channels a tap, the tap offsets, the bias,
  // the zeros after the window
  for (int i = tid; i < BN * kpad; i += ST_THREADS) {
    const int row = i / kpad, kk = i - row * kpad, tap = kk / CP, ch = kk - tap * CP;
    __half v = __float2half(0.f);
    if (n0 + row < a.k && tap < taps && ch < a.c)
      v = a.w[((int64_t)(n0 + row) * taps + tap) * a.c + ch];
    ws[row * ldw + kk] = v;
  }
  if (!FIX)
    for (int kp = tid; kp < kpad / 2; kp += ST_THREADS) {
      const int kk = 2 * kp, tap = kk / CP, ch = kk - tap * CP;
      int o = -1;
      if (tap < taps) {
        const int r = tap / fs, s = tap - r * fs;
        o = (r * dh * in_tw + s * dw) * CP + ch;
      }
      koff[kp] = o;
    }
  for (int i = tid; i < BN; i += ST_THREADS)
    bs[i] = a.bias && n0 + i < a.k ? __half2float(a.bias[n0 + i]) : 0.f;
  for (int i = tid; i < ST_ZERO_BYTES / 4; i += ST_THREADS)
    reinterpret_cast<uint32_t *>(xs + window * CP)[i] = 0u;

  // this thread's A rows: tile pixels (2 wid + i, g) and (2 wid + i, g + 8)
  const int g = lane >> 2, t4 = lane & 3;
  const int pb00 = (wid * MT * sh * in_tw + g * sw) * CP;
  int pb[MT][2];
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int j = 0; j < 2; j++) pb[i][j] = pb00 + (i * sh * in_tw + 8 * j * sw) * CP;
  // FIX: the offsets of this thread's reduction terms (2 t4 and 2 t4 + 8 of each step)
  // from its first row; padding terms point into the zeros after the window, far
  // enough from every row's own offset
  int ko[KS_F][2];
  if constexpr (FIX) {
#pragma unroll
    for (int ks = 0; ks < KS_F; ks++)
#pragma unroll
      for (int hh = 0; hh < 2; hh++) {
        const int kk = ks * 16 + 2 * t4 + 8 * hh, tap = kk / CP, ch = kk - tap * CP;
        ko[ks][hh] = tap < R * S ? ((tap / S) * TW_F + tap % S) * CP + ch : window * CP - pb00;
      }
  }
  // ldmatrix lanes for B: filter rows (lane & 7) of the first or second n8 tile
  // (lane >> 4), reduction half ((lane >> 3) & 1)
  const int b_row = (lane & 7) + ((lane >> 4) << 3), b_col = ((lane >> 3) & 1) * 8;
  const int64_t per_image = (int64_t)a.tiles_y * a.tiles_x;

  // A tile's input window, ST_PF pixels a thread, zeros outside the image; loaded into
  // registers one tile ahead so that the loads are in flight while a tile is multiplied
  st_px<CP> pf[ST_PF];
  auto load_window = [&](int64_t tile) {
    const int img = (int)(tile / per_image), rem = (int)(tile - img * per_image);
    const int iy0 = (rem / a.tiles_x) * ST_TH * sh - a.pad_h;
    const int ix0 = (rem % a.tiles_x) * ST_TW * sw - a.pad_w;
    const __half *xi = a.x + (int64_t)img * a.h * a.w_in * a.c;
#pragma unroll
    for (int j = 0; j < ST_PF; j++) {
      const int p = tid + j * ST_THREADS, py = p / in_tw, px = p - py * in_tw;
      const int iy = iy0 + py, ix = ix0 + px;
#pragma unroll
      for (int ch = 0; ch < CP; ch++) pf[j].v[ch] = __float2half(0.f);
      if (p < window && iy >= 0 && iy < a.h && ix >= 0 && ix < a.w_in) {
        const __half *src = xi + ((int64_t)iy * a.w_in + ix) * a.c;
#pragma unroll
        for (int ch = 0; ch < CP; ch++)
          if (ch < a.c) {
            __half e = src[ch];
            // FusedConv's input_max: min(x, x_max), NaN kept (the comparison is false)
            if (a.has_x_max && __half2float(e) > a.x_max) e = __float2half(a.x_max);
            pf[j].v[ch] = e;
          }
      }
    }
  };
  if (chunk < a.tiles) load_window(chunk);

  for (int64_t tile = chunk; tile < a.tiles; tile += chunks) {
    const int img = (int)(tile / per_image), rem = (int)(tile - img * per_image);
    const int oy0 = (rem / a.tiles_x) * ST_TH, ox0 = (rem % a.tiles_x) * ST_TW;
    // the previous tile's window is no longer read (the barrier before its write-out)
#pragma unroll
    for (int j = 0; j < ST_PF; j++) {
      const int p = tid + j * ST_THREADS;
      if (p < window) *reinterpret_cast<st_px<CP> *>(xs + p * CP) = pf[j];
    }
    __syncthreads(); // the window (and, the first time, the filters) visible
    if (tile + chunks < a.tiles) load_window(tile + chunks);

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
      for (int j = 0; j < NT; j++)
#pragma unroll
        for (int e = 0; e < 4; e++) acc[i][j][e] = 0.f;
    auto step = [&](const uint32_t (&af)[MT][4], int k0) {
      uint32_t bf[NT / 2][4];
#pragma unroll
      for (int j = 0; j < NT / 2; j++) k_ldsm_x4(bf[j], ws + (b_row + j * 16) * ldw + k0 + b_col);
#pragma unroll
      for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++) k_mma16816(acc[i][j], af[i], &bf[j / 2][(j & 1) * 2]);
    };
    if constexpr (FIX) {
      constexpr int RI = SH * TW_F * CP, RJ = 8 * SW * CP; // next m tile, rows g + 8
#pragma unroll
      for (int ks = 0; ks < KS_F; ks++) {
        const __half *b0 = xs + pb00 + ko[ks][0], *b1 = xs + pb00 + ko[ks][1];
        uint32_t af[MT][4];
#pragma unroll
        for (int i = 0; i < MT; i++) {
          af[i][0] = st_lds32(b0 + i * RI);
          af[i][1] = st_lds32(b0 + i * RI + RJ);
          af[i][2] = st_lds32(b1 + i * RI);
          af[i][3] = st_lds32(b1 + i * RI + RJ);
        }
        step(af, ks * 16);
      }
    } else {
      for (int k0 = 0; k0 < kpad; k0 += 16) {
        const int o0 = koff[k0 / 2 + t4], o1 = koff[k0 / 2 + t4 + 4];
        uint32_t af[MT][4];
#pragma unroll
        for (int i = 0; i < MT; i++) {
          af[i][0] = o0 >= 0 ? st_lds32(xs + pb[i][0] + o0) : 0u;
          af[i][1] = o0 >= 0 ? st_lds32(xs + pb[i][1] + o0) : 0u;
          af[i][2] = o1 >= 0 ? st_lds32(xs + pb[i][0] + o1) : 0u;
          af[i][3] = o1 >= 0 ? st_lds32(xs + pb[i][1] + o1) : 0u;
        }
        step(af, k0);
      }
    }
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
      for (int j = 0; j < NT; j++) {
        float *c0 = cs + ((wid * MT + i) * ST_TW + g) * LDC + j * 8 + 2 * t4;
        *reinterpret_cast<float2 *>(c0) = make_float2(acc[i][j][0], acc[i][j][1]);
        *reinterpret_cast<float2 *>(c0 + 8 * LDC) = make_float2(acc[i][j][2], acc[i][j][3]);
      }
    __syncthreads(); // the tile's results complete; every warp done with the window

    // bias, residual, activation; a pixel's 8 channels a 16-byte store, a tile row's
    // 16 pixels one contiguous run of 16 * K channels (when dense)
    const int64_t pbase = ((int64_t)img * a.oh + oy0) * a.ow + ox0; // the tile's first pixel
#pragma unroll 2
    for (int q = tid; q < ST_PIX * CV; q += ST_THREADS) {
      const int row = q / CV, col = (q - row * CV) * 8;
      const int ty = row / ST_TW, tx = row - ty * ST_TW;
      if (oy0 + ty >= a.oh || ox0 + tx >= a.ow || n0 + col >= a.k) continue;
      const float4 *c4 = reinterpret_cast<const float4 *>(cs + row * LDC + col);
      const float4 *b4 = reinterpret_cast<const float4 *>(bs + col);
      const float4 lo = c4[0], hi = c4[1], bl = b4[0], bh = b4[1];
      float v[8] = {lo.x + bl.x, lo.y + bl.y, lo.z + bl.z, lo.w + bl.w,
                    hi.x + bh.x, hi.y + bh.y, hi.z + bh.z, hi.w + bh.w};
      const int64_t px = pbase + (int64_t)ty * a.ow + tx;
      if (a.z) { // plain load: z may be y itself (this thread alone reads and writes it)
        float zt[8];
        k_half8_unpack(*reinterpret_cast<const uint4 *>(a.z + px * a.k + n0 + col), zt);
#pragma unroll
        for (int e = 0; e < 8; e++) v[e] += zt[e];
      }
      conv_act_n<8>(a.act, a.alpha, a.beta, v);
      *reinterpret_cast<uint4 *>(a.y + px * a.y_pitch + n0 + col) = k_half8_pack(v);
    }
  }
#endif // sm_80+: k_stem_plan_make refuses code built for older targets
}

// The channel block: the narrowest of 16, 32, 48, 64 that holds K, else 64 (several).
int st_bn(int k) { return k <= 16 ? 16 : k <= 32 ? 32 : k <= 48 ? 48 : 64; }
int st_cp(int c) { return c <= 4 ? 4 : 8; }
int st_kpad(const k_stem_problem *p) { return st_kpad_of(p->r, p->s, st_cp(p->c)); }
// rows (or columns) of input an output tile of `tile` rows reads
int64_t st_span(int stride, int dil, int taps, int tile) {
  return (int64_t)(tile - 1) * stride + (int64_t)(taps - 1) * dil + 1;
}

// The geometries compiled fixed (up to 4 channels, no dilation): 1 ResNet's and
// GoogLeNet's 7x7 stride 2; 2 the 3x3 stride-2 stems (MobileNet, EfficientNet,
// SqueezeNet, RegNet, Inception); 3 VGG's 3x3 stride 1. 0: any other, from the arguments.
int st_geo(const k_stem_problem *p) {
  if (st_cp(p->c) != 4 || p->dil_h != 1 || p->dil_w != 1 || p->stride_h != p->stride_w)
    return 0;
  if (p->r == 7 && p->s == 7 && p->stride_h == 2) return 1;
  if (p->r == 3 && p->s == 3 && p->stride_h == 2) return 2;
  if (p->r == 3 && p->s == 3 && p->stride_h == 1) return 3;
  return 0;
}

template <int BN> const void *st_fn(int cp, int geo) {
  switch (geo) {
    case 1: return (const void *)stem_kernel<BN, 4, 7, 7, 2, 2>;
    case 2: return (const void *)stem_kernel<BN, 4, 3, 3, 2, 2>;
    case 3: return (const void *)stem_kernel<BN, 4, 3, 3, 1, 1>;
    default:
      return cp == 4 ? (const void *)stem_kernel<BN, 4, 0, 0, 1, 1>
                     : (const void *)stem_kernel<BN, 8, 0, 0, 1, 1>;
  }
}
const void *st_kernel(int bn, int cp, int geo) {
  switch (bn) {
    case 16: return st_fn<16>(cp, geo);
    case 32: return st_fn<32>(cp, geo);
    case 48: return st_fn<48>(cp, geo);
    default: return st_fn<64>(cp, geo);
  }
}

}  // namespace

extern "C" int k_conv_stem_supported(const k_stem_problem *p) {
  if (p->n < 1 || p->c < 1 || p->c > 8 || p->k < 8 || p->k % 8 || p->r < 1 || p->s < 1 ||
      p->h < 1 || p->w < 1 || p->out_h < 1 || p->out_w < 1 || p->stride_h < 1 ||
      p->stride_w < 1 || p->dil_h < 1 || p->dil_w < 1 || p->pad_h < 0 || p->pad_w < 0 ||
      p->act < 0 || p->act > 9) // conv_act.cuh's codes
    return 0;
  if (p->y_pitch && (p->y_pitch < p->k || p->y_pitch % 8)) return 0;
  if (st_kpad(p) > ST_KPAD_MAX) return 0;
  const int64_t th = st_span(p->stride_h, p->dil_h, p->r, ST_TH);
  const int64_t tw = st_span(p->stride_w, p->dil_w, p->s, ST_TW);
  if (th * tw > ST_WINDOW_MAX) return 0; // the pixels the threads prefetch
  // one image's offsets in 32 bits (the window and tile indices); the tensors in 64
  const int64_t tiles = (int64_t)p->n * ((p->out_h + ST_TH - 1) / ST_TH) *
                        ((p->out_w + ST_TW - 1) / ST_TW);
  return (int64_t)p->h * p->w * p->c < INT32_MAX && tiles < INT32_MAX;
}

extern "C" cudaError_t k_stem_plan_make(const k_stem_problem *p, int sm_count,
                                        k_stem_plan *plan) {
  if (!k_conv_stem_supported(p) || sm_count < 1) return cudaErrorInvalidValue;
  plan->p = *p;
  plan->bn = st_bn(p->k);
  plan->cp = st_cp(p->c);
  plan->geo = st_geo(p);
  plan->kpad = st_kpad(p);
  plan->in_th = (int)st_span(p->stride_h, p->dil_h, p->r, ST_TH);
  plan->in_tw = (int)st_span(p->stride_w, p->dil_w, p->s, ST_TW);
  plan->ntn = (p->k + plan->bn - 1) / plan->bn;
  const st_layout l = st_smem(plan->bn, plan->kpad, plan->in_th * plan->in_tw, plan->cp);
  plan->smem = l.total;
  const void *fn = st_kernel(plan->bn, plan->cp, plan->geo);
  cudaFuncAttributes fa;
  cudaError_t e = cudaFuncGetAttributes(&fa, fn);
  if (e != cudaSuccess) return e;
  if (fa.binaryVersion < 80) return cudaErrorNoKernelImageForDevice; // an empty body
  // the limit of the largest problem the kernel takes: the attribute is the kernel's,
  // shared by every plan
  const int most = st_smem(ST_BN_MAX, ST_KPAD_MAX, ST_WINDOW_MAX, 8).total;
  e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, most);
  if (e != cudaSuccess) return e;
  int per_sm = 0;
  e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, ST_THREADS, (size_t)l.total);
  if (e != cudaSuccess) return e;
  if (per_sm < 1) return cudaErrorInvalidConfiguration;
  const int64_t tiles = (int64_t)p->n * ((p->out_h + ST_TH - 1) / ST_TH) *
                        ((p->out_w + ST_TW - 1) / ST_TW);
  int64_t chunks = (int64_t)sm_count * per_sm / plan->ntn;
  if (chunks < 1) chunks = 1;
  if (chunks > tiles) chunks = tiles;
  plan->blocks = (int)(chunks * plan->ntn);
  return cudaSuccess;
}

extern "C" cudaError_t k_conv_stem(const k_stem_plan *plan, const void *x, const void *w,
                                   const void *bias, const void *z, void *y,
                                   cudaStream_t stream) {
  const k_stem_problem *p = &plan->p;
  if (!k_conv_stem_supported(p)) return cudaErrorInvalidValue;
  if (((uintptr_t)z | (uintptr_t)y) % 16 || ((uintptr_t)x | (uintptr_t)w | (uintptr_t)bias) % 2)
    return cudaErrorMisalignedAddress;
  stem_args a;
  a.x = (const __half *)x;
  a.w = (const __half *)w;
  a.bias = (const __half *)bias;
  a.z = (const __half *)z;
  a.y = (__half *)y;
  a.h = p->h, a.w_in = p->w, a.c = p->c, a.k = p->k, a.r = p->r, a.s = p->s;
  a.oh = p->out_h, a.ow = p->out_w;
  a.pad_h = p->pad_h, a.pad_w = p->pad_w, a.sh = p->stride_h, a.sw = p->stride_w;
  a.dh = p->dil_h, a.dw = p->dil_w;
  a.act = p->act, a.alpha = p->alpha, a.beta = p->beta;
  a.has_x_max = p->has_x_max, a.x_max = p->x_max;
  a.kpad = plan->kpad, a.in_th = plan->in_th, a.in_tw = plan->in_tw, a.ntn = plan->ntn;
  a.tiles_x = (p->out_w + ST_TW - 1) / ST_TW;
  a.tiles_y = (p->out_h + ST_TH - 1) / ST_TH;
  a.tiles = (int64_t)p->n * a.tiles_x * a.tiles_y;
  a.y_pitch = p->y_pitch ? p->y_pitch : p->k;
  void *args[] = {&a};
  return cudaLaunchKernel(st_kernel(plan->bn, plan->cp, plan->geo), dim3((unsigned)plan->blocks),
                          dim3(ST_THREADS), args, (size_t)plan->smem, stream);
}
