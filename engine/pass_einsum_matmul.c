/* pass_einsum_matmul.c: einsum-to-matmul. An Einsum of two operands that is a batched
 * matrix product, "<batch> m k, <batch> k n -> <batch> m n" with each operand's last two
 * letters in either order (MaxViT's attention: "BGHID,BGHJD->BGHIJ" and
 * "BGHIJ,BGHJD->BGHID"), becomes a MatMul, with a Transpose of the last two axes before
 * an operand whose letters come as (k, m) or (n, k). Then the GPU runs it as it runs any
 * MatMul (the CUDA backend has no Einsum) and the CPU through the same GEMM as before.
 * Matched only when both operands and the output have the same batch letters in the same
 * order, all dims known and equal between the operands, the contracted one too (no
 * broadcast, no ellipsis, no repeated letter), float dtypes. */
#include <stdlib.h>
#include <string.h>

#include "../ops/einsum_plan.h"
#include "../ops/op.h"
#include "passes.h"

/* The two labels after the batch: which of them is shared with the other operand. */
typedef struct em_match {
  bool trans_a, trans_b; /* A given as [.., k, m], B as [.., n, k] */
} em_match;

static bool term_plain(const einsum_term *t) {
  if (t->ellipsis_at >= 0 || t->n < 2) return false;
  for (int i = 0; i < t->n; i++)
    for (int j = 0; j < i; j++)
      if (t->label[i] == t->label[j]) return false;
  return true;
}

static bool match(const einsum_params *p, const value *a, const value *b, em_match *m) {
  if (p->n_operands != 2) return false;
  const einsum_term *ta = &p->in[0], *tb = &p->in[1], *to = &p->out;
  if (!term_plain(ta) || !term_plain(tb) || !term_plain(to)) return false;
  int nb = to->n - 2;
  if (ta->n != to->n || tb->n != to->n || nb < 0) return false;
  for (int i = 0; i < nb; i++)
    if (ta->label[i] != to->label[i] || tb->label[i] != to->label[i]) return false;
  int mo = to->label[nb], no = to->label[nb + 1];
  int a0 = ta->label[nb], a1 = ta->label[nb + 1], b0 = tb->label[nb], b1 = tb->label[nb + 1];
  int k;
  if (a0 == mo) k = a1, m->trans_a = false;
  else if (a1 == mo) k = a0, m->trans_a = true;
  else return false;
  if (b1 == no && b0 == k) m->trans_b = false;
  else if (b0 == no && b1 == k) m->trans_b = true;
  else return false;
  if (k == mo || k == no || mo == no) return false;
  if (!a->shape_known || !b->shape_known || a->t.rank != to->n || b->t.rank != to->n)
    return false;
  if (!dtype_is_float(a->t.dtype) || a->t.dtype != b->t.dtype) return false;
  for (int i = 0; i < nb; i++)
    if (a->t.dims[i] != b->t.dims[i]) return false;
  /* the contracted letter of one size in both (Einsum broadcasts a size-1 one) */
  int64_t ka = a->t.dims[m->trans_a ? nb : nb + 1], kb = b->t.dims[m->trans_b ? nb + 1 : nb];
  return ka == kb;
}

/* A Transpose of v's last two axes, appended (key: just before node `before`). */
static int add_swap_last(graph *g, int v, int before, double *key) {
  const int r = g->values[v].t.rank;
  int64_t perm[INFER_MAX_RANK];
  for (int d = 0; d < r; d++) perm[d] = d;
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  int i = -1, t = pass_add_transpose(g, v, perm, "_swap_last", &i);
  if (t >= 0) key[i] = before - 0.5;
  return t;
}

infer_status pass_einsum_to_matmul(graph *g, int *rewritten) {
  *rewritten = 0;
  int n0 = g->n_nodes;
  /* each match adds at most two nodes */
  double *key = malloc(sizeof(double) * ((size_t)n0 * 3 + 1));
  if (!key) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < n0; i++) key[i] = i;
  infer_status st = INFER_OK;
  for (int i = 0; i < n0 && st == INFER_OK; i++) {
    node *n = &g->nodes[i];
    if (!pass_node_is(n, "Einsum") || n->n_inputs != 2 || !n->params) continue;
    em_match m;
    const einsum_params *p = n->params;
    if (!match(p, &g->values[n->inputs[0]], &g->values[n->inputs[1]], &m)) continue;
    int in[2] = {n->inputs[0], n->inputs[1]};
    bool tr[2] = {m.trans_a, m.trans_b};
    for (int k = 0; k < 2 && st == INFER_OK; k++) {
      if (!tr[k]) continue;
      int t = add_swap_last(g, in[k], i, key);
      if (t < 0) st = infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
      else in[k] = t;
    }
    if (st == INFER_OK) /* g->nodes may have moved */
      st = pass_rewrite_node(g, i, "", "MatMul", 13, in, 2, NULL, 0);
    if (st == INFER_OK) (*rewritten)++;
  }
  if (st == INFER_OK && g->n_nodes > n0) st = pass_reorder_nodes(g, key);
  free(key);
  return st;
}
