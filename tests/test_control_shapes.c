/* test_control_shapes.c DIR: control flow whose output shapes are derived at build
 * (ops/control_shapes.c), on the CPU, over the node tests tests/ops_control/
 * gen_static_shapes.py writes into DIR (tests/run_control_shapes.sh runs the rest):
 *
 * (a) The engine reports the derived shapes: an If whose branches agree and a Scan have
 *     every output dim known before a run (infer_engine_output_info); an If whose
 *     branches differ has -1 dims.
 * (b) A derived output lives in its planned buffer: infer_context_output_buffer, taken
 *     before the first run, holds each run's result (the bytes infer_context_get_output
 *     points at), run after run.
 * (c) A run whose result has another shape than the one derived at build fails with
 *     INFER_ERR_RUNTIME naming the node and both shapes, writing nothing past the buffer:
 *     the engine's Scan output is given other dims of the same size (as a wrong
 *     derivation would), and the run must refuse the result. A context of an engine left
 *     alone still runs. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "infer.h"

bool test_engine_set_value_dims(infer_engine *e, const char *name, int rank,
                                const int64_t *dims); /* tests/engine_peek.c */

static const char *dir;

/* Engine for node test `test` on the CPU, its inputs read into ins (count in *n_in). */
static infer_engine *load(const char *test, infer_tensor *ins, int *n_in) {
  char path[4096];
  *n_in = 0;
  for (int k = 0; k < 8; k++) {
    snprintf(path, sizeof path, "%s/%s/test_data_set_0/input_%d.pb", dir, test, k);
    FILE *f = fopen(path, "rb");
    if (!f) break;
    fclose(f);
    if (infer_tensor_read_file(path, &ins[k], NULL) != INFER_OK) break;
    (*n_in)++;
  }
  snprintf(path, sizeof path, "%s/%s/model.onnx", dir, test);
  infer_engine *e = NULL;
  CHECK(infer_engine_load(path, NULL, &e) == INFER_OK, "%s", path);
  return e;
}

/* Whether output k of e has every dim known before a run. */
static bool output_static(const infer_engine *e, int k) {
  infer_tensor t;
  if (infer_engine_output_info(e, k, NULL, &t) != INFER_OK) return false;
  if (t.dtype == INFER_DTYPE_UNDEFINED) return false;
  for (int d = 0; d < t.rank; d++)
    if (t.dims[d] < 0) return false;
  return true;
}

static infer_status run(infer_context *c, const infer_tensor *ins, int n_in) {
  for (int i = 0; i < n_in; i++) {
    infer_status s = infer_context_set_input(c, i, &ins[i]);
    if (s != INFER_OK) return s;
  }
  return infer_context_run(c);
}

static void free_inputs(infer_tensor *ins, int n) {
  for (int i = 0; i < n; i++) infer_tensor_clear(&ins[i]);
}

static void test_reported_shapes(void) {
  infer_tensor ins[8];
  int n = 0;
  infer_engine *e = load("test_static_if_branches_agree", ins, &n);
  if (e) {
    infer_tensor t;
    CHECK(output_static(e, 0) && output_static(e, 1), "If with agreeing branches: derived");
    CHECK(infer_engine_output_info(e, 0, NULL, &t) == INFER_OK && t.rank == 2 && t.dims[0] == 3 &&
              t.dims[1] == 2, "If output z: [3, 2], not the branch's declared [7, 7]");
  }
  infer_engine_release(e);
  free_inputs(ins, n);
  e = load("test_static_scan_reverse_axis1", ins, &n);
  if (e) CHECK(output_static(e, 0) && output_static(e, 1), "Scan: derived");
  infer_engine_release(e);
  free_inputs(ins, n);
  e = load("test_dynamic_if_branches_differ", ins, &n);
  if (e) CHECK(!output_static(e, 0), "If with differing branches: known only at run");
  infer_engine_release(e);
  free_inputs(ins, n);
}

static void test_planned_buffer(void) {
  infer_tensor ins[8];
  int n = 0;
  infer_engine *e = load("test_static_scan_reverse_axis1", ins, &n);
  infer_context *c = NULL;
  if (e) CHECK(infer_context_create(e, &c) == INFER_OK);
  const void *buf = NULL;
  int64_t bytes = 0;
  if (c) CHECK(infer_context_output_buffer(c, 1, &buf, &bytes) == INFER_OK && bytes == 15 * 4,
               "the Scan output's buffer, before any run");
  for (int r = 0; buf && r < 2; r++) {
    CHECK(run(c, ins, n) == INFER_OK, "run %d", r);
    infer_tensor got;
    CHECK(infer_context_get_output(c, 1, &got) == INFER_OK && got.data == buf,
          "run %d: the output is in its planned buffer", r);
  }
  infer_context_release(c);
  infer_engine_release(e);
  free_inputs(ins, n);
}

static void test_mismatch(void) {
  infer_tensor ins[8];
  int n = 0;
  infer_engine *e = load("test_static_scan_reverse_axis1", ins, &n);
  const int64_t wrong[3] = {1, 3, 5}; /* the derivation says 1x5x3 */
  infer_context *c = NULL;
  if (e) CHECK(test_engine_set_value_dims(e, "outs", 3, wrong));
  if (e) CHECK(infer_context_create(e, &c) == INFER_OK);
  if (c) {
    infer_status s = run(c, ins, n);
    const char *m = infer_last_error();
    CHECK(s == INFER_ERR_RUNTIME, "a result of another shape fails the run (status %d)", (int)s);
    CHECK(strstr(m, "Scan") && strstr(m, "output 1") && strstr(m, "1x5x3") &&
              strstr(m, "1x3x5") && strstr(m, "derived at build"),
          "the message names the node, the output and both shapes: %s", m);
    printf("mismatch: %s\n", m);
  }
  infer_context_release(c);
  infer_engine_release(e);
  free_inputs(ins, n);
  /* an engine left alone runs */
  c = NULL;
  e = load("test_static_scan_reverse_axis1", ins, &n);
  if (e) CHECK(infer_context_create(e, &c) == INFER_OK);
  if (c) CHECK(run(c, ins, n) == INFER_OK, "an engine whose shapes were not changed runs");
  infer_context_release(c);
  infer_engine_release(e);
  free_inputs(ins, n);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_control_shapes DIR (the node/ folder of "
                    "tests/ops_control/gen_static_shapes.py)\n");
    return 2;
  }
  dir = argv[1];
  test_reported_shapes();
  test_planned_buffer();
  test_mismatch();
  if (failures) printf("%d check(s) failed\n", failures);
  else printf("test_control_shapes: all checks passed\n");
  return failures ? 1 : 0;
}
