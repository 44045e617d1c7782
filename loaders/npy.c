/* npy.c: NumPy .npy files: parse from memory, write to disk.
 *
 * Layout: "\x93NUMPY", major, minor, header length (uint16 LE for 1.0, uint32 LE for
 * 2.0/3.0), an ASCII Python dict literal
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a '\n', then the raw C-order data.
 *
 * The dict is read by a small strict parser instead of anything eval-like: exactly the
 * three keys numpy requires, string / bool / tuple-of-int values, nothing after the '}'
 * but whitespace. Every read is bounded by the buffer, every size is overflow-checked. */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"

/* Data is copied byte-for-byte: the engine keeps tensors in host order, which must
 * then be the little-endian order of the files. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c assumes a little-endian host"
#endif

enum {
  NPY_MAGIC_LEN = 6,
  NPY_ALIGN = 64,          /* current numpy aligns the data to 64 bytes */
  NPY_GROWTH_DIGITS = 21,  /* numpy's GROWTH_AXIS_MAX_DIGITS: spare room after the dict */
  NPY_DESCR_CAP = 48,
  NPY_KEY_CAP = 32
};
static const char npy_magic[NPY_MAGIC_LEN] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* Type codes after the byte-order character, in numpy's spelling. */
static const struct {
  const char *code;
  infer_dtype dtype;
} npy_types[] = {
    {"f2", INFER_DTYPE_FLOAT16}, {"f4", INFER_DTYPE_FLOAT32}, {"f8", INFER_DTYPE_FLOAT64},
    {"i1", INFER_DTYPE_INT8},    {"u1", INFER_DTYPE_UINT8},   {"b1", INFER_DTYPE_BOOL},
    {"i2", INFER_DTYPE_INT16},   {"u2", INFER_DTYPE_UINT16},  {"i4", INFER_DTYPE_INT32},
    {"u4", INFER_DTYPE_UINT32},  {"i8", INFER_DTYPE_INT64},   {"u8", INFER_DTYPE_UINT64},
};

static const char *npy_code_of(infer_dtype dt) {
  for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
    if (npy_types[i].dtype == dt) return npy_types[i].code;
  return NULL;
}

/* "what: message" with `code`. */
static infer_status npy_fail(infer_status code, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static infer_status npy_fail(infer_status code, const char *what, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return infer_fail(code, "%s: %s", what, msg);
}

/* ---- header dict parser ---------------------------------------------------------- */

typedef struct {
  const char *p, *start, *end;
  const char *what;
  bool allow_long_suffix; /* Python 2 wrote 3L; numpy filters that for versions <= 2.0 */
} npy_cursor;

static void skip_ws(npy_cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
}

/* Skips whitespace, then consumes `ch` if it is next. */
static bool accept(npy_cursor *c, char ch) {
  skip_ws(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return true;
  }
  return false;
}

/* A malformed-header failure quoting where it happened (printable chars only). */
static infer_status header_error(npy_cursor *c, const char *problem) {
  char near[24];
  size_t n = 0;
  for (const char *q = c->p; q < c->end && n < 20; q++)
    near[n++] = (*q >= 0x20 && *q < 0x7f) ? *q : '?';
  near[n] = 0;
  return npy_fail(INFER_ERR_INVALID_INPUT, c->what,
                  "malformed .npy header: %s at header offset %td (near \"%s\")", problem,
                  c->p - c->start, n ? near : "<end of header>");
}

/* A Python string literal in ' or " quotes, without escapes (numpy never needs them for
 * the keys and descrs read here). Stores up to cap-1 chars; *truncated if longer. */
static infer_status parse_string(npy_cursor *c, char *out, size_t cap, bool *truncated) {
  skip_ws(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
    return header_error(c, "expected a quoted string");
  char quote = *c->p++;
  size_t n = 0;
  *truncated = false;
  for (;;) {
    if (c->p >= c->end) return header_error(c, "unterminated string");
    char ch = *c->p;
    if (ch == quote) break;
    if (ch == '\\' || ch == '\n' || ch == '\r' || ch == 0)
      return header_error(c, "unsupported character in string");
    if (n + 1 < cap)
      out[n++] = ch;
    else
      *truncated = true;
    c->p++;
  }
  c->p++;
  out[n] = 0;
  return INFER_OK;
}

static bool is_ident_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_';
}

/* True or False (the Python literals, not 0/1). */
static infer_status parse_bool(npy_cursor *c, bool *out) {
  skip_ws(c);
  size_t left = (size_t)(c->end - c->p);
  if (left >= 4 && memcmp(c->p, "True", 4) == 0 && (left == 4 || !is_ident_char(c->p[4]))) {
    c->p += 4;
    *out = true;
    return INFER_OK;
  }
  if (left >= 5 && memcmp(c->p, "False", 5) == 0 && (left == 5 || !is_ident_char(c->p[5]))) {
    c->p += 5;
    *out = false;
    return INFER_OK;
  }
  return header_error(c, "'fortran_order' must be True or False");
}

/* A non-negative decimal integer that fits int64. */
static infer_status parse_dim(npy_cursor *c, int64_t *out) {
  skip_ws(c);
  if (c->p < c->end && *c->p == '-') return header_error(c, "negative dimension in 'shape'");
  if (c->p >= c->end || *c->p < '0' || *c->p > '9')
    return header_error(c, "expected a non-negative integer in 'shape'");
  int64_t v = 0;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    int d = *c->p - '0';
    if (v > (INT64_MAX - d) / 10) return header_error(c, "dimension in 'shape' overflows int64");
    v = v * 10 + d;
    c->p++;
  }
  if (c->allow_long_suffix && c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++;
  if (c->p < c->end && is_ident_char(*c->p)) return header_error(c, "bad integer in 'shape'");
  *out = v;
  return INFER_OK;
}

/* A tuple of ints: (), (3,), (2, 3), (2, 3,). Stores up to INFER_MAX_RANK dims; *rank
 * counts all of them so the caller can refuse a higher rank after the header parses. */
static infer_status parse_shape(npy_cursor *c, int64_t *dims, int64_t *rank) {
  if (!accept(c, '(')) return header_error(c, "'shape' must be a tuple such as (2, 3)");
  *rank = 0;
  if (accept(c, ')')) return INFER_OK;
  for (;;) {
    int64_t v = 0;
    TRY(parse_dim(c, &v));
    if (*rank < INFER_MAX_RANK) dims[*rank] = v;
    (*rank)++;
    if (accept(c, ',')) {
      if (accept(c, ')')) return INFER_OK;
      continue;
    }
    if (accept(c, ')')) {
      /* Python reads (3) as the int 3, which numpy rejects; a 1-tuple is (3,) */
      if (*rank == 1) return header_error(c, "'shape' (N) is not a tuple (numpy writes (N,))");
      return INFER_OK;
    }
    return header_error(c, "expected ',' or ')' in 'shape'");
  }
}

typedef struct {
  char descr[NPY_DESCR_CAP];
  bool descr_truncated;
  bool fortran_order;
  int64_t rank;
  int64_t dims[INFER_MAX_RANK];
  bool have_descr, have_fortran, have_shape;
} npy_header;

static infer_status parse_header_dict(npy_cursor *c, npy_header *h) {
  if (!accept(c, '{')) return header_error(c, "expected a Python dict literal '{...}'");
  for (;;) {
    if (accept(c, '}')) break;
    char key[NPY_KEY_CAP];
    bool trunc;
    TRY(parse_string(c, key, sizeof key, &trunc));
    if (!accept(c, ':')) return header_error(c, "expected ':' after a key");
    bool *seen;
    if (!trunc && strcmp(key, "descr") == 0) {
      seen = &h->have_descr;
      if (*seen) return header_error(c, "duplicate key 'descr'");
      skip_ws(c);
      if (c->p < c->end && (*c->p == '[' || *c->p == '('))
        return npy_fail(INFER_ERR_UNSUPPORTED, c->what,
                        ".npy with a structured dtype (descr is a list) is not supported");
      TRY(parse_string(c, h->descr, sizeof h->descr, &h->descr_truncated));
    } else if (!trunc && strcmp(key, "fortran_order") == 0) {
      seen = &h->have_fortran;
      if (*seen) return header_error(c, "duplicate key 'fortran_order'");
      TRY(parse_bool(c, &h->fortran_order));
    } else if (!trunc && strcmp(key, "shape") == 0) {
      seen = &h->have_shape;
      if (*seen) return header_error(c, "duplicate key 'shape'");
      TRY(parse_shape(c, h->dims, &h->rank));
    } else {
      return npy_fail(INFER_ERR_INVALID_INPUT, c->what,
                      "malformed .npy header: unknown key '%s%s' (numpy allows only 'descr', "
                      "'fortran_order' and 'shape')",
                      key, trunc ? "..." : "");
    }
    *seen = true;
    if (accept(c, ',')) continue;
    if (accept(c, '}')) break;
    return header_error(c, "expected ',' or '}' in the header dict");
  }
  skip_ws(c);
  if (c->p != c->end) return header_error(c, "unexpected text after the header dict");
  if (!h->have_descr || !h->have_fortran || !h->have_shape)
    return npy_fail(INFER_ERR_INVALID_INPUT, c->what,
                    "malformed .npy header: missing required key(s):%s%s%s",
                    h->have_descr ? "" : " 'descr'", h->have_fortran ? "" : " 'fortran_order'",
                    h->have_shape ? "" : " 'shape'");
  return INFER_OK;
}

/* descr -> dtype. Byte order '<' '|' '=' (host = little) or none; '>' only for 1-byte
 * types, where numpy treats it as meaningless. */
static infer_status dtype_of_descr(const npy_header *h, const char *what, infer_dtype *out) {
  const char *d = h->descr;
  char order = 0;
  if (*d == '<' || *d == '>' || *d == '|' || *d == '=') order = *d++;
  if (!h->descr_truncated)
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++) {
      if (strcmp(d, npy_types[i].code) != 0) continue;
      infer_dtype dt = npy_types[i].dtype;
      if (order == '>' && infer_dtype_size(dt) > 1)
        return npy_fail(INFER_ERR_UNSUPPORTED, what,
                        ".npy data is big-endian (descr '%s'); only little-endian is supported "
                        "(re-save with a.astype(a.dtype.newbyteorder('<')))",
                        h->descr);
      *out = dt;
      return INFER_OK;
    }
  return npy_fail(INFER_ERR_UNSUPPORTED, what,
                  ".npy dtype descr '%s%s' is not supported (supported: <f2 <f4 <f8 |i1 |u1 |b1 "
                  "<i2 <u2 <i4 <u4 <i8 <u8)",
                  h->descr, h->descr_truncated ? "..." : "");
}

/* ---- parse --------------------------------------------------------------------------- */

infer_status npy_parse(const uint8_t *buf, size_t len, const char *what, tensor *out) {
  if (!what) what = "npy";
  if (!out) return npy_fail(INFER_ERR_INVALID_ARGUMENT, what, "npy_parse: out is NULL");
  memset(out, 0, sizeof *out);
  if (!buf && len) return npy_fail(INFER_ERR_INVALID_ARGUMENT, what, "npy_parse: buf is NULL");

  if (len < NPY_MAGIC_LEN || memcmp(buf, npy_magic, NPY_MAGIC_LEN) != 0)
    return npy_fail(INFER_ERR_INVALID_INPUT, what,
                    "not a .npy file (missing the \\x93NUMPY magic)");
  if (len < NPY_MAGIC_LEN + 2)
    return npy_fail(INFER_ERR_INVALID_INPUT, what, ".npy file truncated inside the version");
  int major = buf[6], minor = buf[7];
  if (major < 1 || major > 3 || minor != 0)
    return npy_fail(INFER_ERR_INVALID_INPUT, what,
                    "unknown .npy format version %d.%d (known: 1.0, 2.0, 3.0)", major, minor);

  size_t prefix = major == 1 ? 10 : 12;
  if (len < prefix)
    return npy_fail(INFER_ERR_INVALID_INPUT, what,
                    ".npy file truncated inside the header length (%zu bytes)", len);
  uint64_t header_len = (uint64_t)buf[8] | (uint64_t)buf[9] << 8;
  if (major != 1) header_len |= (uint64_t)buf[10] << 16 | (uint64_t)buf[11] << 24;
  if (header_len > len - prefix)
    return npy_fail(INFER_ERR_INVALID_INPUT, what,
                    ".npy header length %llu runs past the end of the file (%zu bytes)",
                    (unsigned long long)header_len, len);

  npy_header h;
  memset(&h, 0, sizeof h);
  npy_cursor c = {.p = (const char *)buf + prefix,
                  .start = (const char *)buf + prefix,
                  .end = (const char *)buf + prefix + header_len,
                  .what = what,
                  .allow_long_suffix = major <= 2};
  TRY(parse_header_dict(&c, &h));

  infer_dtype dt = INFER_DTYPE_UNDEFINED;
  TRY(dtype_of_descr(&h, what, &dt));
  if (h.rank > INFER_MAX_RANK)
    return npy_fail(INFER_ERR_UNSUPPORTED, what, ".npy rank %lld exceeds the maximum %d",
                    (long long)h.rank, INFER_MAX_RANK);
  int rank = (int)h.rank;
  /* a file infer does not read, like a truncated one: invalid input (exit 2), not an
   * unsupported op or dtype */
  if (h.fortran_order)
    return npy_fail(INFER_ERR_INVALID_INPUT, what,
                    ".npy in Fortran order is not supported (re-save np.ascontiguousarray(a))");

  char shape_text[256];
  dims_format(rank, h.dims, shape_text, sizeof shape_text);
  if (dims_count(rank, h.dims) < 0)
    return npy_fail(INFER_ERR_INVALID_INPUT, what,
                    ".npy shape %s has more elements than fit in int64", shape_text);
  int64_t nbytes = tensor_nbytes_of(dt, rank, h.dims);
  if (nbytes < 0)
    return npy_fail(INFER_ERR_INVALID_INPUT, what,
                    ".npy shape %s of %s is larger than int64 bytes", shape_text,
                    infer_dtype_name(dt));

  size_t data_off = prefix + (size_t)header_len;
  uint64_t have = (uint64_t)(len - data_off);
  if (have != (uint64_t)nbytes)
    return npy_fail(INFER_ERR_INVALID_INPUT, what,
                    ".npy data is %llu bytes but shape %s of %s needs %lld bytes (%s)",
                    (unsigned long long)have, shape_text, infer_dtype_name(dt),
                    (long long)nbytes,
                    have < (uint64_t)nbytes ? "file truncated" : "trailing data is rejected");

  void *data = malloc(nbytes ? (size_t)nbytes : 1);
  if (!data)
    return npy_fail(INFER_ERR_OUT_OF_MEMORY, what, "out of memory for %lld bytes of .npy data",
                    (long long)nbytes);
  if (nbytes) memcpy(data, buf + data_off, (size_t)nbytes);
  out->dtype = dt;
  out->rank = rank;
  memcpy(out->dims, h.dims, sizeof(int64_t) * (size_t)rank);
  out->data = data;
  return INFER_OK;
}

/* ---- write --------------------------------------------------------------------------- */

/* The header exactly as numpy 1.24 writes it: sorted keys, repr() values, spare spaces
 * for growing axis 0, then spaces and '\n' so the data starts at a multiple of 64.
 * Returns the prefix+header length, or 0 if it does not fit `cap`. */
static size_t build_header(const tensor *t, const char *code, char *out, size_t cap) {
  char dict[512];
  int n = snprintf(dict, sizeof dict, "{'descr': '%c%s', 'fortran_order': False, 'shape': (",
                   infer_dtype_size(t->dtype) == 1 ? '|' : '<', code);
  for (int i = 0; i < t->rank; i++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, i ? ", %lld" : "%lld",
                  (long long)t->dims[i]);
  n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", t->rank == 1 ? "," : "");
  if (t->rank > 0) {
    char first[24];
    int digits = snprintf(first, sizeof first, "%lld", (long long)t->dims[0]);
    for (int i = digits; i < NPY_GROWTH_DIGITS; i++) dict[n++] = ' ';
  }
  /* rank <= 8 keeps the dict far below sizeof dict; checked anyway */
  if (n <= 0 || (size_t)n >= sizeof dict) return 0;

  size_t hlen = (size_t)n + 1; /* + '\n' */
  size_t prefix = hlen + 10 + NPY_ALIGN > 0xffff ? 12 : 10; /* version 2.0 past 64 KiB */
  size_t pad = NPY_ALIGN - (prefix + hlen) % NPY_ALIGN;     /* 1..64, as numpy */
  size_t total = prefix + hlen + pad;
  if (total > cap) return 0;
  size_t field = hlen + pad;
  memcpy(out, npy_magic, NPY_MAGIC_LEN);
  out[6] = prefix == 10 ? 1 : 2;
  out[7] = 0;
  out[8] = (char)(field & 0xff);
  out[9] = (char)((field >> 8) & 0xff);
  if (prefix == 12) {
    out[10] = (char)((field >> 16) & 0xff);
    out[11] = (char)((field >> 24) & 0xff);
  }
  memcpy(out + prefix, dict, (size_t)n);
  memset(out + prefix + n, ' ', pad);
  out[total - 1] = '\n';
  return total;
}

infer_status npy_write_file(const char *path, const tensor *t) {
  if (!path || !t)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "npy_write_file: NULL %s",
                      path ? "tensor" : "path");
  if (t->dtype == INFER_DTYPE_BFLOAT16)
    return npy_fail(INFER_ERR_UNSUPPORTED, path,
                    "bfloat16 has no NumPy dtype; convert the tensor to float32 to write .npy");
  const char *code = npy_code_of(t->dtype);
  if (!code)
    return npy_fail(INFER_ERR_INVALID_ARGUMENT, path, "cannot write dtype %s (%d) as .npy",
                    infer_dtype_name(t->dtype), (int)t->dtype);
  if (t->rank < 0 || t->rank > INFER_MAX_RANK)
    return npy_fail(INFER_ERR_INVALID_ARGUMENT, path, "tensor rank %d is out of range 0..%d",
                    t->rank, INFER_MAX_RANK);
  int64_t nbytes = tensor_nbytes(t);
  if (nbytes < 0)
    return npy_fail(INFER_ERR_INVALID_ARGUMENT, path,
                    "tensor shape has a negative dim or its size overflows int64");
  if (nbytes > 0 && !t->data)
    return npy_fail(INFER_ERR_INVALID_ARGUMENT, path, "tensor data is NULL");

  char header[1024];
  size_t hsize = build_header(t, code, header, sizeof header);
  if (!hsize) return npy_fail(INFER_ERR_INTERNAL, path, ".npy header does not fit");

  FILE *f = fopen(path, "wb");
  if (!f) return npy_fail(INFER_ERR_IO, path, "cannot open for writing: %s", strerror(errno));
  bool ok = fwrite(header, 1, hsize, f) == hsize &&
            (nbytes == 0 || fwrite(t->data, 1, (size_t)nbytes, f) == (size_t)nbytes);
  int err = errno;
  if (!ok) {
    fclose(f);
    return npy_fail(INFER_ERR_IO, path, "write failed: %s", strerror(err));
  }
  if (fclose(f) != 0) return npy_fail(INFER_ERR_IO, path, "write failed: %s", strerror(errno));
  return INFER_OK;
}
