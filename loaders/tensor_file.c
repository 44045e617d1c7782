/* tensor_file.c: the public tensor-file API: TensorProto (.pb) and NumPy (.npy). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "npy.h"
#include "onnx.pb-c.h"
#include "onnx_loader.h"
#include "tensor_proto.h"

/* Tensor files larger than this are refused rather than read into memory. */
#define TENSOR_FILE_MAX_BYTES ((size_t)4 << 30)

infer_status infer_tensor_read_file(const char *path, infer_tensor *out, char **name_out) {
  if (!path || !out)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_tensor_read_file: NULL argument");
  memset(out, 0, sizeof *out);
  if (name_out) *name_out = NULL;
  uint8_t *buf;
  size_t len;
  infer_status s = file_read_all(path, TENSOR_FILE_MAX_BYTES, &buf, &len);
  if (s != INFER_OK) return s;
  const char *name = "";
  Onnx__TensorProto *tp = NULL;
  if (len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0) {
    s = npy_parse(buf, len, path, out);
  } else if (len == 0) {
    s = infer_fail(INFER_ERR_INVALID_INPUT, "%s: the file is empty", path);
  } else {
    tp = onnx__tensor_proto__unpack(NULL, len, buf);
    if (!tp) {
      s = infer_fail(INFER_ERR_INVALID_INPUT,
                     "%s: neither a NumPy .npy file nor a valid TensorProto .pb", path);
    } else {
      s = tensor_from_proto(tp, NULL, path, NULL, out);
      if (s == INFER_ERR_INVALID_MODEL) s = INFER_ERR_INVALID_INPUT;
      if (tp->name) name = tp->name;
    }
  }
  free(buf);
  if (s == INFER_OK && name_out && !(*name_out = strdup(name))) {
    infer_tensor_clear(out);
    s = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  if (tp) onnx__tensor_proto__free_unpacked(tp, NULL);
  return s;
}

infer_status infer_tensor_write_npy(const char *path, const infer_tensor *t) {
  if (!path || !t) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_tensor_write_npy: NULL argument");
  return npy_write_file(path, t);
}

infer_status infer_tensor_write_pb(const char *path, const infer_tensor *t, const char *name) {
  if (!path || !t || t->rank < 0 || t->rank > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_tensor_write_pb: bad argument");
  int64_t nb = tensor_nbytes(t);
  if (nb < 0) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "tensor size overflows");
  if (nb > 0 && !t->data) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "tensor data is NULL");
  Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
  int64_t dims[INFER_MAX_RANK];
  memcpy(dims, t->dims, sizeof dims);
  tp.n_dims = (size_t)t->rank;
  tp.dims = dims;
  tp.has_data_type = 1;
  tp.data_type = (int32_t)t->dtype;
  tp.name = (char *)(name ? name : "");
  tp.has_raw_data = 1;
  tp.raw_data.len = (size_t)nb;
  tp.raw_data.data = t->data;
  size_t size = onnx__tensor_proto__get_packed_size(&tp);
  uint8_t *buf = malloc(size ? size : 1);
  if (!buf) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  onnx__tensor_proto__pack(&tp, buf);
  FILE *f = fopen(path, "wb");
  infer_status s = INFER_OK;
  if (!f || fwrite(buf, 1, size, f) != size)
    s = infer_fail(INFER_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
  if (f && fclose(f) != 0 && s == INFER_OK)
    s = infer_fail(INFER_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
  free(buf);
  return s;
}
