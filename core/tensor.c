/* tensor.c: dtype facts, checked sizes, fp16/bf16 conversion, generic element access. */
#include "tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t infer_dtype_size(infer_dtype t) {
  switch (t) {
    case INFER_DTYPE_BOOL:
    case INFER_DTYPE_UINT8:
    case INFER_DTYPE_INT8: return 1;
    case INFER_DTYPE_UINT16:
    case INFER_DTYPE_INT16:
    case INFER_DTYPE_FLOAT16:
    case INFER_DTYPE_BFLOAT16: return 2;
    case INFER_DTYPE_INT32:
    case INFER_DTYPE_UINT32:
    case INFER_DTYPE_FLOAT32: return 4;
    case INFER_DTYPE_INT64:
    case INFER_DTYPE_UINT64:
    case INFER_DTYPE_FLOAT64: return 8;
    default: return 0;
  }
}

const char *infer_dtype_name(infer_dtype t) {
  switch (t) {
    case INFER_DTYPE_FLOAT32: return "float32";
    case INFER_DTYPE_UINT8: return "uint8";
    case INFER_DTYPE_INT8: return "int8";
    case INFER_DTYPE_UINT16: return "uint16";
    case INFER_DTYPE_INT16: return "int16";
    case INFER_DTYPE_INT32: return "int32";
    case INFER_DTYPE_INT64: return "int64";
    case INFER_DTYPE_STRING: return "string";
    case INFER_DTYPE_BOOL: return "bool";
    case INFER_DTYPE_FLOAT16: return "float16";
    case INFER_DTYPE_FLOAT64: return "float64";
    case INFER_DTYPE_UINT32: return "uint32";
    case INFER_DTYPE_UINT64: return "uint64";
    case INFER_DTYPE_BFLOAT16: return "bfloat16";
    default: break;
  }
  /* names of ONNX types infer does not support, so messages say what they are */
  switch ((int)t) {
    case 14: return "complex64";
    case 15: return "complex128";
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    case 23: return "float4e2m1";
    case 24: return "float8e8m0";
    case 25: return "uint2";
    case 26: return "int2";
    default: return "undefined";
  }
}

bool size_mul(int64_t a, int64_t b, int64_t *out) {
  if (a < 0 || b < 0) return false;
  if (a != 0 && b > INT64_MAX / a) return false;
  *out = a * b;
  return true;
}

bool size_add(int64_t a, int64_t b, int64_t *out) {
  if (a < 0 || b < 0 || a > INT64_MAX - b) return false;
  *out = a + b;
  return true;
}

int64_t dims_count(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    if (!size_mul(n, dims[i], &n)) return -1;
  return n;
}

int64_t tensor_nbytes_of(infer_dtype dt, int rank, const int64_t *dims) {
  int64_t n = dims_count(rank, dims), b;
  size_t es = infer_dtype_size(dt);
  if (n < 0 || es == 0 || !size_mul(n, (int64_t)es, &b)) return -1;
  return b;
}

int64_t tensor_nbytes(const tensor *t) { return tensor_nbytes_of(t->dtype, t->rank, t->dims); }

int64_t infer_tensor_count(const infer_tensor *t) {
  if (!t || t->rank < 0 || t->rank > INFER_MAX_RANK) return -1;
  return dims_count(t->rank, t->dims);
}

void infer_tensor_clear(infer_tensor *t) {
  if (!t) return;
  free(t->data);
  memset(t, 0, sizeof *t);
}

bool dtype_is_float(infer_dtype t) {
  return t == INFER_DTYPE_FLOAT32 || t == INFER_DTYPE_FLOAT64 || t == INFER_DTYPE_FLOAT16 ||
         t == INFER_DTYPE_BFLOAT16;
}
bool dtype_is_signed_int(infer_dtype t) {
  return t == INFER_DTYPE_INT8 || t == INFER_DTYPE_INT16 || t == INFER_DTYPE_INT32 ||
         t == INFER_DTYPE_INT64;
}
bool dtype_is_unsigned_int(infer_dtype t) {
  return t == INFER_DTYPE_UINT8 || t == INFER_DTYPE_UINT16 || t == INFER_DTYPE_UINT32 ||
         t == INFER_DTYPE_UINT64 || t == INFER_DTYPE_BOOL;
}

bool dims_equal(int ra, const int64_t *a, int rb, const int64_t *b) {
  if (ra != rb) return false;
  for (int i = 0; i < ra; i++)
    if (a[i] != b[i]) return false;
  return true;
}

const char *dims_format(int rank, const int64_t *dims, char *buf, int cap) {
  if (rank == 0) {
    snprintf(buf, cap, "scalar");
    return buf;
  }
  int off = 0;
  buf[0] = 0;
  for (int i = 0; i < rank && off < cap; i++)
    off += snprintf(buf + off, cap - off, i ? "x%lld" : "%lld", (long long)dims[i]);
  return buf;
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return bits_f32(sign | 0x7f800000 | (man << 13)); /* inf / nan */
  if (exp == 0) {
    if (man == 0) return bits_f32(sign);
    /* subnormal: value = man * 2^-24 */
    float v = (float)man * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t float_to_half(float f) {
  uint32_t u = f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t a = u & 0x7fffffff;
  if (a >= 0x7f800000) /* inf or nan (keep nan quiet) */
    return sign | 0x7c00 | (a > 0x7f800000 ? 0x200 : 0);
  if (a >= 0x477ff000) return sign | 0x7c00; /* rounds past the largest half */
  if (a < 0x38800000) {                      /* subnormal half or zero */
    /* shift the implicit-bit mantissa into place, rounding to nearest even */
    if (a < 0x33000000) return sign;
    uint32_t e = a >> 23, m = (a & 0x7fffff) | 0x800000;
    int shift = 126 - (int)e; /* 14..24 */
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
    return sign | (uint16_t)r;
  }
  uint32_t r = ((a >> 13) - (112u << 10)), rem = a & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
  return sign | (uint16_t)r;
}

float bf16_to_float(uint16_t b) { return bits_f32((uint32_t)b << 16); }

uint16_t float_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

double tensor_get_f64(const tensor *t, int64_t i) {
  const void *p = t->data;
  switch (t->dtype) {
    case INFER_DTYPE_FLOAT32: return ((const float *)p)[i];
    case INFER_DTYPE_FLOAT64: return ((const double *)p)[i];
    case INFER_DTYPE_FLOAT16: return half_to_float(((const uint16_t *)p)[i]);
    case INFER_DTYPE_BFLOAT16: return bf16_to_float(((const uint16_t *)p)[i]);
    case INFER_DTYPE_INT8: return ((const int8_t *)p)[i];
    case INFER_DTYPE_INT16: return ((const int16_t *)p)[i];
    case INFER_DTYPE_INT32: return ((const int32_t *)p)[i];
    case INFER_DTYPE_INT64: return (double)((const int64_t *)p)[i];
    case INFER_DTYPE_BOOL:
    case INFER_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case INFER_DTYPE_UINT16: return ((const uint16_t *)p)[i];
    case INFER_DTYPE_UINT32: return ((const uint32_t *)p)[i];
    case INFER_DTYPE_UINT64: return (double)((const uint64_t *)p)[i];
    default: return 0;
  }
}

int64_t tensor_get_i64(const tensor *t, int64_t i) {
  const void *p = t->data;
  switch (t->dtype) {
    case INFER_DTYPE_INT8: return ((const int8_t *)p)[i];
    case INFER_DTYPE_INT16: return ((const int16_t *)p)[i];
    case INFER_DTYPE_INT32: return ((const int32_t *)p)[i];
    case INFER_DTYPE_INT64: return ((const int64_t *)p)[i];
    case INFER_DTYPE_BOOL:
    case INFER_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case INFER_DTYPE_UINT16: return ((const uint16_t *)p)[i];
    case INFER_DTYPE_UINT32: return ((const uint32_t *)p)[i];
    case INFER_DTYPE_UINT64: return (int64_t)((const uint64_t *)p)[i];
    default: {
      double d = tensor_get_f64(t, i);
      /* float -> int conversion of out-of-range values is undefined in C */
      if (!(d > -9.2e18 && d < 9.2e18)) return d > 0 ? INT64_MAX : INT64_MIN;
      return (int64_t)d;
    }
  }
}

void tensor_set_f64(tensor *t, int64_t i, double v) {
  void *p = t->data;
  switch (t->dtype) {
    case INFER_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; break;
    case INFER_DTYPE_FLOAT64: ((double *)p)[i] = v; break;
    case INFER_DTYPE_FLOAT16: ((uint16_t *)p)[i] = float_to_half((float)v); break;
    case INFER_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = float_to_bf16((float)v); break;
    case INFER_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: {
      int64_t x = (v > -9.2e18 && v < 9.2e18) ? (int64_t)v : (v > 0 ? INT64_MAX : INT64_MIN);
      if (v != v) x = 0;
      tensor_set_i64(t, i, x);
    }
  }
}

void tensor_set_i64(tensor *t, int64_t i, int64_t v) {
  void *p = t->data;
  switch (t->dtype) {
    case INFER_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case INFER_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case INFER_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case INFER_DTYPE_INT64: ((int64_t *)p)[i] = v; break;
    case INFER_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case INFER_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case INFER_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case INFER_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case INFER_DTYPE_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    default: tensor_set_f64(t, i, (double)v);
  }
}

double infer_tensor_get(const infer_tensor *t, int64_t i) { return tensor_get_f64(t, i); }
void infer_tensor_set(infer_tensor *t, int64_t i, double v) { tensor_set_f64(t, i, v); }
