// ew_chain.cu: an elementwise chain in one pass (ew_chain.h). Each thread takes one
// 16-byte vector of the innermost dim per row when every input either walks that dim
// contiguously or broadcasts over it (then the step switch and the index arithmetic are
// paid once per 8 halves or 4 floats), else one element. The accumulators stay in
// registers: a chain has one per element, never an indexed register file.
#include "ew_chain.h"
#include "k_common.cuh"

#include <math.h>

namespace {

// Operands that do not change along the rows (every stride but the innermost 0: a
// BatchNorm's per-channel scale and shift, a bias) are loaded once per thread, before
// its rows: at most this many inputs.
#define EWC_HOISTED 2
#define EWC_ROWS_PER_THREAD 8 // rows a thread walks (about)
#define EWC_MIN_BLOCKS 2048   // blocks at least, where the rows allow

struct chain_args {
  const void *in[EWC_MAX_INPUTS];
  void *y;
  k_ewc_geom g;
  ewc_step steps[EWC_MAX_STEPS];
  int n_steps;
  int hoisted[EWC_HOISTED];  // the input held in each slot, or -1
  int slot[EWC_MAX_INPUTS];  // each input's slot, or -1
  // 1: the steps are acc * h0 + h1 [then ReLU when affine_relu] - a BatchNorm (+ ReLU)
  // over per-channel scale and shift, the commonest chain - run without the step loop
  int affine, affine_relu;
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

// The kernel walks the output as rows x columns: the innermost dim is the columns, the
// others (flattened) the rows. A thread keeps one column vector and strides over rows, so
// what depends on the column alone is worked out once per thread, not once per vector:
// the column's offset into each input and, for a concatenation, which part holds it.
// Only the row's offsets are per vector, and for the usual rank-2 geometry (NHWC rows x
// channels) they are a multiply each: no division. The coordinates stay in registers
// (loops over EWC_MAX_RANK unrolled, guarded by the rank): a runtime-indexed array would
// live in local memory.

// Input k's offset of the row with leading coordinates coord (dims 0 .. rank-2).
__device__ __forceinline__ int64_t row_offset(const chain_args &a, int k, const int64_t *coord) {
  int64_t off = 0;
#pragma unroll
  for (int d = 0; d < EWC_MAX_RANK - 1; d++)
    if (d < a.g.rank - 1) off += coord[d] * a.g.strides[k][d];
  return off;
}

// Operand k's VEC values at column c of the row: a contiguous run or one broadcast value.
template <typename T, int VEC>
__device__ __forceinline__ void operand(const chain_args &a, int k, int64_t c, const int64_t *coord,
                                        float *v) {
  const T *p = static_cast<const T *>(a.in[k]);
  const int64_t cs = a.g.strides[k][a.g.rank - 1];
  const int64_t off = a.g.offset[k] + c * cs + row_offset(a, k, coord);
  if (VEC == 1 || cs == 1) {
    vec_io<T, VEC>::load(p + off, v);
  } else {
    const float s = k_to_f(p[off]);
#pragma unroll
    for (int e = 0; e < VEC; e++) v[e] = s;
  }
}

// acc = acc op v (or v op acc), the op chosen once per vector, not once per element
template <int VEC>
__device__ __forceinline__ void apply_binary(int op, bool swap, float *acc, const float *v) {
  float l[VEC], r[VEC];
#pragma unroll
  for (int e = 0; e < VEC; e++) {
    l[e] = swap ? v[e] : acc[e];
    r[e] = swap ? acc[e] : v[e];
  }
  switch (op) {
#define EWC_EACH(expr) _Pragma("unroll") for (int e = 0; e < VEC; e++) acc[e] = (expr); break
    case EWC_ADD: EWC_EACH(l[e] + r[e]);
    case EWC_SUB: EWC_EACH(l[e] - r[e]);
    case EWC_MUL: EWC_EACH(l[e] * r[e]);
    case EWC_DIV: EWC_EACH(l[e] / r[e]);
    default: EWC_EACH(binary(op, l[e], r[e]));
#undef EWC_EACH
  }
}

// acc = op(acc), the op chosen once per vector: a switch per element was VEC copies of
// the whole switch, most of the kernel's machine code
template <int VEC>
__device__ __forceinline__ void apply_unary(int op, float p0, float p1, float *acc) {
  switch (op) {
#define EWC_UNARY(k) \
  case k: _Pragma("unroll") for (int e = 0; e < VEC; e++) acc[e] = unary(k, acc[e], p0, p1); break;
    EWC_UNARY(EWC_RELU)
    EWC_UNARY(EWC_SIGMOID)
    EWC_UNARY(EWC_TANH)
    EWC_UNARY(EWC_EXP)
    EWC_UNARY(EWC_LOG)
    EWC_UNARY(EWC_SQRT)
    EWC_UNARY(EWC_ERF)
    EWC_UNARY(EWC_NEG)
    EWC_UNARY(EWC_ABS)
    EWC_UNARY(EWC_RECIPROCAL)
    EWC_UNARY(EWC_GELU)
    EWC_UNARY(EWC_GELU_TANH)
    EWC_UNARY(EWC_SWISH)
    EWC_UNARY(EWC_HARD_SWISH)
    EWC_UNARY(EWC_HARD_SIGMOID)
    EWC_UNARY(EWC_LEAKY_RELU)
    EWC_UNARY(EWC_CLIP)
    EWC_UNARY(EWC_SOFTPLUS)
#undef EWC_UNARY
    default: // an op unary() gains later
#pragma unroll
      for (int e = 0; e < VEC; e++) acc[e] = unary(op, acc[e], p0, p1);
  }
}

// The part of the concatenation holding column c: the first whose end exceeds it.
__device__ __forceinline__ int part_search(const chain_args &a, int64_t c) {
  int lo = 0, hi = a.g.n_parts - 1;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (c >= a.g.part_end[mid]) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// blockDim.x threads over column vectors, blockDim.y over rows (grid-stride in y).
// I: the type dividing the row index into coordinates, 32-bit where it fits.
template <typename T, int VEC, typename I, bool CONCAT>
__global__ void chain_kernel(const chain_args a, int64_t cvecs, int64_t rows) {
  const int64_t cv = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (cv >= cvecs) return;
  const int last = a.g.rank - 1;
  const int64_t cols = a.g.dims[last], c = cv * VEC;
  const T *part = nullptr; // the concatenation: this column in row 0 of its part, and
  int64_t part_width = 0;  // that part's row stride
  if (CONCAT) {
    const int k = part_search(a, c);
    const int64_t start = k ? a.g.part_end[k - 1] : 0;
    part_width = a.g.part_end[k] - start;
    part = static_cast<const T *>(a.g.part[k]) + (c - start);
  }
  float h0[VEC], h1[VEC]; // the hoisted operands: any row's values (row 0's)
  {
    const int64_t zero[EWC_MAX_RANK - 1] = {0};
#pragma unroll
    for (int e = 0; e < VEC; e++) h0[e] = h1[e] = 0.f;
    if (a.hoisted[0] >= 0) operand<T, VEC>(a, a.hoisted[0], c, zero, h0);
    if (a.hoisted[1] >= 0) operand<T, VEC>(a, a.hoisted[1], c, zero, h1);
  }
  for (int64_t row = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; row < rows;
       row += (int64_t)gridDim.y * blockDim.y) {
    int64_t coord[EWC_MAX_RANK - 1]; // the row's leading coordinates
    I rest = (I)row;
#pragma unroll
    for (int d = EWC_MAX_RANK - 2; d >= 0; d--) {
      coord[d] = 0;
      if (d < last) {
        if (d == 0) {
          coord[0] = rest;
        } else {
          const I q = rest / (I)a.g.dims[d];
          coord[d] = rest - q * (I)a.g.dims[d];
          rest = q;
        }
      }
    }
    float acc[VEC], v[VEC];
    if (CONCAT)
      vec_io<T, VEC>::load(part + row * part_width, acc);
    else
      operand<T, VEC>(a, 0, c, coord, acc);
    if (a.affine) { // the step loop's switches were most of DenseNet's chains' instructions
#pragma unroll
      for (int e = 0; e < VEC; e++) {
        acc[e] = acc[e] * h0[e] + h1[e];
        if (a.affine_relu) acc[e] = K_NAN_RELU(acc[e]);
      }
      vec_io<T, VEC>::store(static_cast<T *>(a.y) + row * cols + c, acc);
      continue;
    }
    for (int s = 0; s < a.n_steps; s++) {
      const ewc_step st = a.steps[s];
      if (st.op < EWC_BINARY_END) {
        const int sl = st.operand == EWC_IMMEDIATE ? -1 : a.slot[st.operand];
        if (st.operand == EWC_IMMEDIATE) {
#pragma unroll
          for (int e = 0; e < VEC; e++) v[e] = st.p0;
        } else if (sl >= 0) {
#pragma unroll
          for (int e = 0; e < VEC; e++) v[e] = sl == 0 ? h0[e] : h1[e];
        } else {
          operand<T, VEC>(a, st.operand, c, coord, v);
        }
        apply_binary<VEC>(st.op, st.swap, acc, v);
      } else {
        apply_unary<VEC>(st.op, st.p0, st.p1, acc);
      }
    }
    vec_io<T, VEC>::store(static_cast<T *>(a.y) + row * cols + c, acc);
  }
}

template <typename T, int VEC, bool CONCAT>
cudaError_t chain_go_c(const chain_args &a, int64_t n, cudaStream_t s) {
  const int64_t cols = a.g.dims[a.g.rank - 1], cvecs = cols / VEC, rows = n / cols;
  // a block of 256 threads: as many column vectors as there are (up to 256) times rows;
  // a warp then spans several short rows, which for contiguous inputs is one run
  const int bx = (int)(cvecs < 256 ? cvecs : 256), by = 256 / bx;
  const int64_t gx = (cvecs + bx - 1) / bx, gy_need = (rows + by - 1) / by;
  if (gx > 0x7fffffff) return cudaErrorInvalidValue;
  // Several rows a thread, so that its column's setup (the concatenation's part, the
  // hoisted operands) is paid once for them: a row a thread left DenseNet's chains
  // issue-bound (ncu on the H200: 72% of the SM's issue rate, 31% of DRAM's). Still at
  // least EWC_MIN_BLOCKS blocks where there are that many rows, to fill the device.
  int64_t gy = (gy_need + EWC_ROWS_PER_THREAD - 1) / EWC_ROWS_PER_THREAD;
  if (gy < EWC_MIN_BLOCKS) gy = gy_need < EWC_MIN_BLOCKS ? gy_need : EWC_MIN_BLOCKS;
  if (gy > 65535) gy = 65535;
  const dim3 grid((unsigned)gx, (unsigned)gy), block(bx, by);
  int64_t n_arg = cvecs, rows_arg = rows;
  void *args[3] = {(void *)&a, (void *)&n_arg, (void *)&rows_arg};
  const void *fn = rows < ((int64_t)1 << 31) ? (const void *)chain_kernel<T, VEC, uint32_t, CONCAT>
                                             : (const void *)chain_kernel<T, VEC, int64_t, CONCAT>;
  return cudaLaunchKernel(fn, grid, block, args, 0, s);
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

// Picks the binary steps' inputs that are the same for every row (no stride but the
// innermost), the first EWC_HOISTED of them, for the kernel to load once per thread.
void hoist(chain_args *a) {
  const int last = a->g.rank - 1;
  for (int k = 0; k < EWC_MAX_INPUTS; k++) a->slot[k] = -1;
  for (int h = 0; h < EWC_HOISTED; h++) a->hoisted[h] = -1;
  int n = 0;
  for (int s = 0; s < a->n_steps && n < EWC_HOISTED; s++) {
    const int k = a->steps[s].operand;
    if (a->steps[s].op >= EWC_BINARY_END || k == EWC_IMMEDIATE || k < 1 || k >= a->g.n_in ||
        a->slot[k] >= 0)
      continue;
    bool rows_alike = true;
    for (int d = 0; d < last; d++) rows_alike = rows_alike && a->g.strides[k][d] == 0;
    if (!rows_alike) continue;
    a->slot[k] = n;
    a->hoisted[n++] = k;
  }
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
  hoist(&a);
  const bool mul0 = n_steps >= 2 && steps[0].op == EWC_MUL && steps[0].operand != EWC_IMMEDIATE &&
                    steps[0].operand >= 0 && steps[0].operand < g->n_in &&
                    a.slot[steps[0].operand] == 0;
  const bool add1 = n_steps >= 2 && steps[1].op == EWC_ADD && steps[1].operand != EWC_IMMEDIATE &&
                    steps[1].operand >= 0 && steps[1].operand < g->n_in &&
                    a.slot[steps[1].operand] == 1;
  a.affine_relu = n_steps == 3 && steps[2].op == EWC_RELU;
  a.affine = mul0 && add1 && (n_steps == 2 || a.affine_relu);
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
