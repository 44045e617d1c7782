// ew_chain.cu: an elementwise chain in one pass (ew_chain.h). Each thread takes one
// 16-byte vector of the innermost dim when every input either walks that dim
// contiguously or broadcasts over it (then the step switch and the index arithmetic are
// paid once per 8 halves or 4 floats), else one element. The accumulators stay in
// registers: a chain has one per element, never an indexed register file.
#include "ew_chain.h"
#include "k_common.cuh"

#include <math.h>

namespace {

struct chain_args {
  const void *in[EWC_MAX_INPUTS];
  void *y;
  k_ewc_geom g;
  ewc_step steps[EWC_MAX_STEPS];
  int n_steps;
};

__device__ __forceinline__ float binary(int op, float a, float b) {
  switch (op) {
    case EWC_ADD: return a + b;
    case EWC_SUB: return a - b;
    case EWC_MUL: return a * b;
    case EWC_DIV: return a / b;
    case EWC_MAX: return K_NAN_MAX(a, b); // NaN kept, as the Max op (k_nan.h)
    case EWC_MIN: return K_NAN_MIN(a, b);
    case EWC_POW: return powf(a, b);
    default: return a;
  }
}

__device__ __forceinline__ float unary(int op, float v, float p0, float p1) {
  switch (op) {
    case EWC_RELU: return K_NAN_RELU(v);
    case EWC_SIGMOID: return 1.f / (1.f + expf(-v));
    case EWC_TANH: return tanhf(v);
    case EWC_EXP: return expf(v);
    case EWC_LOG: return logf(v);
    case EWC_SQRT: return sqrtf(v);
    case EWC_ERF: return erff(v);
    case EWC_NEG: return -v;
    case EWC_ABS: return fabsf(v);
    case EWC_RECIPROCAL: return 1.f / v;
    case EWC_GELU: return 0.5f * v * (1.f + erff(v * 0.70710678118654752440f));
    case EWC_GELU_TANH:
      return 0.5f * v * (1.f + tanhf(0.79788456080286535588f * (v + 0.044715f * v * v * v)));
    case EWC_SWISH: return v / (1.f + expf(-p0 * v));
    case EWC_HARD_SWISH: {
      const float h = v * (1.f / 6.f) + 0.5f;
      return v * K_NAN_CLAMP(h, 0.f, 1.f);
    }
    case EWC_HARD_SIGMOID: {
      const float h = p0 * v + p1;
      return K_NAN_CLAMP(h, 0.f, 1.f);
    }
    case EWC_LEAKY_RELU: return v < 0.f ? p0 * v : v;
    case EWC_CLIP: return K_NAN_CLAMP(v, p0, p1);
    case EWC_SOFTPLUS: return v > 20.f ? v : log1pf(expf(v));
    default: return v;
  }
}

template <typename T, int VEC> struct vec_io;
template <typename T> struct vec_io<T, 1> {
  static __device__ __forceinline__ void load(const T *p, float *f) { f[0] = k_to_f(p[0]); }
  static __device__ __forceinline__ void store(T *p, const float *f) { p[0] = k_from_f<T>(f[0]); }
};
template <> struct vec_io<__half, 8> {
  static __device__ __forceinline__ void load(const __half *p, float *f) {
    k_half8_unpack(*reinterpret_cast<const uint4 *>(p), f);
  }
  static __device__ __forceinline__ void store(__half *p, const float *f) {
    *reinterpret_cast<uint4 *>(p) = k_half8_pack(f);
  }
};
template <> struct vec_io<float, 4> {
  static __device__ __forceinline__ void load(const float *p, float *f) {
    const float4 v = *reinterpret_cast<const float4 *>(p);
    f[0] = v.x; f[1] = v.y; f[2] = v.z; f[3] = v.w;
  }
  static __device__ __forceinline__ void store(float *p, const float *f) {
    *reinterpret_cast<float4 *>(p) = make_float4(f[0], f[1], f[2], f[3]);
  }
};

// Operand k of this vector: VEC values, from a contiguous run or one broadcast value.
template <typename T, int VEC>
__device__ __forceinline__ void operand(const chain_args &a, int k, const int64_t *coord, float *v) {
  const T *p = static_cast<const T *>(a.in[k]);
  int64_t off = a.g.offset[k];
  for (int d = 0; d < a.g.rank; d++) off += coord[d] * a.g.strides[k][d];
  if (VEC == 1 || a.g.strides[k][a.g.rank - 1] == 1) {
    vec_io<T, VEC>::load(p + off, v);
  } else {
    const float s = k_to_f(p[off]);
#pragma unroll
    for (int e = 0; e < VEC; e++) v[e] = s;
  }
}

// Operand 0 as a concatenation, from the block's shared copy of the parts (concat_parts):
// the VEC values at column c of row `row`, from the part holding that column (a vector
// never straddles two parts: vectorizable() checks). The part comes from the table of
// vector columns where it fits, else from a binary search over the part ends; both in
// shared memory, where the threads of a warp may read different parts without the
// serialization that divergent reads of kernel parameters cost.
#define EWC_PART_TABLE 4096 /* vector columns (C / VEC) the table covers */
struct concat_parts {
  const void *ptr[EWC_MAX_PARTS];
  int64_t start[EWC_MAX_PARTS], width[EWC_MAX_PARTS];
  int64_t end[EWC_MAX_PARTS];
  unsigned char part_of[EWC_PART_TABLE];
};

__device__ __forceinline__ int part_search(const concat_parts &p, int n_parts, int64_t c) {
  int lo = 0, hi = n_parts - 1; // the first part whose end exceeds c
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (c >= p.end[mid]) lo = mid + 1; else hi = mid;
  }
  return lo;
}

template <int VEC>
__device__ void concat_parts_load(const chain_args &a, concat_parts &p) {
  const int n = a.g.n_parts;
  for (int k = threadIdx.x; k < n; k += blockDim.x) {
    p.ptr[k] = a.g.part[k];
    p.end[k] = a.g.part_end[k];
    p.start[k] = k ? a.g.part_end[k - 1] : 0;
    p.width[k] = a.g.part_end[k] - p.start[k];
  }
  __syncthreads();
  const int64_t cvecs = a.g.dims[a.g.rank - 1] / VEC;
  if (cvecs <= EWC_PART_TABLE)
    for (int64_t cv = threadIdx.x; cv < cvecs; cv += blockDim.x)
      p.part_of[cv] = (unsigned char)part_search(p, n, cv * VEC);
  __syncthreads();
}

template <typename T, int VEC>
__device__ __forceinline__ void concat_operand(const chain_args &a, const concat_parts &p,
                                               int64_t row, int64_t c, float *v) {
  const int64_t cvecs = a.g.dims[a.g.rank - 1] / VEC;
  const int k = cvecs <= EWC_PART_TABLE ? p.part_of[c / VEC] : part_search(p, a.g.n_parts, c);
  vec_io<T, VEC>::load(static_cast<const T *>(p.ptr[k]) + row * p.width[k] + (c - p.start[k]), v);
}

template <typename T, int VEC, typename I, bool CONCAT>
__device__ __forceinline__ void chain_loop(const chain_args &a, int64_t n_vec,
                                           const concat_parts *parts);

// I: the index type, 32-bit where every offset fits (64-bit division costs ten times more)
template <typename T, int VEC, typename I, bool CONCAT>
__global__ void chain_kernel(const chain_args a, int64_t n_vec) {
  if constexpr (CONCAT) {
    __shared__ concat_parts parts; // only the concatenation's kernels take the 6 KB
    concat_parts_load<VEC>(a, parts);
    chain_loop<T, VEC, I, true>(a, n_vec, &parts);
  } else {
    chain_loop<T, VEC, I, false>(a, n_vec, nullptr);
  }
}

template <typename T, int VEC, typename I, bool CONCAT>
__device__ __forceinline__ void chain_loop(const chain_args &a, int64_t n_vec,
                                           const concat_parts *parts) {
  for (int64_t vi = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; vi < n_vec;
       vi += (int64_t)gridDim.x * blockDim.x) {
    // coordinates of the vector's first element (the innermost dim advances by VEC)
    int64_t coord[EWC_MAX_RANK];
    I rest = (I)(vi * VEC), row = 0;
    const int64_t yoff = vi * VEC;
    for (int d = a.g.rank - 1; d >= 0; d--) {
      const I q = rest / (I)a.g.dims[d];
      coord[d] = rest - q * (I)a.g.dims[d];
      rest = q;
      if (d == a.g.rank - 1) row = q;
    }
    float acc[VEC], v[VEC];
    if (CONCAT)
      concat_operand<T, VEC>(a, *parts, (int64_t)row, coord[a.g.rank - 1], acc);
    else
      operand<T, VEC>(a, 0, coord, acc);
    for (int s = 0; s < a.n_steps; s++) {
      const ewc_step st = a.steps[s];
      if (st.op < EWC_BINARY_END) {
        if (st.operand == EWC_IMMEDIATE) {
#pragma unroll
          for (int e = 0; e < VEC; e++) v[e] = st.p0;
        } else {
          operand<T, VEC>(a, st.operand, coord, v);
        }
#pragma unroll
        for (int e = 0; e < VEC; e++)
          acc[e] = st.swap ? binary(st.op, v[e], acc[e]) : binary(st.op, acc[e], v[e]);
      } else {
#pragma unroll
        for (int e = 0; e < VEC; e++) acc[e] = unary(st.op, acc[e], st.p0, st.p1);
      }
    }
    vec_io<T, VEC>::store(static_cast<T *>(a.y) + yoff, acc);
  }
}

template <typename T, int VEC, bool CONCAT>
cudaError_t chain_go_c(const chain_args &a, int64_t n, cudaStream_t s) {
  const int64_t n_vec = n / VEC;
  unsigned blocks = k_blocks(n_vec, 256);
  // a concatenation's blocks each build the part table first: fewer blocks, each
  // striding over more vectors, pay for it once per several vectors a thread
  if (CONCAT && blocks > 2048) blocks = 2048;
  if (n < ((int64_t)1 << 31))
    chain_kernel<T, VEC, uint32_t, CONCAT><<<blocks, 256, 0, s>>>(a, n_vec);
  else
    chain_kernel<T, VEC, int64_t, CONCAT><<<blocks, 256, 0, s>>>(a, n_vec);
  return cudaGetLastError();
}

template <typename T, int VEC>
cudaError_t chain_go(const chain_args &a, int64_t n, cudaStream_t s) {
  return a.g.n_parts > 0 ? chain_go_c<T, VEC, true>(a, n, s) : chain_go_c<T, VEC, false>(a, n, s);
}

// Whether every input walks the innermost dim contiguously or broadcasts over it, the
// innermost dim holds whole vectors, and every contiguous input's vectors are aligned.
bool vectorizable(const k_ewc_geom *g, const void *const *in, const void *y, int vec, size_t es) {
  const int last = g->rank - 1;
  if (g->dims[last] % vec) return false;
  if ((uintptr_t)y % 16) return false;
  for (int k = 0; k < g->n_parts; k++) {
    const int64_t width = g->part_end[k] - (k ? g->part_end[k - 1] : 0);
    if (width % vec || (uintptr_t)g->part[k] % 16) return false;
  }
  for (int k = g->n_parts > 0 ? 1 : 0; k < g->n_in; k++) {
    const int64_t ls = g->strides[k][last];
    if (ls != 0 && ls != 1) return false;
    if (ls == 1) {
      if ((uintptr_t)in[k] % 16 || (g->offset[k] * (int64_t)es) % 16) return false;
      for (int d = 0; d < last; d++)
        if ((g->strides[k][d] * (int64_t)es) % 16) return false;
    }
  }
  return true;
}

} // namespace

extern "C" cudaError_t k_ew_chain(int dtype, const void *const *in, void *y, const k_ewc_geom *g,
                                  const ewc_step *steps, int n_steps, cudaStream_t stream) {
  if (g->rank < 1 || g->rank > EWC_MAX_RANK || g->n_in < 1 || g->n_in > EWC_MAX_INPUTS ||
      n_steps < 0 || n_steps > EWC_MAX_STEPS || g->n_parts < 0 || g->n_parts > EWC_MAX_PARTS)
    return cudaErrorInvalidValue;
  int64_t n = 1;
  for (int d = 0; d < g->rank; d++) n *= g->dims[d];
  if (n == 0) return cudaSuccess;
  chain_args a;
  for (int k = 0; k < g->n_in; k++) a.in[k] = in[k];
  a.y = y;
  a.g = *g;
  for (int s = 0; s < n_steps; s++) a.steps[s] = steps[s];
  a.n_steps = n_steps;
  switch (dtype) {
    case K_F16:
      return vectorizable(g, in, y, 8, 2) ? chain_go<__half, 8>(a, n, stream)
                                          : chain_go<__half, 1>(a, n, stream);
    case K_F32:
      return vectorizable(g, in, y, 4, 4) ? chain_go<float, 4>(a, n, stream)
                                          : chain_go<float, 1>(a, n, stream);
    case K_BF16: return chain_go<__nv_bfloat16, 1>(a, n, stream);
    default: return cudaErrorInvalidValue;
  }
}
