// attention.cu: fused scaled dot-product attention (attention.h).
//
// The tensor-core kernel is flash attention (FlashAttention-2's loop order): a block of
// 4 warps owns 64 query rows of one (b1, b2) entry, each warp 16 of them; K and V go
// through shared memory 64 keys at a time, double-buffered and copied asynchronously. A warp's scores S = Q K^T for the 64 keys sit
// in mma.sync accumulators; the online softmax (running max m and sum l per row) works on
// them in registers, and the same registers, rounded to half, are the A operand of
// O += P V (an m16n8 accumulator pair is exactly an m16n8k16 A fragment). Nothing of S
// reaches memory. Shared-memory rows are padded by 8 halves so that ldmatrix reads them
// without bank conflicts.
#include "attention.h"
#include "k_common.cuh"
#include "k_mma.cuh"

#include <math.h>

namespace {

constexpr int kBQ = 64, kBK = 64, kThreads = 128;

struct view4 {
  int64_t off, s0, s1, s2;
};

view4 to_view4(const k_attn_view *w) { return {w->offset, w->strides[0], w->strides[1], w->strides[2]}; }

#if K_MMA_AVAILABLE
__device__ __forceinline__ uint32_t pack_half2(float a, float b) {
  __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<uint32_t *>(&h);
}
#endif

// Rows row0 .. row0 + 63 of a [rows x D] matrix (row stride `stride`, unit column
// stride) into a shared tile of row stride D + 8; rows past `rows` are zeros. `vec`: every
// row start is 16-byte aligned, so rows go in 16-byte cp.async pieces that land while the
// block computes (the caller commits and waits for them); else element by element through
// registers, which the caller's barrier publishes like the copies.
template <int D>
__device__ __forceinline__ void load_tile(__half *tile, const __half *g, int64_t stride, int row0,
                                          int rows, bool vec) {
  constexpr int LD = D + 8, CHUNKS = D / 8;
  if constexpr (kThreads % CHUNKS == 0) {
    // each thread's pieces lie kThreads / CHUNKS rows apart in one column: the address
    // advances by a constant instead of being recomputed (64-bit) per piece
    constexpr int STEP = kThreads / CHUNKS;
    const int r = threadIdx.x / CHUNKS, col = (threadIdx.x % CHUNKS) * 8;
    const __half *src = g + (int64_t)(row0 + r) * stride + col;
    __half *dst = tile + r * LD + col;
#pragma unroll
    for (int i = 0; i < kBQ / STEP; i++, src += STEP * stride, dst += STEP * LD) {
      const bool in = row0 + r + i * STEP < rows;
      if (vec) {
        // a zero-filled row still names a readable address: the view's first row
        k_cp_async16(dst, in ? src : g + col, in);
      } else if (!in) {
        *reinterpret_cast<uint4 *>(dst) = make_uint4(0, 0, 0, 0);
      } else {
#pragma unroll
        for (int e = 0; e < 8; e++) dst[e] = src[e];
      }
    }
  } else {
    for (int c = threadIdx.x; c < kBQ * CHUNKS; c += kThreads) {
      int r = c / CHUNKS, col = (c % CHUNKS) * 8;
      __half *dst = tile + r * LD + col;
      int row = row0 + r;
      if (vec) {
        k_cp_async16(dst, g + (row < rows ? row * stride : 0) + col, row < rows);
      } else if (row >= rows) {
        *reinterpret_cast<uint4 *>(dst) = make_uint4(0, 0, 0, 0);
      } else {
#pragma unroll
        for (int i = 0; i < 8; i++) dst[i] = g[row * stride + col + i];
      }
    }
  }
}

// 2^x in one MUFU instruction; subnormal results flush to 0, which changes no
// probability that survives rounding to half
__device__ __forceinline__ float ex2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// FlashAttention-2's pipeline: K and V tiles are double-buffered and arrive by cp.async
// while the block computes on the previous ones. Commit groups, in order: {Q, K0}, {V0},
// then per tile t: {K(t+1)} issued after S = Q K(t)^T, {V(t+1)} after O += P V(t). Waiting
// until one group is left in flight therefore means K(t) (at the top of tile t) or V(t)
// (before its product) has landed; each barrier after a wait also guarantees every warp
// is done with the buffer the next copy overwrites (tile t - 1's).
template <int D>
__global__ void __launch_bounds__(kThreads)
    flash_fwd(const __half *__restrict__ q, const __half *__restrict__ k,
              const __half *__restrict__ v, __half *__restrict__ o, view4 qv, view4 kv, view4 vv,
              view4 ov, int sq, int sk, float scale_log2, int vec, int kv_group, int causal,
              int causal_offset) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int LD = D + 8, DT = D / 8, KK = D / 16, NT = kBK / 8, TILE = kBK * LD;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __half *qs = reinterpret_cast<__half *>(smem_raw);
  __half *ks = qs + kBQ * LD, *vs = ks + 2 * TILE; // two buffers each
  const int b1 = blockIdx.z, b2 = blockIdx.y, q0 = blockIdx.x * kBQ;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const __half *qb = q + qv.off + b1 * qv.s0 + b2 * qv.s1;
  const __half *kb = k + kv.off + b1 * kv.s0 + (b2 / kv_group) * kv.s1;
  const __half *vb = v + vv.off + b1 * vv.s0 + (b2 / kv_group) * vv.s1;
  // causal: no row of this block sees a key past q0 + kBQ - 1 + causal_offset
  const int kend = causal ? max(0, min(sk, q0 + kBQ + causal_offset)) : sk;
  const int tiles = (kend + kBK - 1) / kBK;
  load_tile<D>(qs, qb, qv.s2, q0, sq, vec & 1);
  if (tiles > 0) load_tile<D>(ks, kb, kv.s2, 0, kend, vec & 2);
  k_cp_async_commit();
  if (tiles > 0) load_tile<D>(vs, vb, vv.s2, 0, kend, vec & 4);
  k_cp_async_commit();
  uint32_t qf[KK][4];
  float acc[DT][4];
#pragma unroll
  for (int t = 0; t < DT; t++) acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0.f;
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f; // rows lane/4 and lane/4 + 8
  const int r0 = q0 + warp * 16 + lane / 4, r1 = r0 + 8;
  // a warp whose 16 rows are all past sq computes nothing (it still loads and syncs)
  const bool rows_live = q0 + warp * 16 < sq;
  for (int t = 0; t < tiles; t++) {
    const int k0 = t * kBK;
    const __half *kt = ks + (t & 1) * TILE, *vt = vs + (t & 1) * TILE;
    k_cp_async_wait<1>(); // K(t) (and on tile 0 Q) has landed; V(t) may not have
    __syncthreads();
    if (t == 0 && rows_live) {
#pragma unroll
      for (int kk = 0; kk < KK; kk++)
        k_ldsm_x4(qf[kk], qs + (warp * 16 + (lane % 16)) * LD + kk * 16 + (lane / 16) * 8);
    }
    // the last tile may hold few keys: products stop at its last 16-key block
    const int n16 = (min(kBK, kend - k0) + 15) / 16;
    float s[NT][4];
#pragma unroll
    for (int nt = 0; nt < NT; nt++) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
    if (rows_live) {
#pragma unroll
      for (int nt = 0; nt < NT; nt += 2)
#pragma unroll
        for (int kk = 0; kk < KK; kk++) {
          if (nt / 2 >= n16) continue; // keys past kend: masked below
          uint32_t b[4];
          k_ldsm_x4(b, kt + (nt * 8 + (lane % 8) + (lane / 16) * 8) * LD + kk * 16 + ((lane / 8) % 2) * 8);
          k_mma16816(s[nt], qf[kk], b);
          k_mma16816(s[nt + 1], qf[kk], b + 2);
        }
    }
    if (t + 1 < tiles) load_tile<D>(ks + ((t + 1) & 1) * TILE, kb, kv.s2, k0 + kBK, kend, vec & 2);
    k_cp_async_commit();
    // a warp-uniform choice: tiles every key of which all 16 rows see skip the masks
    const bool full = k0 + kBK <= kend && (!causal || k0 + kBK - 1 <= q0 + warp * 16 + causal_offset);
    float mx0 = -INFINITY, mx1 = -INFINITY;
    if (full) {
#pragma unroll
      for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
          s[nt][j] *= scale_log2;
          s[nt][2 + j] *= scale_log2;
          mx0 = fmaxf(mx0, s[nt][j]);
          mx1 = fmaxf(mx1, s[nt][2 + j]);
        }
    } else {
#pragma unroll
      for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
          const int key = k0 + nt * 8 + (lane % 4) * 2 + j;
          const bool ok0 = key < kend && (!causal || key <= r0 + causal_offset);
          const bool ok1 = key < kend && (!causal || key <= r1 + causal_offset);
          s[nt][j] = ok0 ? s[nt][j] * scale_log2 : -INFINITY;
          s[nt][2 + j] = ok1 ? s[nt][2 + j] * scale_log2 : -INFINITY;
          mx0 = fmaxf(mx0, s[nt][j]);
          mx1 = fmaxf(mx1, s[nt][2 + j]);
        }
    }
#pragma unroll
    for (int x = 1; x < 4; x <<= 1) {
      mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, x));
      mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, x));
    }
    const float n0 = fmaxf(m0, mx0), n1 = fmaxf(m1, mx1);
    // 0 on the first tile; and while a row has met only -inf scores (its sums are 0) the
    // rescale is 0 and the exponentials shift by 0, not -inf (exp(-inf - -inf) = NaN would
    // poison a row the later keys make finite: the Softmax op's shift, softmax.cu)
    const float a0 = m0 == -INFINITY ? 0.f : exp2f(m0 - n0);
    const float a1 = m1 == -INFINITY ? 0.f : exp2f(m1 - n1);
    m0 = n0;
    m1 = n1;
    const float z0 = n0 == -INFINITY ? 0.f : n0, z1 = n1 == -INFINITY ? 0.f : n1;
    l0 *= a0;
    l1 *= a1;
#pragma unroll
    for (int d = 0; d < DT; d++) {
      acc[d][0] *= a0;
      acc[d][1] *= a0;
      acc[d][2] *= a1;
      acc[d][3] *= a1;
    }
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
      for (int j = 0; j < 2; j++) {
        s[nt][j] = ex2_ftz(s[nt][j] - z0);
        s[nt][2 + j] = ex2_ftz(s[nt][2 + j] - z1);
        l0 += s[nt][j];
        l1 += s[nt][2 + j];
      }
    k_cp_async_wait<1>(); // V(t) has landed; K(t + 1) may not have
    __syncthreads();
    if (rows_live) {
#pragma unroll
      for (int kq = 0; kq < kBK / 16; kq++) {
        if (kq >= n16) continue; // their probabilities are 0
        uint32_t pa[4] = {pack_half2(s[2 * kq][0], s[2 * kq][1]), pack_half2(s[2 * kq][2], s[2 * kq][3]),
                          pack_half2(s[2 * kq + 1][0], s[2 * kq + 1][1]),
                          pack_half2(s[2 * kq + 1][2], s[2 * kq + 1][3])};
        const int i = lane / 8;
#pragma unroll
        for (int dt = 0; dt < DT; dt += 2) {
          uint32_t b[4];
          k_ldsm_x4_trans(b, vt + (kq * 16 + (lane % 8) + (i % 2) * 8) * LD + dt * 8 + (i / 2) * 8);
          k_mma16816(acc[dt], pa, b);
          k_mma16816(acc[dt + 1], pa, b + 2);
        }
      }
    }
    if (t + 1 < tiles) load_tile<D>(vs + ((t + 1) & 1) * TILE, vb, vv.s2, k0 + kBK, kend, vec & 4);
    k_cp_async_commit();
  }
  k_cp_async_wait<0>(); // nothing may be in flight when the block ends
#pragma unroll
  for (int x = 1; x < 4; x <<= 1) {
    l0 += __shfl_xor_sync(0xffffffffu, l0, x);
    l1 += __shfl_xor_sync(0xffffffffu, l1, x);
  }
  // a row that saw no key (causal, offset below its index) is 0; a NaN sum stays NaN
  const float i0 = l0 == 0.f ? 0.f : 1.f / l0, i1 = l1 == 0.f ? 0.f : 1.f / l1;
  __half *obase = o + ov.off + b1 * ov.s0 + b2 * ov.s1;
#pragma unroll
  for (int t = 0; t < DT; t++) {
    const int col = t * 8 + (lane % 4) * 2;
    if (r0 < sq) {
      __half *p = obase + r0 * ov.s2 + col;
      if (vec & 8) {
        *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(acc[t][0] * i0, acc[t][1] * i0);
      } else {
        p[0] = __float2half_rn(acc[t][0] * i0);
        p[1] = __float2half_rn(acc[t][1] * i0);
      }
    }
    if (r1 < sq) {
      __half *p = obase + r1 * ov.s2 + col;
      if (vec & 8) {
        *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(acc[t][2] * i1, acc[t][3] * i1);
      } else {
        p[0] = __float2half_rn(acc[t][2] * i1);
        p[1] = __float2half_rn(acc[t][3] * i1);
      }
    }
  }
#endif // sm_80+: k_attention_prepare sees which code was loaded and says so
}

template <int D>
size_t flash_smem() {
  return (size_t)(kBQ + 4 * kBK) * (D + 8) * sizeof(__half); // Q, two K and two V tiles
}

// One warp per query row, in float: keys 32 at a time (a lane each) for the scores and the
// online softmax, then the lanes split the output columns (up to 8 each, Dv <= 256).
template <typename T>
__global__ void attn_rowwise(const T *__restrict__ q, const T *__restrict__ k,
                             const T *__restrict__ v, T *__restrict__ o, view4 qv, view4 kv,
                             view4 vv, view4 ov, int64_t b2n, int sq, int sk, int d, int dv,
                             float scale, int64_t rows, int kv_group, int causal,
                             int causal_offset) {
  const int lane = threadIdx.x % 32;
  const int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= rows) return;
  const int64_t i = row % sq, b = row / sq, b2 = b % b2n, b1 = b / b2n;
  const T *qr = q + qv.off + b1 * qv.s0 + b2 * qv.s1 + i * qv.s2;
  const T *kb = k + kv.off + b1 * kv.s0 + (b2 / kv_group) * kv.s1;
  const T *vb = v + vv.off + b1 * vv.s0 + (b2 / kv_group) * vv.s1;
  // causal: keys past i + causal_offset are masked, and so never read
  const int kend = causal ? (int)max((int64_t)0, min((int64_t)sk, i + causal_offset + 1)) : sk;
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float m = -INFINITY, l = 0.f;
  for (int c = 0; c < kend; c += 32) {
    const int j = c + lane;
    float sc = -INFINITY;
    if (j < kend) {
      const T *kr = kb + j * kv.s2;
      float dot = 0.f;
      for (int x = 0; x < d; x++) dot += k_to_f(qr[x]) * k_to_f(kr[x]);
      sc = dot * scale;
    }
    float mx = sc;
    for (int x = 16; x > 0; x >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, x));
    // the -inf guards of flash_fwd: a row of only -inf scores so far keeps sums 0
    const float nm = fmaxf(m, mx), a = m == -INFINITY ? 0.f : expf(m - nm);
    const float zs = nm == -INFINITY ? 0.f : nm;
    const float p = j < kend ? expf(sc - zs) : 0.f;
    float ps = p;
    for (int x = 16; x > 0; x >>= 1) ps += __shfl_xor_sync(0xffffffffu, ps, x);
    l = l * a + ps;
    m = nm;
#pragma unroll
    for (int t = 0; t < 8; t++) acc[t] *= a;
    const int n = kend - c < 32 ? kend - c : 32;
    for (int t = 0; t < n; t++) {
      const float pt = __shfl_sync(0xffffffffu, p, t);
      const T *vr = vb + (c + t) * vv.s2;
#pragma unroll
      for (int u = 0; u < 8; u++)
        if (lane + 32 * u < dv) acc[u] += pt * k_to_f(vr[lane + 32 * u]);
    }
  }
  T *orow = o + ov.off + b1 * ov.s0 + b2 * ov.s1 + i * ov.s2;
  // a row that saw no key (causal, offset below its index) is 0; a NaN sum stays NaN
  const float inv = l == 0.f ? 0.f : 1.f / l;
#pragma unroll
  for (int u = 0; u < 8; u++)
    if (lane + 32 * u < dv) orow[lane + 32 * u] = k_from_f<T>(acc[u] * inv);
}

bool aligned8(const k_attn_view *w) {
  return w->offset % 8 == 0 && w->strides[0] % 8 == 0 && w->strides[1] % 8 == 0 &&
         w->strides[2] % 8 == 0;
}

} // namespace

extern "C" int k_attention_tensor_cores(int dtype, int64_t d, int64_t dv) {
  return dtype == K_F16 && d == dv && d % 16 == 0 && d >= 16 && d <= 128;
}

extern "C" cudaError_t k_attention_prepare(int *tensor_cores) {
  // mma.sync m16n8k16 needs sm_80: code built for an older target (or its PTX, compiled
  // by the driver) has an empty flash kernel, so it must not run
  cudaFuncAttributes fa;
  cudaError_t e = cudaFuncGetAttributes(&fa, flash_fwd<64>);
  *tensor_cores = e == cudaSuccess && fa.binaryVersion >= 80;
  if (e != cudaSuccess || !*tensor_cores) return e;
#define SET_SMEM(D)                                                                         \
  if (e == cudaSuccess)                                                                     \
    e = cudaFuncSetAttribute(flash_fwd<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,     \
                             (int)flash_smem<D>());
  SET_SMEM(16) SET_SMEM(32) SET_SMEM(48) SET_SMEM(64) SET_SMEM(80) SET_SMEM(96) SET_SMEM(112)
  SET_SMEM(128)
#undef SET_SMEM
  return e;
}

extern "C" cudaError_t k_attention(int dtype, const void *q, const void *k, const void *v, void *o,
                                   const k_attn_view *qv, const k_attn_view *kv,
                                   const k_attn_view *vv, const k_attn_view *ov, float scale,
                                   int64_t kv_group, int causal, int64_t causal_offset,
                                   int tensor_cores, cudaStream_t stream) {
  const int64_t b1 = qv->dims[0], b2 = qv->dims[1], sq = qv->dims[2], sk = kv->dims[2];
  const int64_t d = qv->dims[3], dv = vv->dims[3];
  if (qv->strides[3] != 1 || kv->strides[3] != 1 || vv->strides[3] != 1 || ov->strides[3] != 1 ||
      sq > INT32_MAX || sk > INT32_MAX || dv > 256 || kv_group < 1 || kv_group > INT32_MAX ||
      causal_offset > INT32_MAX || causal_offset < -(int64_t)INT32_MAX)
    return cudaErrorInvalidValue;
  if (b1 == 0 || b2 == 0 || sq == 0) return cudaSuccess;
  const view4 q4 = to_view4(qv), k4 = to_view4(kv), v4 = to_view4(vv), o4 = to_view4(ov);
  if (tensor_cores && k_attention_tensor_cores(dtype, d, dv) && b1 <= 65535 && b2 <= 65535 &&
      sk > 0) {
    int vec = (aligned8(qv) ? 1 : 0) | (aligned8(kv) ? 2 : 0) | (aligned8(vv) ? 4 : 0) |
              (ov->offset % 2 == 0 && ov->strides[0] % 2 == 0 && ov->strides[1] % 2 == 0 &&
                       ov->strides[2] % 2 == 0
                   ? 8
                   : 0);
    dim3 grid((unsigned)((sq + kBQ - 1) / kBQ), (unsigned)b2, (unsigned)b1);
    const float sl2 = scale * 1.4426950408889634f;
    const __half *qh = (const __half *)q, *kh = (const __half *)k, *vh = (const __half *)v;
    __half *oh = (__half *)o;
    switch (d) {
#define CASE(D)                                                                                 \
  case D:                                                                                       \
    flash_fwd<D><<<grid, kThreads, flash_smem<D>(), stream>>>(qh, kh, vh, oh, q4, k4, v4, o4,   \
                                                              (int)sq, (int)sk, sl2, vec,       \
                                                              (int)kv_group, causal,            \
                                                              (int)causal_offset);              \
    break;
      CASE(16) CASE(32) CASE(48) CASE(64) CASE(80) CASE(96) CASE(112) CASE(128)
#undef CASE
      default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
  }
  const int64_t rows = b1 * b2 * sq;
  const int warps = 4;
  const int64_t blocks = (rows + warps - 1) / warps;
  if (blocks > INT32_MAX) return cudaErrorInvalidValue;
  if (dtype == K_F32)
    attn_rowwise<float><<<(unsigned)blocks, 32 * warps, 0, stream>>>(
        (const float *)q, (const float *)k, (const float *)v, (float *)o, q4, k4, v4, o4, b2,
        (int)sq, (int)sk, (int)d, (int)dv, scale, rows, (int)kv_group, causal, (int)causal_offset);
  else if (dtype == K_F16)
    attn_rowwise<__half><<<(unsigned)blocks, 32 * warps, 0, stream>>>(
        (const __half *)q, (const __half *)k, (const __half *)v, (__half *)o, q4, k4, v4, o4, b2,
        (int)sq, (int)sk, (int)d, (int)dv, scale, rows, (int)kv_group, causal, (int)causal_offset);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}
