/* k_dtype.h: element type codes for kernel launchers (the ONNX numbering, as in
 * infer.h; kernels include nothing of the engine). Plain C, shared by .cu and .c. */
#ifndef INFER_K_DTYPE_H
#define INFER_K_DTYPE_H

enum k_dtype {
  K_F32 = 1,
  K_U8 = 2,
  K_I8 = 3,
  K_U16 = 4,
  K_I16 = 5,
  K_I32 = 6,
  K_I64 = 7,
  K_BOOL = 9,
  K_F16 = 10,
  K_F64 = 11,
  K_U32 = 12,
  K_U64 = 13,
  K_BF16 = 16
};

#define K_MAX_RANK 8

#endif
