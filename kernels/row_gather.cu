// row_gather.cu: RowGather (row_gather.h). A block takes a tile of rows: it copies the
// tile of every input into shared memory (the tile is contiguous in each input: 16-byte
// words where aligned), then writes the tile of every output, contiguous too, each
// element found through the table (kept in shared memory beside the rows). Each element
// is read from DRAM once and written once, whatever the group of Concats, shuffles and
// slices it stands for. Rows too long for shared memory take the direct kernel: one
// thread per output element, reading the input where it lies.
#include "k_common.cuh"
#include "row_gather.h"

#define RG_THREADS 256
#define RG_SMEM_BYTES (40 * 1024) // under the 48 KB a launch gets without opting in
#define RG_ROW_ALIGN 16           // tiles of a multiple of 16 rows start on 16 bytes

struct rg_dev {
  k_row_gather a;
  int rows_per_block;
  int64_t seg[K_ROW_GATHER_MAX]; // each input's first element in the shared tile
  int64_t tile_elems;            // elements of all input tiles
  bool words;                    // every tile start (global and shared) on 16 bytes
};

// count elements from src to dst, in 16-byte words when both sides allow it
template <typename T>
__device__ __forceinline__ void rg_copy_in(T *dst, const T *src, int64_t count, bool words) {
  if (words) {
    int64_t n_words = count * (int64_t)sizeof(T) / 16;
    const uint4 *s = reinterpret_cast<const uint4 *>(src);
    uint4 *d = reinterpret_cast<uint4 *>(dst);
    for (int64_t i = threadIdx.x; i < n_words; i += blockDim.x) d[i] = s[i];
    for (int64_t i = n_words * (16 / (int64_t)sizeof(T)) + threadIdx.x; i < count; i += blockDim.x)
      dst[i] = src[i];
  } else {
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x) dst[i] = src[i];
  }
}

template <typename T> __global__ void __launch_bounds__(RG_THREADS) rg_tile_kernel(const rg_dev g) {
  extern __shared__ uint4 rg_smem[];
  T *tile = reinterpret_cast<T *>(rg_smem);
  uint32_t *tab = reinterpret_cast<uint32_t *>(tile + g.tile_elems);
  const k_row_gather &a = g.a;
  for (int64_t i = threadIdx.x; i < a.n_table; i += blockDim.x) tab[i] = a.table[i];
  for (int64_t r0 = (int64_t)blockIdx.x * g.rows_per_block; r0 < a.rows;
       r0 += (int64_t)gridDim.x * g.rows_per_block) {
    const int64_t nr = a.rows - r0 < g.rows_per_block ? a.rows - r0 : g.rows_per_block;
    __syncthreads(); // the previous tile is written out (and the table is in)
    for (int k = 0; k < a.n_in; k++)
      rg_copy_in<T>(tile + g.seg[k], static_cast<const T *>(a.in[k]) + r0 * a.in_row[k],
                    nr * a.in_row[k], g.words);
    __syncthreads();
    for (int j = 0; j < a.n_out; j++) {
      // 32-bit index math: the table (every output row) fits in shared memory, so a
      // tile of an output has fewer than 2^31 elements
      const int row = (int)a.out_row[j], count = (int)nr * row;
      T *dst = static_cast<T *>(a.out[j]) + r0 * row;
      const uint32_t *t = tab + a.offset[j];
      for (int i = threadIdx.x; i < count; i += blockDim.x) {
        const int r = i / row, c = i - r * row;
        const uint32_t e = t[c];
        const int k = (int)(e >> 24);
        dst[i] = tile[g.seg[k] + r * a.in_row[k] + (e & 0xffffffu)];
      }
    }
  }
}

template <typename T> __global__ void rg_direct_kernel(const k_row_gather a) {
  for (int j = 0; j < a.n_out; j++) {
    const int64_t row = a.out_row[j], count = a.rows * row;
    T *dst = static_cast<T *>(a.out[j]);
    K_GRID_STRIDE(i, count) {
      const int64_t r = i / row, c = i - r * row;
      const uint32_t e = a.table[a.offset[j] + c];
      const int k = (int)(e >> 24);
      dst[i] = static_cast<const T *>(a.in[k])[r * a.in_row[k] + (e & 0xffffffu)];
    }
  }
}

template <typename T>
static cudaError_t rg_launch(const k_row_gather *a, int sm_count, cudaStream_t st) {
  rg_dev g;
  g.a = *a;
  int64_t per_row = 0;
  for (int k = 0; k < a->n_in; k++) per_row += a->in_row[k];
  const int64_t table_bytes = a->n_table * (int64_t)sizeof(uint32_t);
  int64_t fit = (RG_SMEM_BYTES - table_bytes) / (per_row * (int64_t)sizeof(T) > 0 ? per_row * (int64_t)sizeof(T) : 1);
  fit -= fit % RG_ROW_ALIGN;
  if (fit < RG_ROW_ALIGN) {
    const int64_t most = a->rows * (a->out_row[0] > 0 ? a->out_row[0] : 1);
    rg_direct_kernel<T><<<k_blocks(most, 256), 256, 0, st>>>(*a);
    return cudaGetLastError();
  }
  // enough rows per block to keep the block busy, and blocks for every SM
  int64_t rpb = fit < 256 ? fit : 256;
  const int64_t want_blocks = (int64_t)(sm_count > 0 ? sm_count : 1) * 4;
  while (rpb > RG_ROW_ALIGN && (a->rows + rpb - 1) / rpb < want_blocks) rpb -= RG_ROW_ALIGN;
  g.rows_per_block = (int)rpb;
  g.words = true;
  int64_t at = 0;
  for (int k = 0; k < a->n_in; k++) {
    g.seg[k] = at;
    at += rpb * a->in_row[k];
    // a tile starts at a multiple of rpb rows: on 16 bytes when the input does
    if ((uintptr_t)a->in[k] % 16 || (rpb * a->in_row[k] * (int64_t)sizeof(T)) % 16) g.words = false;
  }
  g.tile_elems = at;
  const size_t smem = (size_t)(at * (int64_t)sizeof(T) + table_bytes);
  int64_t blocks = (a->rows + rpb - 1) / rpb;
  if (blocks > want_blocks * 8) blocks = want_blocks * 8; // the rest by striding
  rg_tile_kernel<T><<<(unsigned)blocks, RG_THREADS, smem, st>>>(g);
  return cudaGetLastError();
}

extern "C" cudaError_t k_row_gather_run(const k_row_gather *a, int elem_size, int sm_count,
                                        cudaStream_t stream) {
  if (a->n_in < 1 || a->n_in > K_ROW_GATHER_MAX || a->n_out < 1 || a->n_out > K_ROW_GATHER_MAX)
    return cudaErrorInvalidValue;
  if (a->rows == 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return rg_launch<uint8_t>(a, sm_count, stream);
    case 2: return rg_launch<uint16_t>(a, sm_count, stream);
    case 4: return rg_launch<uint32_t>(a, sm_count, stream);
    case 8: return rg_launch<uint64_t>(a, sm_count, stream);
    default: return cudaErrorInvalidValue;
  }
}
