/* cuda_concat_in_place.c: Concat parts written in place. A channels-last Concat (along
 * the last axis) copies every part into its slice of the output: each pixel's channels
 * at the part's offset, the output's channel count apart. Where a part is a convolution's
 * output that nothing else reads, the convolution can write that slice itself, and the
 * copy (reading and writing the part once more) goes: SqueezeNet's fire modules and the
 * branches of GoogLeNet's and Inception's modules end so.
 *
 * concat_in_place_find (before the steps are prepared) asks for it: the pitch to write
 * each such part with (cuda_exec.out_pitch while its producer prepares). The convolution
 * says whether its chosen implementation writes so (ops/cuda/cuda_conv.c, which keeps a
 * dense one where the strided one would be slower than dense plus the copy); the engine
 * forgets the parts it refused. The planner then puts the granted parts inside the
 * Concat's buffer (plan_graph's `into`), contexts add the part's byte offset to its
 * address, and the Concat skips the parts already in place (ops/cuda/cuda_movement.c).
 * Only float16 engines (the strided writers are float16 kernels) and not with config
 * keep_values (a part read back would not be dense). */
#include <stdlib.h>
#include <string.h>

#include "../../ops/op.h"
#include "../passes.h"
#include "cuda_concat_in_place.h"

static bool is_conv(const node *n) {
  return !n->removed && (strcmp(n->op_type, "FusedConv") == 0 || strcmp(n->op_type, "Conv") == 0);
}

/* Whether part k of Concat node c (value v, channels `ch` of `total`) may be written in
 * place: a convolution's only output, read by nothing but this Concat, without a
 * residual input (the strided writers read it dense), of the Concat's shape but the last
 * dim, 16-byte aligned in the slice. */
static bool part_ok(const graph *g, const cuda_engine *ce, const int *readers, const node *c,
                    int k, int64_t offset) {
  int v = c->inputs[k], y = c->outputs[0];
  int p = pass_producer(g, v);
  if (p < 0) return false;
  const value *pv = &g->values[v], *py = &g->values[y];
  if (pv->is_output || !pv->shape_known || readers[v] != 1 ||
      ce->storage[v] != INFER_DTYPE_FLOAT16 || pv->t.rank != py->t.rank)
    return false;
  for (int j = 0; j < c->n_inputs; j++)
    if (j != k && c->inputs[j] == v) return false;
  for (int d = 0; d + 1 < pv->t.rank; d++)
    if (pv->t.dims[d] != py->t.dims[d]) return false;
  const node *n = &g->nodes[p];
  if (!is_conv(n) || n->outputs[0] != v) return false;
  if (n->n_inputs > 3 && n->inputs[3] >= 0) return false; /* a residual */
  return offset % 8 == 0;
}

infer_status concat_in_place_find(const infer_engine *e, cuda_engine *ce, int *asked) {
  const graph *g = e->g;
  size_t nv = (size_t)g->n_values + 1;
  *asked = 0;
  ce->into = malloc(sizeof(int) * nv);
  ce->into_off = calloc(nv, sizeof(int64_t));
  ce->out_pitch = calloc(nv, sizeof(int64_t));
  int *readers = pass_count_readers(g); /* the steps are the graph's live nodes */
  infer_status st = INFER_OK;
  if (!ce->into || !ce->into_off || !ce->out_pitch || !readers) {
    st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    goto done;
  }
  for (int v = 0; v < g->n_values; v++) ce->into[v] = -1;
  if (config_flag(&e->opts.cfg, "keep_values", false)) goto done;
  for (int s = 0; s < ce->n_steps; s++) {
    const node *c = &g->nodes[ce->steps[s].node];
    if (!pass_node_is(c, "Concat") || c->n_outputs < 1 || c->outputs[0] < 0) continue;
    int y = c->outputs[0];
    const value *py = &g->values[y];
    int64_t axis = 0;
    if (!py->shape_known || py->t.rank < 2 || ce->storage[y] != INFER_DTYPE_FLOAT16 ||
        attr_get_int(c, "axis", 0, &axis) != INFER_OK)
      continue;
    if (axis < 0) axis += py->t.rank;
    int64_t total = py->t.dims[py->t.rank - 1], offset = 0;
    if (axis != py->t.rank - 1 || total % 8) continue;
    for (int k = 0; k < c->n_inputs; k++) {
      int v = c->inputs[k];
      if (v < 0 || !g->values[v].shape_known) break;
      if (part_ok(g, ce, readers, c, k, offset)) {
        ce->into[v] = y;
        ce->into_off[v] = offset * (int64_t)infer_dtype_size(INFER_DTYPE_FLOAT16);
        ce->out_pitch[v] = total;
        (*asked)++;
      }
      offset += g->values[v].t.dims[g->values[v].t.rank - 1];
    }
  }
done:
  free(readers);
  return st;
}

void concat_in_place_answer(cuda_engine *ce, const node *n, bool taken) {
  if (!ce->into || n->n_outputs < 1 || n->outputs[0] < 0) return;
  int v = n->outputs[0];
  if (ce->into[v] >= 0 && !taken) {
    ce->into[v] = -1;
    ce->into_off[v] = 0;
    ce->out_pitch[v] = 0;
  }
}

int concat_in_place_count(const infer_engine *e, const cuda_engine *ce) {
  int n = 0;
  for (int v = 0; ce->into && v < e->g->n_values; v++) n += ce->into[v] >= 0;
  return n;
}
