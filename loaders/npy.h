/* npy.h: NumPy .npy tensor files (format versions 1.0, 2.0, 3.0).
 *
 * Supported element types: the numeric dtypes numpy can describe ('<f2' '<f4' '<f8'
 * '|i1' '|u1' '|b1' '<i2' '<u2' '<i4' '<u4' '<i8' '<u8'), little-endian, C order.
 * bfloat16 has no numpy descr and is refused both ways. */
#ifndef INFER_LOADERS_NPY_H
#define INFER_LOADERS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "../core/tensor.h"

/* Parses an in-memory .npy file (versions 1.0, 2.0, 3.0). On success out->data is malloc'ed
   (caller frees). `what` (e.g. the file path) starts every error message.
   *out is zeroed first, so it is safe to infer_tensor_clear() after a failure.
   Malformed files -> INFER_ERR_INVALID_INPUT (including data longer or shorter than the
   shape needs); well-formed files of a kind not handled here (big-endian, Fortran order,
   other dtypes, rank > INFER_MAX_RANK) -> INFER_ERR_UNSUPPORTED. */
infer_status npy_parse(const uint8_t *buf, size_t len, const char *what, tensor *out);

/* Writes t as .npy version 1.0 (2.0 if the header needs it), little-endian, C order,
   byte-identical to numpy 1.24's np.save (data starts at a multiple of 64 bytes).
   bfloat16 -> INFER_ERR_UNSUPPORTED; a bad tensor -> INFER_ERR_INVALID_ARGUMENT;
   open/write/close errors -> INFER_ERR_IO (a partly written file may be left behind). */
infer_status npy_write_file(const char *path, const tensor *t);

#endif
