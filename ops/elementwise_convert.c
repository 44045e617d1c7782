/* elementwise_convert.c: element conversions between dtypes (Cast semantics).
 * Floats convert to integers by truncation, saturating out-of-range values and
 * mapping NaN to 0 (the plain C conversion would be undefined); integers convert
 * to integers by wrapping, as numpy's astype does; anything -> bool is v != 0. */
#include <math.h>
#include <string.h>

#include "elementwise.h"

static float f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint32_t bits_from_f32(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* double -> float rounding to odd: a second rounding (to half / bfloat16, which
 * keep far fewer bits) of this value equals a single rounding of the double. */
static float f64_to_f32_odd(double d) {
  float f = (float)d;
  if ((double)f == d || d != d || isinf(f)) return f; /* exact, NaN or overflow */
  uint32_t u = bits_from_f32(f);
  if ((u & 1) == 0) u += fabs((double)f) > fabs(d) ? (uint32_t)-1 : 1u; /* odd neighbour */
  return f32_from_bits(u);
}

uint16_t ew_f64_to_half(double d) { return float_to_half(f64_to_f32_odd(d)); }
uint16_t ew_f64_to_bf16(double d) { return float_to_bf16(f64_to_f32_odd(d)); }

static int64_t f2i(double d, int64_t lo, int64_t hi) {
  if (d != d) return 0;
  if (d <= (double)lo) return lo;
  if (d >= (double)hi) return hi; /* (double)INT64_MAX is 2^63: also out of range */
  return (int64_t)d;
}

static uint64_t f2u(double d, uint64_t hi) {
  if (!(d > 0)) return 0; /* NaN, negatives (truncation of (-1, 0) is 0 anyway) */
  if (d >= (double)hi) return hi;
  return (uint64_t)d;
}

double ew_load_f64(infer_dtype dt, const void *p, int64_t i) {
  switch (dt) {
    case INFER_DTYPE_FLOAT32: return ((const float *)p)[i];
    case INFER_DTYPE_FLOAT64: return ((const double *)p)[i];
    case INFER_DTYPE_FLOAT16: return half_to_float(((const uint16_t *)p)[i]);
    case INFER_DTYPE_BFLOAT16: return bf16_to_float(((const uint16_t *)p)[i]);
    case INFER_DTYPE_INT8: return ((const int8_t *)p)[i];
    case INFER_DTYPE_INT16: return ((const int16_t *)p)[i];
    case INFER_DTYPE_INT32: return ((const int32_t *)p)[i];
    case INFER_DTYPE_INT64: return (double)((const int64_t *)p)[i];
    case INFER_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
    case INFER_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case INFER_DTYPE_UINT16: return ((const uint16_t *)p)[i];
    case INFER_DTYPE_UINT32: return ((const uint32_t *)p)[i];
    case INFER_DTYPE_UINT64: return (double)((const uint64_t *)p)[i];
    default: return 0;
  }
}

int64_t ew_load_i64(infer_dtype dt, const void *p, int64_t i) {
  switch (dt) {
    case INFER_DTYPE_INT8: return ((const int8_t *)p)[i];
    case INFER_DTYPE_INT16: return ((const int16_t *)p)[i];
    case INFER_DTYPE_INT32: return ((const int32_t *)p)[i];
    case INFER_DTYPE_INT64: return ((const int64_t *)p)[i];
    case INFER_DTYPE_BOOL: return ((const uint8_t *)p)[i] != 0;
    case INFER_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case INFER_DTYPE_UINT16: return ((const uint16_t *)p)[i];
    case INFER_DTYPE_UINT32: return ((const uint32_t *)p)[i];
    case INFER_DTYPE_UINT64: return (int64_t)((const uint64_t *)p)[i];
    default: return f2i(ew_load_f64(dt, p, i), INT64_MIN, INT64_MAX);
  }
}

void ew_store_f64(infer_dtype dt, void *p, int64_t i, double v) {
  switch (dt) {
    case INFER_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; break;
    case INFER_DTYPE_FLOAT64: ((double *)p)[i] = v; break;
    case INFER_DTYPE_FLOAT16: ((uint16_t *)p)[i] = ew_f64_to_half(v); break;
    case INFER_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = ew_f64_to_bf16(v); break;
    case INFER_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case INFER_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)f2i(v, INT8_MIN, INT8_MAX); break;
    case INFER_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)f2i(v, INT16_MIN, INT16_MAX); break;
    case INFER_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)f2i(v, INT32_MIN, INT32_MAX); break;
    case INFER_DTYPE_INT64: ((int64_t *)p)[i] = f2i(v, INT64_MIN, INT64_MAX); break;
    case INFER_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)f2u(v, UINT8_MAX); break;
    case INFER_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)f2u(v, UINT16_MAX); break;
    case INFER_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)f2u(v, UINT32_MAX); break;
    case INFER_DTYPE_UINT64: ((uint64_t *)p)[i] = f2u(v, UINT64_MAX); break;
    default: break;
  }
}

void ew_store_i64(infer_dtype dt, void *p, int64_t i, int64_t v, bool is_unsigned) {
  uint64_t u = (uint64_t)v;
  switch (dt) {
    case INFER_DTYPE_FLOAT32: ((float *)p)[i] = is_unsigned ? (float)u : (float)v; break;
    case INFER_DTYPE_FLOAT64: ((double *)p)[i] = is_unsigned ? (double)u : (double)v; break;
    case INFER_DTYPE_FLOAT16:
    case INFER_DTYPE_BFLOAT16:
      /* for |v| > 2^53 the int -> double step rounds too: a bfloat16 result can
       * then be one unit off in rare near-ties (float16 overflows long before) */
      ew_store_f64(dt, p, i, is_unsigned ? (double)u : (double)v);
      break;
    case INFER_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case INFER_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)u; break;
    case INFER_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)u; break;
    case INFER_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)u; break;
    case INFER_DTYPE_INT64: ((int64_t *)p)[i] = v; break;
    case INFER_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)u; break;
    case INFER_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)u; break;
    case INFER_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)u; break;
    case INFER_DTYPE_UINT64: ((uint64_t *)p)[i] = u; break;
    default: break;
  }
}

/* Direct loops for the conversions on the hot path (fp16 / bf16 pipelines). */
static bool convert_fast(infer_dtype ddt, void *dst, infer_dtype sdt, const void *src,
                         int64_t n) {
  if (sdt == INFER_DTYPE_FLOAT32) {
    const float *s = src;
    if (ddt == INFER_DTYPE_FLOAT16) {
      for (int64_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = float_to_half(s[i]);
      return true;
    }
    if (ddt == INFER_DTYPE_BFLOAT16) {
      for (int64_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = float_to_bf16(s[i]);
      return true;
    }
    if (ddt == INFER_DTYPE_FLOAT64) {
      for (int64_t i = 0; i < n; i++) ((double *)dst)[i] = s[i];
      return true;
    }
  }
  if (ddt == INFER_DTYPE_FLOAT32) {
    float *d = dst;
    switch (sdt) {
      case INFER_DTYPE_FLOAT16:
        for (int64_t i = 0; i < n; i++) d[i] = half_to_float(((const uint16_t *)src)[i]);
        return true;
      case INFER_DTYPE_BFLOAT16:
        for (int64_t i = 0; i < n; i++) d[i] = bf16_to_float(((const uint16_t *)src)[i]);
        return true;
      case INFER_DTYPE_FLOAT64:
        for (int64_t i = 0; i < n; i++) d[i] = (float)((const double *)src)[i];
        return true;
      case INFER_DTYPE_INT64:
        for (int64_t i = 0; i < n; i++) d[i] = (float)((const int64_t *)src)[i];
        return true;
      case INFER_DTYPE_INT32:
        for (int64_t i = 0; i < n; i++) d[i] = (float)((const int32_t *)src)[i];
        return true;
      default: return false;
    }
  }
  return false;
}

void ew_convert(infer_dtype ddt, void *dst, infer_dtype sdt, const void *src, int64_t n) {
  if (n <= 0) return;
  if (ddt == sdt && sdt != INFER_DTYPE_BOOL) {
    memcpy(dst, src, (size_t)n * infer_dtype_size(sdt));
    return;
  }
  if (convert_fast(ddt, dst, sdt, src, n)) return;
  if (dtype_is_float(sdt)) {
    for (int64_t i = 0; i < n; i++) ew_store_f64(ddt, dst, i, ew_load_f64(sdt, src, i));
  } else {
    bool is_unsigned = sdt == INFER_DTYPE_UINT64;
    for (int64_t i = 0; i < n; i++)
      ew_store_i64(ddt, dst, i, ew_load_i64(sdt, src, i), is_unsigned);
  }
}
