/* server_json.c: the server's JSON codec. Requests are parsed with jansson and checked
 * against the engine's inputs (every failure names the input and what was expected);
 * their values are written straight into the worker context's input buffers;
 * responses are written by hand into one buffer, since building a jansson value per
 * element would cost more than the inference for large outputs. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "server.h"

/* ---- datatypes ---------------------------------------------------------------- */

const char *srv_dtype_kserve(infer_dtype t) {
  switch (t) {
    case INFER_DTYPE_BOOL: return "BOOL";
    case INFER_DTYPE_UINT8: return "UINT8";
    case INFER_DTYPE_UINT16: return "UINT16";
    case INFER_DTYPE_UINT32: return "UINT32";
    case INFER_DTYPE_UINT64: return "UINT64";
    case INFER_DTYPE_INT8: return "INT8";
    case INFER_DTYPE_INT16: return "INT16";
    case INFER_DTYPE_INT32: return "INT32";
    case INFER_DTYPE_INT64: return "INT64";
    case INFER_DTYPE_FLOAT16: return "FP16";
    case INFER_DTYPE_FLOAT32: return "FP32";
    case INFER_DTYPE_FLOAT64: return "FP64";
    case INFER_DTYPE_BFLOAT16: return "BF16";
    default: return NULL;
  }
}

static bool dtype_is_float(infer_dtype t) {
  return t == INFER_DTYPE_FLOAT16 || t == INFER_DTYPE_FLOAT32 || t == INFER_DTYPE_FLOAT64 ||
         t == INFER_DTYPE_BFLOAT16;
}

/* Range of an integer dtype, as long long (UINT64 is limited by JSON parsing to
 * long long anyway). */
static void int_range(infer_dtype t, long long *lo, long long *hi) {
  switch (t) {
    case INFER_DTYPE_UINT8: *lo = 0; *hi = UINT8_MAX; break;
    case INFER_DTYPE_UINT16: *lo = 0; *hi = UINT16_MAX; break;
    case INFER_DTYPE_UINT32: *lo = 0; *hi = UINT32_MAX; break;
    case INFER_DTYPE_UINT64: *lo = 0; *hi = INT64_MAX; break;
    case INFER_DTYPE_INT8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case INFER_DTYPE_INT16: *lo = INT16_MIN; *hi = INT16_MAX; break;
    case INFER_DTYPE_INT32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case INFER_DTYPE_BOOL: *lo = 0; *hi = 1; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX; break;
  }
}

/* ---- request parsing --------------------------------------------------------- */

static int fail(char *err, size_t cap, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, cap, fmt, ap);
  va_end(ap);
  return status;
}

static void shape_text(char *buf, size_t cap, int rank, const int64_t *dims) {
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int k = 0; k < rank && n < cap; k++)
    n += (size_t)snprintf(buf + n, cap - n, k ? ",%" PRId64 : "%" PRId64, dims[k]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

void srv_request_drop_document(srv_request *req) {
  if (req->root) json_decref(req->root);
  req->root = NULL;
  free(req->data);
  req->data = NULL;
}

void srv_request_clear(srv_request *req) {
  if (!req) return;
  srv_request_drop_document(req);
  free(req->outputs);
  free(req->id);
  memset(req, 0, sizeof *req);
}

typedef struct fill_state {
  infer_tensor *t;
  int64_t expected, count;
  long long lo, hi;
  const char *input;
  char *err;
  size_t err_cap;
} fill_state;

/* Stores one JSON value as element fs->count; the data is flat or nested exactly as the
 * shape (both are KServe; check_nesting made sure which), in row-major order, so an
 * array is only ever met above the last level. Returns 0 or 400. */
static int fill_value(fill_state *fs, json_t *v, int depth) {
  if (json_is_array(v)) {
    if (depth > INFER_MAX_RANK) /* check_nesting stops this; kept as a bound on recursion */
      return fail(fs->err, fs->err_cap, 400, "input '%s': data nested deeper than %d levels",
                  fs->input, INFER_MAX_RANK);
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) {
      if (json_is_array(x) && depth == fs->t->rank && depth > 1)
        return fail(fs->err, fs->err_cap, 400,
                    "input '%s': data is nested deeper than the %d levels of its shape",
                    fs->input, fs->t->rank);
      if (json_is_array(x) && depth == 1 && !json_is_array(json_array_get(v, 0)))
        return fail(fs->err, fs->err_cap, 400,
                    "input '%s': data[%zu] is an array in flat data (\"data\" is flat, or "
                    "nested exactly as the shape)", fs->input, i);
      int rc = fill_value(fs, x, depth + 1);
      if (rc) return rc;
    }
    return 0;
  }
  int64_t at = fs->count++;
  infer_dtype t = fs->t->dtype;
  if (t == INFER_DTYPE_BOOL) {
    long long b;
    if (json_is_boolean(v)) b = json_is_true(v);
    else if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1))
      b = json_integer_value(v);
    else
      return fail(fs->err, fs->err_cap, 400, "input '%s': data[%" PRId64 "] is not a boolean",
                  fs->input, at);
    if (at < fs->expected) ((uint8_t *)fs->t->data)[at] = (uint8_t)b;
    return 0;
  }
  if (!json_is_number(v))
    return fail(fs->err, fs->err_cap, 400, "input '%s': data[%" PRId64 "] is not a number",
                fs->input, at);
  if (at >= fs->expected) return 0; /* counted; the count check reports it */
  if (dtype_is_float(t)) {
    double d = json_number_value(v);
    if (t == INFER_DTYPE_FLOAT32) ((float *)fs->t->data)[at] = (float)d;
    else if (t == INFER_DTYPE_FLOAT64) ((double *)fs->t->data)[at] = d;
    else infer_tensor_set(fs->t, at, d);
    return 0;
  }
  long long iv;
  if (json_is_integer(v)) {
    iv = json_integer_value(v);
  } else {
    double d = json_real_value(v);
    if (!(d == floor(d)) || d < -9.2e18 || d > 9.2e18)
      return fail(fs->err, fs->err_cap, 400,
                  "input '%s': data[%" PRId64 "] = %g is not an integer (datatype %s)", fs->input,
                  at, d, srv_dtype_kserve(t));
    iv = (long long)d;
  }
  if (iv < fs->lo || iv > fs->hi)
    return fail(fs->err, fs->err_cap, 400,
                "input '%s': data[%" PRId64 "] = %lld is out of range for %s", fs->input, at, iv,
                srv_dtype_kserve(t));
  void *p = fs->t->data;
  switch (t) {
    case INFER_DTYPE_UINT8: ((uint8_t *)p)[at] = (uint8_t)iv; break;
    case INFER_DTYPE_UINT16: ((uint16_t *)p)[at] = (uint16_t)iv; break;
    case INFER_DTYPE_UINT32: ((uint32_t *)p)[at] = (uint32_t)iv; break;
    case INFER_DTYPE_UINT64: ((uint64_t *)p)[at] = (uint64_t)iv; break;
    case INFER_DTYPE_INT8: ((int8_t *)p)[at] = (int8_t)iv; break;
    case INFER_DTYPE_INT16: ((int16_t *)p)[at] = (int16_t)iv; break;
    case INFER_DTYPE_INT32: ((int32_t *)p)[at] = (int32_t)iv; break;
    case INFER_DTYPE_INT64: ((int64_t *)p)[at] = (int64_t)iv; break;
    default: infer_tensor_set(fs->t, at, (double)iv); break;
  }
  return 0;
}

/* "data" is either flat (values only, count checked when they are written) or nested
 * level by level as the shape: data[i] has shape[1] entries, data[i][j] shape[2], and
 * so on, values at the last level (those are checked when written). Anything between
 * is a 400 naming where it differs, rather than values silently taken in another
 * order. */
static int check_level(const char *name, json_t *a, const infer_tensor *want, int level,
                       char *path, size_t path_len, char *err, size_t cap) {
  char shape[160];
  size_t n = json_array_size(a);
  if ((int64_t)n != want->dims[level]) {
    shape_text(shape, sizeof shape, want->rank, want->dims);
    return fail(err, cap, 400,
                "input '%s': %s has %zu entr%s, shape %s needs %" PRId64 " there (\"data\" is "
                "flat, or nested exactly as the shape)",
                name, path, n, n == 1 ? "y" : "ies", shape, want->dims[level]);
  }
  if (level + 1 == want->rank) return 0; /* values: checked when written */
  for (size_t i = 0; i < n; i++) {
    json_t *x = json_array_get(a, i);
    size_t len = path_len + (size_t)snprintf(path + path_len, 256 - path_len, "[%zu]", i);
    if (len >= 256) len = 255;
    if (!json_is_array(x)) {
      shape_text(shape, sizeof shape, want->rank, want->dims);
      return fail(err, cap, 400,
                  "input '%s': %s is not an array: nested data must have the %d levels of "
                  "shape %s",
                  name, path, want->rank, shape);
    }
    int rc = check_level(name, x, want, level + 1, path, len, err, cap);
    path[path_len] = 0;
    if (rc) return rc;
  }
  return 0;
}

static int check_nesting(const char *name, json_t *data, const infer_tensor *want, char *err,
                         size_t cap) {
  if (!json_is_array(json_array_get(data, 0))) return 0; /* flat (or empty) */
  if (want->rank < 2) {
    char shape[160];
    shape_text(shape, sizeof shape, want->rank, want->dims);
    return fail(err, cap, 400, "input '%s': data[0] is an array, but shape %s has %d level%s",
                name, shape, want->rank, want->rank == 1 ? "" : "s");
  }
  char path[256] = "data";
  return check_level(name, data, want, 0, path, 4, err, cap);
}

/* One entry of "inputs". */
static int parse_input(const infer_engine *e, json_t *in, size_t pos, srv_request *req,
                       char *err, size_t cap) {
  if (!json_is_object(in)) return fail(err, cap, 400, "inputs[%zu] is not an object", pos);
  json_t *jname = json_object_get(in, "name");
  if (!json_is_string(jname)) return fail(err, cap, 400, "inputs[%zu] has no \"name\" string", pos);
  const char *name = json_string_value(jname);
  int k = infer_engine_input_index(e, name);
  if (k < 0) {
    char names[512];
    size_t n = 0;
    names[0] = 0;
    for (int i = 0; i < infer_engine_input_count(e) && n < sizeof names; i++) {
      const char *nm;
      infer_engine_input_info(e, i, &nm, NULL);
      n += (size_t)snprintf(names + n, sizeof names - n, i ? ", %s" : "%s", nm);
    }
    return fail(err, cap, 400, "unknown input '%s' (the model's inputs: %s)", name, names);
  }
  if (req->data[k]) return fail(err, cap, 400, "input '%s' is given twice", name);
  infer_tensor want;
  infer_engine_input_info(e, k, NULL, &want);
  const char *want_type = srv_dtype_kserve(want.dtype);

  json_t *jtype = json_object_get(in, "datatype");
  if (!json_is_string(jtype))
    return fail(err, cap, 400, "input '%s' has no \"datatype\" string (expected %s)", name,
                want_type ? want_type : "?");
  if (!want_type)
    return fail(err, cap, 400, "input '%s': the model's dtype %s has no KServe datatype", name,
                infer_dtype_name(want.dtype));
  if (strcmp(json_string_value(jtype), want_type) != 0)
    return fail(err, cap, 400, "input '%s': datatype %s does not match the model's %s", name,
                json_string_value(jtype), want_type);

  char want_shape[160], got_shape[160];
  shape_text(want_shape, sizeof want_shape, want.rank, want.dims);
  json_t *jshape = json_object_get(in, "shape");
  if (!json_is_array(jshape))
    return fail(err, cap, 400, "input '%s' has no \"shape\" array (expected %s)", name,
                want_shape);
  size_t rank = json_array_size(jshape);
  bool same = rank == (size_t)want.rank;
  int64_t got_dims[INFER_MAX_RANK];
  for (size_t d = 0; d < rank; d++) {
    json_t *jd = json_array_get(jshape, d);
    if (!json_is_integer(jd))
      return fail(err, cap, 400, "input '%s': shape[%zu] is not an integer", name, d);
    int64_t v = json_integer_value(jd);
    if (d < INFER_MAX_RANK) got_dims[d] = v;
    same = same && v == want.dims[d]; /* rank checked first: d < want.rank here */
  }
  if (!same) {
    if (rank <= INFER_MAX_RANK) shape_text(got_shape, sizeof got_shape, (int)rank, got_dims);
    else snprintf(got_shape, sizeof got_shape, "(rank %zu)", rank);
    return fail(err, cap, 400, "input '%s': shape %s does not match the model's %s", name,
                got_shape, want_shape);
  }

  json_t *jparams = json_object_get(in, "parameters");
  if (json_is_object(jparams) && json_object_get(jparams, "binary_data_size"))
    return fail(err, cap, 400, "input '%s': binary tensor data is not supported, send \"data\"",
                name);
  json_t *jdata = json_object_get(in, "data");
  if (!json_is_array(jdata))
    return fail(err, cap, 400, "input '%s' has no \"data\" array", name);

  int64_t count = infer_tensor_count(&want);
  size_t es = infer_dtype_size(want.dtype);
  if (count < 0 || es == 0) return fail(err, cap, 400, "input '%s': unsupported shape", name);
  int rc = check_nesting(name, jdata, &want, err, cap);
  if (rc) return rc;
  req->data[k] = jdata; /* its values are written by srv_json_write_inputs */
  return 0;
}

int srv_json_write_inputs(const infer_engine *e, const srv_request *req, void *const *buffers,
                          char *err, size_t cap) {
  for (int k = 0; k < req->n_inputs; k++) {
    const char *name;
    infer_tensor t;
    infer_engine_input_info(e, k, &name, &t);
    t.data = buffers[k];
    int64_t count = infer_tensor_count(&t);
    fill_state fs = {.t = &t, .expected = count, .input = name, .err = err, .err_cap = cap};
    int_range(t.dtype, &fs.lo, &fs.hi);
    int rc = fill_value(&fs, req->data[k], 1);
    if (rc) return rc;
    if (fs.count != count) {
      char shape[160];
      shape_text(shape, sizeof shape, t.rank, t.dims);
      return fail(err, cap, 400, "input '%s': %" PRId64 " values in \"data\", shape %s needs %" PRId64,
                  name, fs.count, shape, count);
    }
  }
  return 0;
}

static int parse_outputs(const infer_engine *e, json_t *jouts, srv_request *req, char *err,
                         size_t cap) {
  int n_out = infer_engine_output_count(e);
  if (!jouts) { /* all outputs, in model order */
    req->outputs = malloc((size_t)(n_out ? n_out : 1) * sizeof *req->outputs);
    if (!req->outputs) return fail(err, cap, 500, "out of memory");
    for (int i = 0; i < n_out; i++) req->outputs[i] = i;
    req->n_outputs = n_out;
    return 0;
  }
  if (!json_is_array(jouts)) return fail(err, cap, 400, "\"outputs\" is not an array");
  size_t n = json_array_size(jouts);
  if (n == 0) return fail(err, cap, 400, "\"outputs\" is empty");
  if (n > (size_t)n_out)
    return fail(err, cap, 400, "%zu outputs asked, the model has %d", n, n_out);
  req->outputs = malloc(n * sizeof *req->outputs);
  if (!req->outputs) return fail(err, cap, 500, "out of memory");
  for (size_t i = 0; i < n; i++) {
    json_t *o = json_array_get(jouts, i);
    json_t *jname = json_is_object(o) ? json_object_get(o, "name") : NULL;
    if (!json_is_string(jname))
      return fail(err, cap, 400, "outputs[%zu] has no \"name\" string", i);
    const char *name = json_string_value(jname);
    int k = infer_engine_output_index(e, name);
    if (k < 0) return fail(err, cap, 400, "unknown output '%s'", name);
    for (size_t j = 0; j < i; j++)
      if (req->outputs[j] == k) return fail(err, cap, 400, "output '%s' is asked twice", name);
    json_t *jp = json_object_get(o, "parameters");
    json_t *jb = json_is_object(jp) ? json_object_get(jp, "binary_data") : NULL;
    if (json_is_true(jb))
      return fail(err, cap, 400, "output '%s': binary tensor data is not supported", name);
    req->outputs[i] = k;
    req->n_outputs = (int)i + 1;
  }
  return 0;
}

int srv_json_parse_request(const infer_engine *e, const char *body, size_t len,
                           srv_request *req, char *err, size_t cap) {
  memset(req, 0, sizeof *req);
  json_error_t jerr;
  json_t *root = json_loadb(body, len, 0, &jerr);
  if (!root)
    return fail(err, cap, 400, "invalid JSON: %s (line %d, column %d)", jerr.text, jerr.line,
                jerr.column);
  int rc = 0;
  int n_in = infer_engine_input_count(e);
  json_t *jin = json_object_get(root, "inputs");
  json_t *jid = json_object_get(root, "id");
  if (!json_is_object(root)) {
    rc = fail(err, cap, 400, "the request is not a JSON object");
  } else if (!json_is_array(jin)) {
    rc = fail(err, cap, 400, "the request has no \"inputs\" array");
  } else if (jid && !json_is_string(jid)) {
    rc = fail(err, cap, 400, "\"id\" is not a string");
  } else if (!(req->data = calloc((size_t)(n_in ? n_in : 1), sizeof *req->data))) {
    rc = fail(err, cap, 500, "out of memory");
  } else {
    req->n_inputs = n_in;
    if (jid && !(req->id = strdup(json_string_value(jid)))) rc = fail(err, cap, 500, "out of memory");
    size_t i;
    json_t *in;
    json_array_foreach(jin, i, in) {
      if (rc) break;
      rc = parse_input(e, in, i, req, err, cap);
    }
    for (int k = 0; !rc && k < n_in; k++) {
      if (req->data[k]) continue;
      const char *name;
      infer_engine_input_info(e, k, &name, NULL);
      rc = fail(err, cap, 400, "missing input '%s'", name);
    }
    if (!rc) rc = parse_outputs(e, json_object_get(root, "outputs"), req, err, cap);
  }
  req->root = root; /* kept: the "data" arrays are written into the buffers later */
  if (rc) srv_request_clear(req);
  return rc;
}

/* ---- response writing ------------------------------------------------------- */

typedef struct sbuf {
  char *p;
  size_t len, cap;
  bool oom;
} sbuf;

static bool sb_reserve(sbuf *b, size_t more) {
  if (b->oom) return false;
  if (b->len + more + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + more + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = true;
    return false;
  }
  b->p = p;
  b->cap = cap;
  return true;
}

static void sb_put(sbuf *b, const char *s, size_t n) {
  if (!sb_reserve(b, n)) return;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}

static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_printf(sbuf *b, const char *fmt, ...) {
  char tmp[64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    sb_put(b, tmp, (size_t)n);
    return;
  }
  if (!sb_reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void sb_string(sbuf *b, const char *s) {
  sb_put(b, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      char esc[2] = {'\\', (char)*p};
      sb_put(b, esc, 2);
    } else if (*p < 0x20) {
      sb_printf(b, "\\u%04x", *p);
    } else {
      sb_put(b, (const char *)p, 1);
    }
  }
  sb_put(b, "\"", 1);
}

static void sb_shape(sbuf *b, const infer_tensor *t) {
  sb_put(b, "[", 1);
  for (int k = 0; k < t->rank; k++) sb_printf(b, k ? ",%" PRId64 : "%" PRId64, t->dims[k]);
  sb_put(b, "]", 1);
}

/* Element i; floats that JSON cannot hold (NaN, infinities) are written as null. */
static void sb_element(sbuf *b, const infer_tensor *t, int64_t i) {
  const void *p = t->data;
  switch (t->dtype) {
    case INFER_DTYPE_BOOL: sb_puts(b, ((const uint8_t *)p)[i] ? "true" : "false"); return;
    case INFER_DTYPE_UINT8: sb_printf(b, "%u", (unsigned)((const uint8_t *)p)[i]); return;
    case INFER_DTYPE_UINT16: sb_printf(b, "%u", (unsigned)((const uint16_t *)p)[i]); return;
    case INFER_DTYPE_UINT32: sb_printf(b, "%" PRIu32, ((const uint32_t *)p)[i]); return;
    case INFER_DTYPE_UINT64: sb_printf(b, "%" PRIu64, ((const uint64_t *)p)[i]); return;
    case INFER_DTYPE_INT8: sb_printf(b, "%d", (int)((const int8_t *)p)[i]); return;
    case INFER_DTYPE_INT16: sb_printf(b, "%d", (int)((const int16_t *)p)[i]); return;
    case INFER_DTYPE_INT32: sb_printf(b, "%" PRId32, ((const int32_t *)p)[i]); return;
    case INFER_DTYPE_INT64: sb_printf(b, "%" PRId64, ((const int64_t *)p)[i]); return;
    default: break;
  }
  double v = t->dtype == INFER_DTYPE_FLOAT32 ? ((const float *)p)[i] : infer_tensor_get(t, i);
  if (!isfinite(v)) sb_puts(b, "null");
  else if (t->dtype == INFER_DTYPE_FLOAT64) sb_printf(b, "%.17g", v);
  else sb_printf(b, "%.9g", v); /* round-trips float32 (and so fp16, bf16) */
}

char *srv_json_response(const infer_engine *e, const char *model_name, const srv_request *req,
                        const infer_tensor *outs, size_t *len) {
  sbuf b = {0};
  sb_puts(&b, "{\"model_name\":");
  sb_string(&b, model_name);
  sb_puts(&b, ",\"model_version\":\"1\"");
  if (req->id) {
    sb_puts(&b, ",\"id\":");
    sb_string(&b, req->id);
  }
  sb_puts(&b, ",\"outputs\":[");
  for (int i = 0; i < req->n_outputs; i++) {
    const char *name;
    infer_engine_output_info(e, req->outputs[i], &name, NULL);
    const infer_tensor *t = &outs[i];
    const char *dt = srv_dtype_kserve(t->dtype);
    sb_puts(&b, i ? ",{\"name\":" : "{\"name\":");
    sb_string(&b, name);
    sb_puts(&b, ",\"datatype\":");
    sb_string(&b, dt ? dt : infer_dtype_name(t->dtype));
    sb_puts(&b, ",\"shape\":");
    sb_shape(&b, t);
    sb_puts(&b, ",\"data\":[");
    int64_t n = infer_tensor_count(t);
    for (int64_t k = 0; k < n && !b.oom; k++) {
      if (k) sb_put(&b, ",", 1);
      sb_element(&b, t, k);
    }
    sb_puts(&b, "]}");
  }
  sb_puts(&b, "]}");
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  *len = b.len;
  return b.p;
}

/* ---- metadata and errors (jansson: small, and escaping done for us) ------------- */

static char *dump(json_t *v, size_t *len) {
  if (!v) return NULL;
  char *s = json_dumps(v, JSON_COMPACT);
  json_decref(v);
  if (s) *len = strlen(s);
  return s;
}

static json_t *tensor_meta(const char *name, const infer_tensor *t) {
  json_t *shape = json_array();
  for (int k = 0; k < t->rank; k++) json_array_append_new(shape, json_integer(t->dims[k]));
  const char *dt = srv_dtype_kserve(t->dtype);
  return json_pack("{s:s, s:s, s:o}", "name", name, "datatype", dt ? dt : infer_dtype_name(t->dtype),
                   "shape", shape);
}

char *srv_json_model_metadata(const infer_engine *e, const char *model_name,
                              const srv_config *cfg, size_t *len) {
  json_t *ins = json_array(), *outs = json_array();
  for (int i = 0; i < infer_engine_input_count(e); i++) {
    const char *name;
    infer_tensor t;
    infer_engine_input_info(e, i, &name, &t);
    json_array_append_new(ins, tensor_meta(name, &t));
  }
  for (int i = 0; i < infer_engine_output_count(e); i++) {
    const char *name;
    infer_tensor t;
    infer_engine_output_info(e, i, &name, &t);
    json_array_append_new(outs, tensor_meta(name, &t));
  }
  static const char *precisions[] = {"fp32", "tf32", "fp16"};
  json_t *params = json_pack("{s:s, s:s, s:i}", "device",
                             cfg->device == INFER_DEVICE_CUDA ? "cuda" : "cpu", "precision",
                             precisions[cfg->precision], "workers", cfg->workers);
  return dump(json_pack("{s:s, s:[s], s:s, s:o, s:o, s:o}", "name", model_name, "versions", "1",
                        "platform", "onnx", "inputs", ins, "outputs", outs, "parameters", params),
              len);
}

char *srv_json_server_metadata(size_t *len) {
  return dump(json_pack("{s:s, s:s, s:[]}", "name", "infer-server", "version", infer_version(),
                        "extensions"),
              len);
}

char *srv_json_error(const char *msg, size_t *len) {
  /* json_string refuses invalid UTF-8 (a model name in a message could be); fall back */
  json_t *s = json_string(msg);
  if (!s) s = json_string("(message not valid UTF-8)");
  return dump(json_pack("{s:o}", "error", s), len);
}
