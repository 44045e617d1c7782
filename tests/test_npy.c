/* test_npy.c: .npy reading and writing (loaders/npy.c).
 *
 * Round trips of every writable dtype at ranks 0..4 (and 8), byte-identity with files
 * numpy 1.24 writes (embedded below, so no Python is needed), and each kind of malformed
 * or unsupported file with the status it must give. Truncations and random byte flips of
 * valid files must fail cleanly (run under -fsanitize=address,undefined to catch over-reads).
 * Prints every failed check; exits nonzero if any failed. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../loaders/npy.h"
#include "check.h"

/* ---- files written by numpy 1.24 (np.save / numpy.lib.format.write_array) ---------- */
/* v1.0 {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } */
static const uint8_t golden_f32_2x3[152] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x20,
    0x33, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40,
    0x00, 0x00, 0x80, 0x40, 0x00, 0x00, 0xa0, 0x40,
};
/* v1.0 {'descr': '|b1', 'fortran_order': False, 'shape': (), } */
static const uint8_t golden_bool_0d[129] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x7c, 0x62, 0x31, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x29, 0x2c, 0x20,
    0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x01,
};
/* v1.0 {'descr': '<f2', 'fortran_order': False, 'shape': (3,), } */
static const uint8_t golden_f16_3[134] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x32, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x33, 0x2c, 0x29,
    0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x3e, 0x00, 0xc0, 0xff, 0x7b,
};
/* v2.0 {'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), } */
static const uint8_t golden_i64_v2[160] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x02, 0x00, 0x74, 0x00, 0x00, 0x00, 0x7b, 0x27, 0x64, 0x65,
    0x73, 0x63, 0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x69, 0x38, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f,
    0x72, 0x74, 0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61,
    0x6c, 0x73, 0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32,
    0x2c, 0x20, 0x32, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
};
/* v3.0 {'descr': '|u1', 'fortran_order': False, 'shape': (1, 3), } */
static const uint8_t golden_u8_v3[131] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x03, 0x00, 0x74, 0x00, 0x00, 0x00, 0x7b, 0x27, 0x64, 0x65,
    0x73, 0x63, 0x72, 0x27, 0x3a, 0x20, 0x27, 0x7c, 0x75, 0x31, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f,
    0x72, 0x74, 0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61,
    0x6c, 0x73, 0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x31,
    0x2c, 0x20, 0x33, 0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0xff, 0x07,
};
/* v1.0 {'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), } */
static const uint8_t golden_fortran[152] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3c, 0x66, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x54, 0x72, 0x75, 0x65,
    0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x32, 0x2c, 0x20, 0x33,
    0x29, 0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x80, 0x40,
    0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0xa0, 0x40,
};
/* v1.0 {'descr': '>f4', 'fortran_order': False, 'shape': (3,), } */
static const uint8_t golden_big_endian[140] = {
    0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x76, 0x00, 0x7b, 0x27, 0x64, 0x65, 0x73, 0x63,
    0x72, 0x27, 0x3a, 0x20, 0x27, 0x3e, 0x66, 0x34, 0x27, 0x2c, 0x20, 0x27, 0x66, 0x6f, 0x72, 0x74,
    0x72, 0x61, 0x6e, 0x5f, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x27, 0x3a, 0x20, 0x46, 0x61, 0x6c, 0x73,
    0x65, 0x2c, 0x20, 0x27, 0x73, 0x68, 0x61, 0x70, 0x65, 0x27, 0x3a, 0x20, 0x28, 0x33, 0x2c, 0x29,
    0x2c, 0x20, 0x7d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
    0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x0a,
    0x00, 0x00, 0x00, 0x00, 0x3f, 0x80, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00,
};

/* ---- helpers ------------------------------------------------------------------------- */

/* Parses a copy of buf in an exact-size allocation, so a sanitizer sees any over-read. */
static infer_status parse_copy(const void *buf, size_t len, tensor *out) {
  uint8_t *copy = malloc(len ? len : 1);
  if (len) memcpy(copy, buf, len);
  infer_status s = npy_parse(copy, len, "case.npy", out);
  free(copy);
  return s;
}

/* Expects `want` from parsing buf and, when `needle` is given, that the message has it. */
static void expect_parse(const char *label, const void *buf, size_t len, infer_status want,
                         const char *needle) {
  tensor t;
  infer_status s = parse_copy(buf, len, &t);
  const char *msg = infer_last_error();
  CHECK(s == want, "%s: status %s, want %s (message: %s)", label, infer_status_name(s),
        infer_status_name(want), s == INFER_OK ? "-" : msg);
  if (s != INFER_OK) {
    CHECK(strncmp(msg, "case.npy: ", 10) == 0, "%s: message does not start with the file: %s",
          label, msg);
    if (needle) CHECK(strstr(msg, needle) != NULL, "%s: message lacks \"%s\": %s", label, needle, msg);
    CHECK(t.data == NULL && t.rank == 0, "%s: out not left zeroed after a failure", label);
  }
  infer_tensor_clear(&t);
}

/* Builds a .npy buffer: magic, version, length field for `header` as given, then data. */
static uint8_t *make_npy(int major, int minor, const char *header, const void *data,
                         size_t data_len, size_t *len) {
  size_t hl = strlen(header), prefix = major == 1 ? 10 : 12;
  *len = prefix + hl + data_len;
  uint8_t *b = malloc(*len);
  memcpy(b, "\x93NUMPY", 6);
  b[6] = (uint8_t)major;
  b[7] = (uint8_t)minor;
  b[8] = (uint8_t)(hl & 0xff);
  b[9] = (uint8_t)(hl >> 8);
  if (prefix == 12) b[10] = b[11] = 0;
  memcpy(b + prefix, header, hl);
  if (data_len) memcpy(b + prefix + hl, data, data_len);
  return b;
}

/* Header + exactly as many zero data bytes as `nbytes`. */
static void expect_header(const char *label, const char *header, size_t nbytes, infer_status want,
                          const char *needle) {
  uint8_t *zeros = calloc(nbytes ? nbytes : 1, 1);
  size_t len;
  uint8_t *b = make_npy(1, 0, header, zeros, nbytes, &len);
  expect_parse(label, b, len, want, needle);
  free(b);
  free(zeros);
}

static uint8_t *read_whole(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
  *len = fread(b, 1, (size_t)n, f);
  fclose(f);
  return b;
}

static char tmp_path[512];

/* ---- tests --------------------------------------------------------------------------- */

static const infer_dtype all_dtypes[] = {
    INFER_DTYPE_FLOAT32, INFER_DTYPE_FLOAT64, INFER_DTYPE_FLOAT16, INFER_DTYPE_INT8,
    INFER_DTYPE_UINT8,   INFER_DTYPE_INT16,   INFER_DTYPE_UINT16,  INFER_DTYPE_INT32,
    INFER_DTYPE_UINT32,  INFER_DTYPE_INT64,   INFER_DTYPE_UINT64,  INFER_DTYPE_BOOL};

static void test_round_trips(void) {
  static const struct {
    int rank;
    int64_t dims[INFER_MAX_RANK];
  } shapes[] = {{0, {0}},       {1, {5}},          {1, {0}},          {2, {2, 3}},
                {3, {2, 0, 3}}, {3, {1, 1, 7}},    {4, {1, 2, 3, 2}}, {4, {3, 1, 2, 4}},
                {8, {1, 2, 1, 2, 1, 2, 1, 3}},     {2, {123456789012, 0}}};
  for (size_t d = 0; d < sizeof all_dtypes / sizeof all_dtypes[0]; d++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      tensor t = {.dtype = all_dtypes[d], .rank = shapes[s].rank};
      memcpy(t.dims, shapes[s].dims, sizeof t.dims);
      int64_t nbytes = tensor_nbytes(&t);
      uint8_t *data = malloc(nbytes ? (size_t)nbytes : 1);
      for (int64_t i = 0; i < nbytes; i++)
        data[i] = t.dtype == INFER_DTYPE_BOOL ? (uint8_t)(i % 3 == 1) : (uint8_t)(i * 37 + d);
      t.data = data;
      char label[128], shape_text[128];
      snprintf(label, sizeof label, "round trip %s %s", infer_dtype_name(t.dtype),
               dims_format(t.rank, t.dims, shape_text, sizeof shape_text));

      infer_status ws = npy_write_file(tmp_path, &t);
      CHECK(ws == INFER_OK, "%s: write: %s", label, infer_last_error());
      size_t len = 0;
      uint8_t *file = ws == INFER_OK ? read_whole(tmp_path, &len) : NULL;
      if (file) {
        /* data starts 64-aligned right after a '\n'; version 1.0 */
        size_t data_off = len - (size_t)nbytes;
        CHECK(data_off % 64 == 0, "%s: data offset %zu is not a multiple of 64", label, data_off);
        CHECK(file[6] == 1 && file[7] == 0, "%s: version %d.%d", label, file[6], file[7]);
        CHECK(file[data_off - 1] == '\n', "%s: header does not end in a newline", label);
        CHECK((size_t)(file[8] | file[9] << 8) + 10 == data_off, "%s: header length field",
              label);
        tensor back;
        infer_status ps = parse_copy(file, len, &back);
        CHECK(ps == INFER_OK, "%s: parse: %s", label, infer_last_error());
        if (ps == INFER_OK) {
          CHECK(back.dtype == t.dtype, "%s: dtype %s", label, infer_dtype_name(back.dtype));
          CHECK(dims_equal(back.rank, back.dims, t.rank, t.dims), "%s: shape %s", label,
                dims_format(back.rank, back.dims, shape_text, sizeof shape_text));
          CHECK(back.data != NULL, "%s: data is NULL", label);
          CHECK(nbytes == 0 || memcmp(back.data, data, (size_t)nbytes) == 0, "%s: data differs",
                label);
        }
        infer_tensor_clear(&back);
      }
      free(file);
      free(data);
    }
}

static void test_numpy_files(void) {
  /* our writer produces numpy's exact bytes */
  float f[6] = {0, 1, 2, 3, 4, 5};
  tensor t = {.dtype = INFER_DTYPE_FLOAT32, .rank = 2, .dims = {2, 3}, .data = f};
  CHECK(npy_write_file(tmp_path, &t) == INFER_OK, "write f32 2x3: %s", infer_last_error());
  size_t len = 0;
  uint8_t *file = read_whole(tmp_path, &len);
  CHECK(file && len == sizeof golden_f32_2x3 && memcmp(file, golden_f32_2x3, len) == 0,
        "f32 2x3 file differs from numpy's np.save bytes");
  free(file);

  tensor b;
  CHECK(parse_copy(golden_f32_2x3, sizeof golden_f32_2x3, &b) == INFER_OK, "numpy f32: %s",
        infer_last_error());
  CHECK(b.dtype == INFER_DTYPE_FLOAT32 && b.rank == 2 && b.dims[0] == 2 && b.dims[1] == 3 &&
            memcmp(b.data, f, sizeof f) == 0,
        "numpy f32 2x3 content");
  infer_tensor_clear(&b);

  CHECK(parse_copy(golden_bool_0d, sizeof golden_bool_0d, &b) == INFER_OK, "numpy bool 0-d: %s",
        infer_last_error());
  CHECK(b.dtype == INFER_DTYPE_BOOL && b.rank == 0 && ((uint8_t *)b.data)[0] == 1,
        "numpy bool 0-d content");
  infer_tensor_clear(&b);

  CHECK(parse_copy(golden_f16_3, sizeof golden_f16_3, &b) == INFER_OK, "numpy f16: %s",
        infer_last_error());
  CHECK(b.dtype == INFER_DTYPE_FLOAT16 && b.rank == 1 && b.dims[0] == 3 &&
            tensor_get_f64(&b, 0) == 1.5 && tensor_get_f64(&b, 1) == -2 &&
            tensor_get_f64(&b, 2) == 65504,
        "numpy f16 content");
  infer_tensor_clear(&b);

  CHECK(parse_copy(golden_i64_v2, sizeof golden_i64_v2, &b) == INFER_OK, "numpy v2.0 i64: %s",
        infer_last_error());
  CHECK(b.dtype == INFER_DTYPE_INT64 && b.rank == 2 && b.dims[0] == 2 && b.dims[1] == 2 &&
            tensor_get_i64(&b, 1) == -2 && tensor_get_i64(&b, 3) == (int64_t)1 << 40,
        "numpy v2.0 i64 content");
  infer_tensor_clear(&b);

  CHECK(parse_copy(golden_u8_v3, sizeof golden_u8_v3, &b) == INFER_OK, "numpy v3.0 u8: %s",
        infer_last_error());
  CHECK(b.dtype == INFER_DTYPE_UINT8 && b.rank == 2 && b.dims[0] == 1 && b.dims[1] == 3 &&
            tensor_get_i64(&b, 1) == 255,
        "numpy v3.0 u8 content");
  infer_tensor_clear(&b);

  expect_parse("numpy Fortran order", golden_fortran, sizeof golden_fortran,
               INFER_ERR_INVALID_INPUT, "Fortran");
  expect_parse("numpy big-endian", golden_big_endian, sizeof golden_big_endian,
               INFER_ERR_UNSUPPORTED, "big-endian");
}

static void test_header_variants(void) {
  const infer_status OK = INFER_OK, BAD = INFER_ERR_INVALID_INPUT, UNS = INFER_ERR_UNSUPPORTED;
  /* accepted spellings */
  expect_header("minimal header", "{'descr':'<f4','fortran_order':False,'shape':(2,3)}", 24, OK,
                NULL);
  expect_header("key order, double quotes, no trailing comma",
                "{\"shape\": (2, 3,), \"fortran_order\": False, \"descr\": \"<f4\"}\n", 24, OK,
                NULL);
  expect_header("'=' byte order", "{'descr': '=i4', 'fortran_order': False, 'shape': (3,), }", 12,
                OK, NULL);
  expect_header("'|' on a 1-byte type", "{'descr': '|i1', 'fortran_order': False, 'shape': (), }",
                1, OK, NULL);
  expect_header("'>' on a 1-byte type", "{'descr': '>u1', 'fortran_order': False, 'shape': (4,), }",
                4, OK, NULL);
  expect_header("Python 2 long dims", "{'descr': '<u2', 'fortran_order': False, 'shape': (2L, 3L), }",
                12, OK, NULL);
  expect_header("Fortran order rank 2", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                24, BAD, "Fortran");
  expect_header("big-endian f8", "{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }", 8, UNS,
                "big-endian");
  expect_header("complex dtype", "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8, UNS,
                "'<c8'");
  expect_header("bfloat16-ish void dtype", "{'descr': '|V2', 'fortran_order': False, 'shape': (1,), }",
                2, UNS, "not supported");
  expect_header("structured dtype",
                "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4, UNS,
                "structured");
  expect_header("rank 9", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }",
                4, UNS, "rank 9");
  expect_header("long descr", "{'descr': '<f4xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', "
                "'fortran_order': False, 'shape': (1,), }", 4, UNS, "not supported");

  /* malformed headers */
  expect_header("missing descr", "{'fortran_order': False, 'shape': (1,), }", 4, BAD, "'descr'");
  expect_header("missing fortran_order", "{'descr': '<f4', 'shape': (1,), }", 4, BAD,
                "'fortran_order'");
  expect_header("missing shape", "{'descr': '<f4', 'fortran_order': False, }", 4, BAD, "'shape'");
  expect_header("empty dict", "{}", 4, BAD, "missing required key");
  expect_header("empty header", "", 4, BAD, "dict");
  expect_header("not a dict", "['descr', '<f4']", 4, BAD, "dict");
  expect_header("unknown key",
                "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1, }", 4, BAD,
                "'extra'");
  expect_header("duplicate key",
                "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4, BAD,
                "duplicate");
  expect_header("fortran_order not a bool", "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }",
                4, BAD, "True or False");
  expect_header("fortran_order Falsey", "{'descr': '<f4', 'fortran_order': Falsey, 'shape': (1,), }",
                4, BAD, "True or False");
  expect_header("descr not a string", "{'descr': 4, 'fortran_order': False, 'shape': (1,), }", 4, BAD,
                "string");
  expect_header("unterminated string", "{'descr': '<f4, 'fortran_order': False, 'shape': (1,), }", 4,
                BAD, NULL);
  expect_header("shape not a tuple", "{'descr': '<f4', 'fortran_order': False, 'shape': [1], }", 4, BAD,
                "tuple");
  expect_header("shape (N) without comma", "{'descr': '<f4', 'fortran_order': False, 'shape': (1), }",
                4, BAD, "not a tuple");
  expect_header("negative dim", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", 4, BAD,
                "negative");
  expect_header("float dim", "{'descr': '<f4', 'fortran_order': False, 'shape': (1.0,), }", 4, BAD,
                "shape");
  expect_header("empty dim", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,,2), }", 8, BAD,
                "shape");
  expect_header("unclosed shape", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2", 8, BAD,
                NULL);
  expect_header("missing colon", "{'descr' '<f4', 'fortran_order': False, 'shape': (1,), }", 4, BAD,
                "':'");
  expect_header("missing comma", "{'descr': '<f4' 'fortran_order': False, 'shape': (1,), }", 4, BAD,
                "','");
  expect_header("unclosed dict", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), ", 4, BAD,
                NULL);
  expect_header("text after the dict",
                "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } junk\n", 4, BAD,
                "after the header");
  expect_header("dim overflows int64",
                "{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775808,), }", 0, BAD,
                "overflows int64");
  expect_header("element count overflows",
                "{'descr': '<u1', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0,
                BAD, "elements");
  expect_header("byte count overflows",
                "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", 0, BAD,
                "bytes");
  expect_header("huge but zero-sized",
                "{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807, 0), }", 0, OK,
                NULL);
  expect_header("data too short", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 23,
                BAD, "data is 23 bytes but shape 2x3 of float32 needs 24 bytes");
  expect_header("data too long", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 25,
                BAD, "trailing data");
  expect_header("no data for a scalar", "{'descr': '<i8', 'fortran_order': False, 'shape': (), }", 0,
                BAD, "needs 8 bytes");
}

static void test_prefix(void) {
  const infer_status BAD = INFER_ERR_INVALID_INPUT;
  const char *h = "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }\n";
  uint8_t two[2] = {1, 2};
  size_t len;
  uint8_t *b;

  expect_parse("empty buffer", "", 0, BAD, "magic");
  expect_parse("NULL empty buffer", NULL, 0, BAD, "magic");
  expect_parse("bad magic", "\x93NUMPX\x01\x00\x00\x00", 10, BAD, "magic");
  expect_parse("a .pb file", "\x08\x01\x10\x02", 4, BAD, "magic");
  expect_parse("truncated version", "\x93NUMPY\x01", 7, BAD, "truncated");
  expect_parse("truncated header length", "\x93NUMPY\x01\x00\x05", 9, BAD, "truncated");
  expect_parse("truncated v2 header length", "\x93NUMPY\x02\x00\x05\x00\x00", 11, BAD, "truncated");

  static const int versions[][2] = {{0, 0}, {4, 0}, {1, 1}, {2, 5}, {255, 0}};
  for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
    b = make_npy(versions[i][0], versions[i][1], h, two, 2, &len);
    char label[64];
    snprintf(label, sizeof label, "version %d.%d", versions[i][0], versions[i][1]);
    expect_parse(label, b, len, BAD, "version");
    free(b);
  }
  for (int major = 1; major <= 3; major++) {
    b = make_npy(major, 0, h, two, 2, &len);
    char label[64];
    snprintf(label, sizeof label, "version %d.0", major);
    expect_parse(label, b, len, INFER_OK, NULL);
    free(b);
  }
  /* Python 2 long suffixes belong to versions 1.0 and 2.0 only */
  b = make_npy(3, 0, "{'descr': '|u1', 'fortran_order': False, 'shape': (2L,), }", two, 2, &len);
  expect_parse("3L in version 3.0", b, len, BAD, "shape");
  free(b);

  /* a NUL inside the header (padding must be spaces) */
  b = make_npy(1, 0, "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), } ", two, 2, &len);
  b[len - 3] = 0;
  expect_parse("NUL padding", b, len, BAD, "after the header");
  free(b);

  /* header lengths past the end of the file */
  b = make_npy(1, 0, h, two, 2, &len);
  b[8] = 0xff;
  b[9] = 0xff;
  expect_parse("v1 header length 65535", b, len, BAD, "past the end");
  free(b);
  b = make_npy(2, 0, h, two, 2, &len);
  b[8] = b[9] = b[10] = b[11] = 0xff;
  expect_parse("v2 header length 4 GiB", b, len, BAD, "past the end");
  free(b);

  /* every truncation of a valid file fails cleanly */
  for (size_t cut = 0; cut < sizeof golden_i64_v2; cut++) {
    tensor t;
    infer_status s = parse_copy(golden_i64_v2, cut, &t);
    CHECK(s == BAD, "truncated to %zu bytes: %s", cut, infer_status_name(s));
    infer_tensor_clear(&t);
  }
}

/* Random byte changes in the header of valid files: any status, but no crash or over-read
 * (under a sanitizer), and a success must be self-consistent. */
static void test_mutations(void) {
  const uint8_t *seeds[] = {golden_f32_2x3, golden_f16_3, golden_i64_v2, golden_u8_v3};
  const size_t sizes[] = {sizeof golden_f32_2x3, sizeof golden_f16_3, sizeof golden_i64_v2,
                          sizeof golden_u8_v3};
  static const char alphabet[] = "{}()[],:' \"0123456789-LTrueFalse<>|=fiub\n\x93";
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  for (int iter = 0; iter < 20000; iter++) {
    int k = iter % 4;
    uint8_t *b = malloc(sizes[k]);
    memcpy(b, seeds[k], sizes[k]);
    int changes = 1 + iter % 3;
    for (int j = 0; j < changes; j++) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      size_t pos = (size_t)(rng >> 33) % 80;
      b[pos] = (rng >> 20) & 1 ? (uint8_t)alphabet[(rng >> 40) % (sizeof alphabet - 1)]
                               : (uint8_t)(rng >> 48);
    }
    size_t len = sizes[k] - (iter % 7 == 0 ? (size_t)(rng >> 56) % 16 : 0);
    tensor t;
    infer_status s = npy_parse(b, len, "mutant", &t);
    CHECK(s == INFER_OK || s == INFER_ERR_INVALID_INPUT || s == INFER_ERR_UNSUPPORTED,
          "mutation %d: status %s", iter, infer_status_name(s));
    if (s == INFER_OK)
      CHECK(t.data && t.rank >= 0 && t.rank <= INFER_MAX_RANK && tensor_nbytes(&t) >= 0 &&
                (size_t)tensor_nbytes(&t) < len,
            "mutation %d: inconsistent success", iter);
    infer_tensor_clear(&t);
    free(b);
  }
}

static void test_write_errors(void) {
  float f[2] = {1, 2};
  tensor t = {.dtype = INFER_DTYPE_BFLOAT16, .rank = 1, .dims = {2}, .data = f};
  CHECK(npy_write_file(tmp_path, &t) == INFER_ERR_UNSUPPORTED, "bfloat16 write not refused");
  CHECK(strstr(infer_last_error(), "bfloat16") != NULL, "bfloat16 message: %s", infer_last_error());

  t.dtype = INFER_DTYPE_STRING;
  CHECK(npy_write_file(tmp_path, &t) == INFER_ERR_INVALID_ARGUMENT, "string dtype write");
  t.dtype = INFER_DTYPE_UNDEFINED;
  CHECK(npy_write_file(tmp_path, &t) == INFER_ERR_INVALID_ARGUMENT, "undefined dtype write");
  t.dtype = INFER_DTYPE_FLOAT32;
  t.rank = 9;
  CHECK(npy_write_file(tmp_path, &t) == INFER_ERR_INVALID_ARGUMENT, "rank 9 write");
  t.rank = 1;
  t.dims[0] = -2;
  CHECK(npy_write_file(tmp_path, &t) == INFER_ERR_INVALID_ARGUMENT, "negative dim write");
  t.dims[0] = 2;
  t.data = NULL;
  CHECK(npy_write_file(tmp_path, &t) == INFER_ERR_INVALID_ARGUMENT, "NULL data write");
  t.data = f;
  CHECK(npy_write_file(NULL, &t) == INFER_ERR_INVALID_ARGUMENT, "NULL path write");
  CHECK(npy_write_file(tmp_path, NULL) == INFER_ERR_INVALID_ARGUMENT, "NULL tensor write");

  const char *bad_path = "/nonexistent-dir-for-test-npy/x.npy";
  CHECK(npy_write_file(bad_path, &t) == INFER_ERR_IO, "write into a missing directory");
  CHECK(strstr(infer_last_error(), bad_path) && strstr(infer_last_error(), "No such file"),
        "open error message: %s", infer_last_error());
  if (access("/dev/full", W_OK) == 0) { /* Linux: every write fails with ENOSPC */
    CHECK(npy_write_file("/dev/full", &t) == INFER_ERR_IO, "write to /dev/full");
    CHECK(strstr(infer_last_error(), "No space") != NULL, "/dev/full message: %s",
          infer_last_error());
  }
}

int main(void) {
  const char *dir = getenv("TMPDIR");
  snprintf(tmp_path, sizeof tmp_path, "%s/test_npy_%ld.npy", dir && *dir ? dir : "/tmp",
           (long)getpid());
  test_round_trips();
  test_numpy_files();
  test_header_variants();
  test_prefix();
  test_mutations();
  test_write_errors();
  remove(tmp_path);
  if (failures) {
    fprintf(stderr, "test_npy: %d check(s) failed\n", failures);
    return 1;
  }
  printf("test_npy: all checks passed\n");
  return 0;
}
