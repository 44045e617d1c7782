/* pass_transpose.c: Transpose -> Transpose pairs.
 *
 * With y1 = transpose(x, p) (y1[i] = x[p[i]] on dims) and y2 = transpose(y1, q),
 * y2 = transpose(x, r) with r[i] = p[q[i]]. When r is the identity the pair
 * disappears; otherwise, when y1 has no other reader, the second Transpose reads x
 * with perm r and the first goes. The second's `perm` attribute is rewritten and
 * re-parsed, so its params and its attribute (which backends read) agree. */
#include <stdlib.h>
#include <string.h>

#include "../ops/op.h"
#include "passes.h"

/* Sets n's `perm` attribute to perm and re-parses its params. */
static infer_status set_perm(node *n, int rank, const int *perm) {
  int64_t *ints = malloc(sizeof(int64_t) * ((size_t)rank + 1));
  if (!ints) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cancel-transposes: out of memory");
  for (int i = 0; i < rank; i++) ints[i] = perm[i];
  attr *a = NULL;
  for (int k = 0; k < n->n_attrs && !a; k++)
    if (strcmp(n->attrs[k].name, "perm") == 0) a = &n->attrs[k];
  if (!a) {
    attr *grown = realloc(n->attrs, sizeof(attr) * ((size_t)n->n_attrs + 2));
    char *name = strdup("perm");
    if (!grown || !name) {
      if (grown) n->attrs = grown;
      free(name);
      free(ints);
      return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cancel-transposes: out of memory");
    }
    n->attrs = grown;
    a = &n->attrs[n->n_attrs++];
    memset(a, 0, sizeof *a);
    a->name = name;
  }
  free(a->ints);
  a->type = ATTR_INTS;
  a->ints = ints;
  a->n = rank;
  free(n->params);
  n->params = NULL;
  return n->op->parse ? n->op->parse(n, &n->params) : INFER_OK;
}

infer_status pass_cancel_transposes(graph *g, int *removed) {
  *removed = 0;
  int *readers = pass_count_readers(g);
  if (!readers) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cancel-transposes: out of memory");
  infer_status s = INFER_OK;
  for (int i2 = 0; i2 < g->n_nodes && s == INFER_OK; i2++) {
    node *t2 = &g->nodes[i2];
    if (!pass_node_is(t2, "Transpose") || t2->n_inputs < 1 || t2->n_outputs < 1 ||
        t2->outputs[0] < 0)
      continue;
    int y1 = t2->inputs[0], y2 = t2->outputs[0];
    int i1 = pass_producer(g, y1);
    if (i1 < 0 || !pass_node_is(&g->nodes[i1], "Transpose")) continue;
    int x = g->nodes[i1].inputs[0];
    int r1, r2, p[INFER_MAX_RANK], q[INFER_MAX_RANK], r[INFER_MAX_RANK];
    if (!pass_transpose_perm(g, &g->nodes[i1], &r1, p) || !pass_transpose_perm(g, t2, &r2, q) || r1 != r2)
      continue;
    bool identity = true;
    for (int i = 0; i < r1; i++) {
      r[i] = p[q[i]];
      if (r[i] != i) identity = false;
    }
    bool y1_private = readers[y1] == 1 && !pass_is_graph_output(g, y1);
    if (identity) {
      /* y2 is x: drop the second; the first goes too when nobody else reads it */
      if (!pass_can_bypass(g, i2, x, y2, readers)) continue;
      pass_bypass(g, i2, x, y2, readers);
      (*removed)++;
      if (readers[y1] == 0 && !pass_is_graph_output(g, y1)) {
        pass_remove_node(g, i1, readers);
        (*removed)++;
      }
    } else if (y1_private) {
      s = set_perm(t2, r1, r);
      if (s != INFER_OK) break;
      t2->inputs[0] = x;
      readers[x]++;
      readers[y1]--;
      pass_remove_node(g, i1, readers);
      (*removed)++;
    }
  }
  free(readers);
  return s;
}
