/* fuzz_server_json.c: libFuzzer target for the example server's request parser
 * (tools/server/server_json.c, called as the server calls it): the input is the body of
 * a POST .../infer against an engine of FUZZ_JSON_MODEL (float X [2, 3] -> Y); a request
 * that parses has its values written into buffers of the engine's input sizes, as the
 * server writes them into a context's input buffers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "include/infer.h"
#include "tools/server/server.h"

static infer_engine *engine;
static void **buffers;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  infer_options *o = NULL;
  if (infer_options_create(&o) != INFER_OK ||
      infer_engine_load(FUZZ_JSON_MODEL, o, &engine) != INFER_OK) {
    fprintf(stderr, "fuzz_server_json: %s: %s\n", FUZZ_JSON_MODEL, infer_last_error());
    abort();
  }
  infer_options_release(o);
  int n = infer_engine_input_count(engine);
  buffers = calloc((size_t)n + 1, sizeof *buffers);
  for (int i = 0; i < n; i++) {
    infer_tensor info;
    infer_engine_input_info(engine, i, NULL, &info);
    buffers[i] = malloc((size_t)(infer_tensor_count(&info) * (int64_t)infer_dtype_size(info.dtype)) + 1);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  srv_request req;
  char err[512];
  if (srv_json_parse_request(engine, (const char *)data, size, &req, err, sizeof err) == 0) {
    srv_json_write_inputs(engine, &req, buffers, err, sizeof err);
    srv_request_clear(&req);
  }
  return 0;
}
