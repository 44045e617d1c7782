/* tensor.h: dtype facts, overflow-checked sizes and half-precision conversion. */
#ifndef INFER_TENSOR_H
#define INFER_TENSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "../include/infer.h"

typedef infer_tensor tensor;

/* a*b into *out; false on overflow or a negative operand. */
bool size_mul(int64_t a, int64_t b, int64_t *out);
bool size_add(int64_t a, int64_t b, int64_t *out);
/* Element count of dims[0..rank); -1 on a negative dim or overflow. */
int64_t dims_count(int rank, const int64_t *dims);
/* Byte size of a tensor of that dtype and shape; -1 on overflow/unknown dtype. */
int64_t tensor_nbytes_of(infer_dtype dt, int rank, const int64_t *dims);
int64_t tensor_nbytes(const tensor *t);
bool dtype_is_float(infer_dtype t); /* f16, bf16, f32, f64 */
bool dtype_is_signed_int(infer_dtype t);
bool dtype_is_unsigned_int(infer_dtype t); /* incl. bool */
bool dims_equal(int ra, const int64_t *a, int rb, const int64_t *b);
/* "1x3x224x224" (or "scalar") into buf. */
const char *dims_format(int rank, const int64_t *dims, char *buf, int cap);

float half_to_float(uint16_t h);
uint16_t float_to_half(float f); /* round to nearest even */
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f); /* round to nearest even */

/* Reads element i of any numeric dtype as double / int64; writes likewise
 * (with C conversion semantics, saturation not applied). */
double tensor_get_f64(const tensor *t, int64_t i);
int64_t tensor_get_i64(const tensor *t, int64_t i);
void tensor_set_f64(tensor *t, int64_t i, double v);
void tensor_set_i64(tensor *t, int64_t i, int64_t v);

#endif
