/* test_limits.c: the bounds on hostile models (issue 15).
 *
 * - loaders/onnx_nesting.c: models built here in memory nesting 0, 64 (the limit) and 65
 *   subgraph levels, and 200000 (the 4.7 MB model that crashed protobuf-c); wire data
 *   that is malformed where the walk descends (truncated varints and lengths, groups)
 *   must be refused, what it skips (unknown fields) not looked into.
 * - infer_options_set_memory_limit: negative limits refused; the smallest host limit
 *   under which an engine and one context fit, found by bisection, admits exactly one
 *   context: a second fails with INFER_ERR_OUT_OF_MEMORY naming the limit before it
 *   allocates, and fits once the first is released (contexts give back what they took).
 *   With `--device cuda` the same for the device limit (the test gpu_limits).
 * Usage: test_limits MODEL.onnx [--device cuda]  (MODEL: tests/malformed/cases/good.onnx)
 * Exit 77 with --device cuda where no GPU is visible. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../loaders/onnx_nesting.h"
#include "check.h"

/* ---- models written backwards into a buffer (each level is a prefix of the next) ---- */
typedef struct back_buf {
  uint8_t *data;
  size_t cap, pos; /* the bytes are data[pos, cap) */
} back_buf;

static void prepend(back_buf *b, const void *bytes, size_t n) {
  if (n > b->pos) {
    fprintf(stderr, "test_limits: buffer too small\n");
    exit(2);
  }
  b->pos -= n;
  memcpy(b->data + b->pos, bytes, n);
}
static void prepend_varint(back_buf *b, uint64_t v) {
  uint8_t t[10];
  size_t n = 0;
  do {
    t[n] = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v) t[n] |= 0x80;
    n++;
  } while (v);
  prepend(b, t, n);
}
static size_t used(const back_buf *b) { return b->cap - b->pos; }
/* a length-delimited field whose payload is what has been written, less the last
 * end_used bytes */
static void wrap(back_buf *b, uint32_t field, size_t end_used) {
  prepend_varint(b, used(b) - end_used);
  prepend_varint(b, (uint64_t)field << 3 | 2);
}

/* A ModelProto whose main graph nests `depth` subgraph levels through attribute `g`
 * (field 6) or `graphs` (field 11) of each level's one node. */
static back_buf nested_model(int depth, uint32_t attr_field) {
  back_buf b;
  b.cap = 64 + (size_t)depth * 40;
  b.data = malloc(b.cap);
  b.pos = b.cap;
  for (int k = depth - 1; k >= 0; k--) {
    wrap(&b, attr_field, 0);                   /* attribute.g / graphs = level k+1 */
    prepend(&b, "\xa0\x01\x05", 3);            /* attribute.type = GRAPH */
    prepend(&b, "\x0a\x04" "body", 6);         /* attribute.name */
    wrap(&b, 5, 0);                            /* node.attribute */
    prepend(&b, "\x22\x08" "Identity", 10);    /* node.op_type */
    wrap(&b, 1, 0);                            /* graph.node */
  }
  wrap(&b, 7, 0);                              /* model.graph */
  prepend(&b, "\x42\x02\x10\x0d", 4);          /* opset_import { version: 13 } */
  prepend(&b, "\x08\x08", 2);                  /* ir_version: 8 */
  return b;
}

static infer_status walk(const back_buf *b) {
  return onnx_check_nesting(b->data + b->pos, used(b), "test.onnx");
}

static void test_nesting(void) {
  for (int i = 0; i < 2; i++) {
    uint32_t field = i ? 11 : 6;
    back_buf b = nested_model(0, field);
    EXPECT_STATUS(walk(&b), INFER_OK);
    free(b.data);
    b = nested_model(ONNX_MAX_SUBGRAPH_DEPTH, field);
    EXPECT_STATUS(walk(&b), INFER_OK);
    free(b.data);
    b = nested_model(ONNX_MAX_SUBGRAPH_DEPTH + 1, field);
    EXPECT(walk(&b), INFER_ERR_INVALID_MODEL, "more than 64 levels");
    free(b.data);
    b = nested_model(200000, field);
    EXPECT(walk(&b), INFER_ERR_INVALID_MODEL, "ONNX_MAX_SUBGRAPH_DEPTH");
    free(b.data);
  }
  /* malformed where the walk descends */
  static const struct {
    const char *bytes;
    size_t n;
    infer_status want;
  } cases[] = {
      {"\x08", 1, INFER_ERR_INVALID_MODEL},             /* varint field cut */
      {"\x08\x80", 2, INFER_ERR_INVALID_MODEL},         /* varint continues past the end */
      {"\x3a\x05\x0a", 3, INFER_ERR_INVALID_MODEL},     /* graph longer than the file */
      {"\x3a\x02\x0a\x05", 4, INFER_ERR_INVALID_MODEL}, /* node longer than its graph */
      {"\x0b\x0c", 2, INFER_ERR_INVALID_MODEL},         /* a group (wire type 3) */
      {"\x00\x00", 2, INFER_ERR_INVALID_MODEL},         /* field number 0 */
      {"\x09\x01\x02\x03", 4, INFER_ERR_INVALID_MODEL}, /* fixed64 cut */
      {"\x08\x08\x12\x00", 4, INFER_OK},                /* ir_version, empty producer */
      /* an unknown field's payload is skipped, not parsed: garbage inside is the
       * decoder's business (it skips it too) */
      {"\xfa\x01\x03\x0b\xff\xff", 6, INFER_OK},
      /* a TensorProto initializer is not descended into either */
      {"\x3a\x04\x2a\x02\x0b\x0b", 6, INFER_OK},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    infer_status s = onnx_check_nesting((const uint8_t *)cases[i].bytes, cases[i].n, "t.onnx");
    CHECK(s == cases[i].want, "wire case %zu: got %s", i, infer_status_name(s));
  }
  EXPECT_STATUS(onnx_check_nesting((const uint8_t *)"", 0, "empty.onnx"), INFER_OK);
}

/* ---- memory limits ---------------------------------------------------------------- */
static infer_options *options(infer_device dev, int64_t host, int64_t device) {
  infer_options *o = NULL;
  if (infer_options_create(&o) != INFER_OK) return NULL;
  infer_options_set_device(o, dev, 0);
  if (infer_options_set_memory_limit(o, host, device) != INFER_OK) {
    infer_options_release(o);
    return NULL;
  }
  return o;
}

/* Engine and one context under the limit (host or device): 1 when both were made. */
static int fits(const char *model, infer_device dev, bool on_device, int64_t limit) {
  infer_options *o = options(dev, on_device ? 0 : limit, on_device ? limit : 0);
  infer_engine *e = NULL;
  infer_context *c = NULL;
  int ok = o && infer_engine_load(model, o, &e) == INFER_OK &&
           infer_context_create(e, &c) == INFER_OK;
  infer_context_release(c);
  infer_engine_release(e);
  infer_options_release(o);
  return ok;
}

static void test_memory_limit(const char *model, infer_device dev) {
  infer_options *o = NULL;
  EXPECT_STATUS(infer_options_create(&o), INFER_OK);
  EXPECT(infer_options_set_memory_limit(o, -1, 0), INFER_ERR_INVALID_ARGUMENT, "negative");
  EXPECT(infer_options_set_memory_limit(o, 0, -5), INFER_ERR_INVALID_ARGUMENT, "negative");
  EXPECT(infer_options_set_memory_limit(NULL, 1, 1), INFER_ERR_INVALID_ARGUMENT, NULL);
  infer_options_release(o);

  bool on_device = dev == INFER_DEVICE_CUDA;
  const char *kind = on_device ? "device memory limit" : "host memory limit";
  CHECK(fits(model, dev, on_device, 0), "no limit: the model must load and get a context");
  CHECK(!fits(model, dev, on_device, 1), "a 1-byte limit must refuse");
  /* the smallest limit that admits the engine and one context */
  int64_t lo = 1, hi = (int64_t)1 << 30; /* fits(lo) false, fits(hi) true */
  if (!fits(model, dev, on_device, hi)) {
    CHECK(0, "1 GiB must be enough for %s", model);
    return;
  }
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (fits(model, dev, on_device, mid)) hi = mid;
    else lo = mid;
  }
  printf("engine + one context of %s fit in %lld bytes of %s\n", model, (long long)hi, kind);
  o = options(dev, on_device ? 0 : hi, on_device ? hi : 0);
  infer_engine *e = NULL;
  infer_context *c1 = NULL, *c2 = NULL;
  EXPECT_STATUS(infer_engine_load(model, o, &e), INFER_OK);
  if (e) {
    EXPECT_STATUS(infer_context_create(e, &c1), INFER_OK);
    /* the second context does not fit: refused before allocating, naming the limit */
    EXPECT(infer_context_create(e, &c2), INFER_ERR_OUT_OF_MEMORY, kind);
    CHECK(strstr(infer_last_error(), "context") != NULL, "the message names the context");
    CHECK(c2 == NULL);
    infer_context_release(c1);
    c1 = NULL;
    /* what the first took was given back: a new one fits, and runs */
    EXPECT_STATUS(infer_context_create(e, &c2), INFER_OK);
    float x[6] = {1, 2, 3, 4, 5, 6};
    infer_tensor in = {.dtype = INFER_DTYPE_FLOAT32, .rank = 2, .dims = {2, 3}, .data = x};
    if (c2) EXPECT_STATUS(infer_context_set_input(c2, 0, &in), INFER_OK);
    if (c2) EXPECT_STATUS(infer_context_run(c2), INFER_OK);
    infer_context_release(c2);
  }
  infer_engine_release(e);
  infer_options_release(o);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_limits MODEL.onnx [--device cuda]\n");
    return 2;
  }
  infer_device dev = argc > 3 && strcmp(argv[3], "cuda") == 0 ? INFER_DEVICE_CUDA
                                                               : INFER_DEVICE_CPU;
  if (dev == INFER_DEVICE_CUDA && infer_device_count(INFER_DEVICE_CUDA) == 0) {
    printf("test_limits: SKIP: no CUDA device visible\n");
    return 77;
  }
  if (dev == INFER_DEVICE_CPU) test_nesting();
  test_memory_limit(argv[1], dev);
  return check_report("test_limits");
}
