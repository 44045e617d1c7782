/* tensor_proto.c: decoding TensorProto payloads (raw, typed fields, external data). */
#include "tensor_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/status.h"

static bool dtype_supported(int dt) {
  switch (dt) {
    case INFER_DTYPE_FLOAT32: case INFER_DTYPE_UINT8: case INFER_DTYPE_INT8:
    case INFER_DTYPE_UINT16: case INFER_DTYPE_INT16: case INFER_DTYPE_INT32:
    case INFER_DTYPE_INT64: case INFER_DTYPE_BOOL: case INFER_DTYPE_FLOAT16:
    case INFER_DTYPE_FLOAT64: case INFER_DTYPE_UINT32: case INFER_DTYPE_UINT64:
    case INFER_DTYPE_BFLOAT16: return true;
    default: return false;
  }
}

/* Checks that the typed field of out's dtype holds exactly `count` values. */
static infer_status check_typed(const Onnx__TensorProto *tp, const char *what, int64_t count,
                                const tensor *out) {
  size_t have;
  const char *field;
  switch (out->dtype) {
    case INFER_DTYPE_FLOAT32: have = tp->n_float_data; field = "float_data"; break;
    case INFER_DTYPE_INT64: have = tp->n_int64_data; field = "int64_data"; break;
    case INFER_DTYPE_FLOAT64: have = tp->n_double_data; field = "double_data"; break;
    case INFER_DTYPE_UINT32:
    case INFER_DTYPE_UINT64: have = tp->n_uint64_data; field = "uint64_data"; break;
    default: have = tp->n_int32_data; field = "int32_data"; break;
  }
  if ((int64_t)have != count)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: %s holds %zu values but dims need %lld",
                      what, field, have, (long long)count);
  return INFER_OK;
}

/* Copies the elements of the (checked) typed field into out->data. */
static void from_typed(const Onnx__TensorProto *tp, int64_t count, tensor *out) {
  for (int64_t i = 0; i < count; i++) {
    switch (out->dtype) {
      case INFER_DTYPE_FLOAT32: ((float *)out->data)[i] = tp->float_data[i]; break;
      case INFER_DTYPE_INT64: ((int64_t *)out->data)[i] = tp->int64_data[i]; break;
      case INFER_DTYPE_FLOAT64: ((double *)out->data)[i] = tp->double_data[i]; break;
      case INFER_DTYPE_UINT32: ((uint32_t *)out->data)[i] = (uint32_t)tp->uint64_data[i]; break;
      case INFER_DTYPE_UINT64: ((uint64_t *)out->data)[i] = tp->uint64_data[i]; break;
      case INFER_DTYPE_FLOAT16:
      case INFER_DTYPE_BFLOAT16:
      case INFER_DTYPE_UINT16: ((uint16_t *)out->data)[i] = (uint16_t)tp->int32_data[i]; break;
      case INFER_DTYPE_INT16: ((int16_t *)out->data)[i] = (int16_t)tp->int32_data[i]; break;
      case INFER_DTYPE_INT32: ((int32_t *)out->data)[i] = tp->int32_data[i]; break;
      case INFER_DTYPE_INT8: ((int8_t *)out->data)[i] = (int8_t)tp->int32_data[i]; break;
      case INFER_DTYPE_BOOL: ((uint8_t *)out->data)[i] = tp->int32_data[i] != 0; break;
      case INFER_DTYPE_UINT8: ((uint8_t *)out->data)[i] = (uint8_t)tp->int32_data[i]; break;
      default: break;
    }
  }
}

/* A location must stay inside the model folder: relative, no "..", no symlink
 * along the way. */
static infer_status check_location(const char *base_dir, const char *loc, const char *what,
                                   char *path, size_t cap) {
  if (loc[0] == 0 || loc[0] == '/')
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "%s: external data location '%s' must be a relative path", what, loc);
  for (const char *p = loc; *p;) {
    const char *e = strchr(p, '/');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == 2 && p[0] == '.' && p[1] == '.')
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "%s: external data location '%s' leaves the model folder", what, loc);
    p += len + (e ? 1 : 0);
  }
  if ((size_t)snprintf(path, cap, "%s/%s", base_dir, loc) >= cap)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: external data path too long", what);
  /* every component below base_dir must be a real directory or file */
  size_t base_len = strlen(base_dir) + 1;
  for (size_t i = base_len; ; i++) {
    if (path[i] == '/' || path[i] == 0) {
      char c = path[i];
      path[i] = 0;
      struct stat st;
      if (lstat(path, &st) != 0) {
        infer_status s = infer_fail(INFER_ERR_INVALID_MODEL, "%s: external data file '%s': %s",
                                    what, path, strerror(errno));
        path[i] = c;
        return s;
      }
      path[i] = c;
      if (S_ISLNK(st.st_mode))
        return infer_fail(INFER_ERR_INVALID_MODEL,
                          "%s: external data location '%s' goes through a symbolic link", what,
                          loc);
      if (c == 0) {
        if (!S_ISREG(st.st_mode))
          return infer_fail(INFER_ERR_INVALID_MODEL, "%s: external data '%s' is not a file",
                            what, loc);
        break;
      }
    }
  }
  return INFER_OK;
}

static infer_status from_external(const Onnx__TensorProto *tp, const char *base_dir,
                                  const char *what, int64_t nbytes, mem_budget *budget,
                                  tensor *out) {
  const char *loc = NULL;
  int64_t offset = 0, length = -1;
  for (size_t i = 0; i < tp->n_external_data; i++) {
    const Onnx__StringStringEntryProto *kv = tp->external_data[i];
    if (!kv->key || !kv->value) continue;
    char *end = NULL;
    if (strcmp(kv->key, "location") == 0) {
      loc = kv->value;
    } else if (strcmp(kv->key, "offset") == 0 || strcmp(kv->key, "length") == 0) {
      errno = 0;
      long long v = strtoll(kv->value, &end, 10);
      if (errno || *end || v < 0 || end == kv->value)
        return infer_fail(INFER_ERR_INVALID_MODEL, "%s: external data %s '%s' is not a size",
                          what, kv->key, kv->value);
      if (kv->key[0] == 'o') offset = v; else length = v;
    }
  }
  if (!base_dir)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: external data is not allowed here", what);
  if (!loc)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: external data without a location", what);
  char path[4096];
  TRY(check_location(base_dir, loc, what, path, sizeof path));
  if (length >= 0 && length != nbytes)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "%s: external data length %lld does not match the %lld bytes dims need",
                      what, (long long)length, (long long)nbytes);
  int fd = open(path, O_RDONLY | O_NOFOLLOW);
  if (fd < 0)
    return infer_fail(INFER_ERR_IO, "%s: cannot open external data '%s': %s", what, path,
                      strerror(errno));
  struct stat st;
  infer_status s = INFER_OK;
  int64_t end_pos;
  if (fstat(fd, &st) != 0 || !size_add(offset, nbytes, &end_pos) || end_pos > st.st_size) {
    s = infer_fail(INFER_ERR_INVALID_MODEL,
                   "%s: external data range [%lld, +%lld) is past the end of '%s' (%lld bytes)",
                   what, (long long)offset, (long long)nbytes, loc, (long long)st.st_size);
  } else if ((s = mem_budget_take(budget, nbytes, what)) != INFER_OK) {
    /* the message names the limit */
  } else if (!(out->data = malloc(nbytes ? (size_t)nbytes : 1))) {
    mem_budget_give(budget, nbytes);
    s = infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: cannot allocate %lld bytes", what,
                   (long long)nbytes);
  } else {
    int64_t got = 0;
    while (got < nbytes) {
      ssize_t r = pread(fd, (char *)out->data + got, (size_t)(nbytes - got), offset + got);
      if (r <= 0) {
        s = infer_fail(INFER_ERR_IO, "%s: reading external data '%s' failed", what, loc);
        break;
      }
      got += r;
    }
  }
  close(fd);
  return s;
}

infer_status tensor_from_proto(const Onnx__TensorProto *tp, const char *base_dir,
                               const char *what, mem_budget *budget, tensor *out) {
  memset(out, 0, sizeof *out);
  if (!tp->has_data_type || tp->data_type == 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: data_type is undefined", what);
  if (!dtype_supported(tp->data_type))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: data type %s (%d) is not supported", what,
                      infer_dtype_name((infer_dtype)tp->data_type), (int)tp->data_type);
  if (tp->segment)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: segmented tensors are not supported", what);
  if (tp->n_dims > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: rank %zu exceeds %d", what, tp->n_dims,
                      INFER_MAX_RANK);
  out->dtype = (infer_dtype)tp->data_type;
  out->rank = (int)tp->n_dims;
  for (size_t i = 0; i < tp->n_dims; i++) {
    if (tp->dims[i] < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: dim %zu is negative (%lld)", what, i,
                        (long long)tp->dims[i]);
    out->dims[i] = tp->dims[i];
  }
  int64_t count = dims_count(out->rank, out->dims);
  int64_t nbytes = tensor_nbytes(out);
  if (count < 0 || nbytes < 0 || (uint64_t)nbytes > (uint64_t)SIZE_MAX / 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: the product of dims overflows", what);
  bool external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  /* Check sizes before allocating, so a lying header cannot ask for terabytes. */
  if (!external && tp->has_raw_data && (int64_t)tp->raw_data.len != nbytes)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "%s: raw_data has %zu bytes but %s dims need %lld", what,
                      tp->raw_data.len, infer_dtype_name(out->dtype), (long long)nbytes);
  /* every size is checked against what the file holds before allocating */
  if (external) {
    infer_status s = from_external(tp, base_dir, what, nbytes, budget, out);
    if (s != INFER_OK) infer_tensor_clear(out);
    return s;
  }
  if (!tp->has_raw_data) TRY(check_typed(tp, what, count, out));
  TRY(mem_budget_take(budget, nbytes, what));
  out->data = malloc(nbytes ? (size_t)nbytes : 1);
  if (!out->data) {
    mem_budget_give(budget, nbytes);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: cannot allocate %lld bytes", what,
                      (long long)nbytes);
  }
  infer_status s = INFER_OK;
  if (tp->has_raw_data) {
    if (nbytes > 0) memcpy(out->data, tp->raw_data.data, (size_t)nbytes); /* little-endian host */
  }
  else
    from_typed(tp, count, out);
  if (s != INFER_OK) infer_tensor_clear(out);
  return s;
}
