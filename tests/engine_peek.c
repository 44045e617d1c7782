/* engine_peek.c: what test programs read or change inside an engine, in a file of its own
 * (the engine's internal header clashes with names of the test programs):
 * - test_engine_dynamic: the "some shapes depend on run-time data" flag, which the CUDA
 *   backend refuses (conformance --static-shapes);
 * - test_engine_set_value_dims: gives value `name` other dims of the same byte size, as a
 *   wrong shape derivation would have (test_control_shapes: a run must refuse the
 *   result it gets, never write past the buffer planned). Call it before a context is
 *   created; false when there is no such value or the sizes differ. */
#include <string.h>

#include "engine/engine_internal.h"

bool test_engine_dynamic(const infer_engine *e);
bool test_engine_set_value_dims(infer_engine *e, const char *name, int rank, const int64_t *dims);

bool test_engine_dynamic(const infer_engine *e) { return e->dynamic; }

bool test_engine_set_value_dims(infer_engine *e, const char *name, int rank, const int64_t *dims) {
  int v = graph_find_value(e->g, name);
  if (v < 0 || rank < 0 || rank > INFER_MAX_RANK) return false;
  tensor *t = &e->g->values[v].t;
  if (tensor_nbytes_of(t->dtype, rank, dims) != tensor_nbytes(t)) return false;
  t->rank = rank;
  memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
  return true;
}
