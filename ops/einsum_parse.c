/* einsum_parse.c: Einsum's equation parser, the plan for concrete shapes and the split
 * of a two-operand contraction into GEMM groups (contracts in ops/einsum_plan.h). */
#include <stdio.h>
#include <string.h>

#include "einsum_plan.h"

static int letter_label(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}

/* Parses one term from s[0..len) (spaces already removed). */
static infer_status parse_term(const char *s, int len, const char *what, einsum_term *t) {
  t->n = 0;
  t->ellipsis_at = -1;
  for (int i = 0; i < len;) {
    if (s[i] == '.') {
      if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
        return infer_fail(INFER_ERR_INVALID_MODEL, "Einsum: %s has a '.' that is not '...'",
                          what);
      if (t->ellipsis_at >= 0)
        return infer_fail(INFER_ERR_INVALID_MODEL, "Einsum: %s has more than one '...'", what);
      t->ellipsis_at = t->n;
      i += 3;
      continue;
    }
    int l = letter_label(s[i]);
    if (l < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Einsum: %s has '%c', not a letter or '...'",
                        what, s[i]);
    if (t->n >= INFER_MAX_RANK)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Einsum: %s names more than %d dims", what,
                        INFER_MAX_RANK);
    t->label[t->n++] = (uint8_t)l;
    i++;
  }
  return INFER_OK;
}

infer_status einsum_parse_equation(const char *eq, int n_operands, einsum_params *p) {
  char s[512];
  int len = 0;
  for (const char *c = eq; *c; c++) {
    if (*c == ' ' || *c == '\t' || *c == '\n') continue;
    if (len >= (int)sizeof s - 1)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Einsum: equation longer than %d characters",
                        (int)sizeof s - 1);
    s[len++] = *c;
  }
  s[len] = 0;
  if (n_operands < 1 || n_operands > EINSUM_MAX_OPERANDS)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Einsum: %d inputs (1 to %d supported)", n_operands,
                      EINSUM_MAX_OPERANDS);
  p->n_operands = n_operands;
  const char *arrow = strstr(s, "->");
  int lhs_len = arrow ? (int)(arrow - s) : len;
  if (arrow && strstr(arrow + 2, "->"))
    return infer_fail(INFER_ERR_INVALID_MODEL, "Einsum: equation '%s' has more than one '->'", eq);
  /* input terms */
  int k = 0, start = 0;
  for (int i = 0; i <= lhs_len; i++) {
    if (i < lhs_len && s[i] != ',') continue;
    if (k >= n_operands)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "Einsum: equation '%s' has more terms than the %d inputs", eq,
                        n_operands);
    char what[32];
    snprintf(what, sizeof what, "input term %d", k);
    TRY(parse_term(s + start, i - start, what, &p->in[k]));
    k++;
    start = i + 1;
  }
  if (k != n_operands)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Einsum: equation '%s' has %d terms for %d inputs",
                      eq, k, n_operands);
  int count[EINSUM_LETTERS] = {0};
  bool any_ellipsis = false;
  for (k = 0; k < n_operands; k++) {
    any_ellipsis |= p->in[k].ellipsis_at >= 0;
    for (int j = 0; j < p->in[k].n; j++) count[p->in[k].label[j]]++;
  }
  einsum_term *o = &p->out;
  if (arrow) {
    TRY(parse_term(arrow + 2, len - lhs_len - 2, "the output term", o));
    bool seen[EINSUM_LETTERS] = {false};
    for (int j = 0; j < o->n; j++) {
      int l = o->label[j];
      if (seen[l])
        return infer_fail(INFER_ERR_INVALID_MODEL, "Einsum: output label '%c' appears twice",
                          l < 26 ? 'A' + l : 'a' + l - 26);
      if (!count[l])
        return infer_fail(INFER_ERR_INVALID_MODEL,
                          "Einsum: output label '%c' is in no input term",
                          l < 26 ? 'A' + l : 'a' + l - 26);
      seen[l] = true;
    }
  } else {
    o->n = 0;
    o->ellipsis_at = any_ellipsis ? 0 : -1;
    for (int l = 0; l < EINSUM_LETTERS; l++)
      if (count[l] == 1) {
        if (o->n >= INFER_MAX_RANK)
          return infer_fail(INFER_ERR_UNSUPPORTED, "Einsum: implicit output of more than %d dims",
                            INFER_MAX_RANK);
        o->label[o->n++] = (uint8_t)l;
      }
  }
  return INFER_OK;
}

/* Label of dim j of a term with ellipsis rank er (ell_rank = the plan's). */
static int dim_label(const einsum_term *t, int j, int er, int ell_rank) {
  int e = t->ellipsis_at;
  if (e < 0 || j < e) return t->label[j];
  if (j < e + er) return EINSUM_ELL + (ell_rank - er) + (j - e);
  return t->label[j - er];
}

infer_status einsum_make_plan(const einsum_params *p, const tensor *const *in, einsum_plan *pl) {
  int er[EINSUM_MAX_OPERANDS];
  pl->ell_rank = 0;
  for (int k = 0; k < p->n_operands; k++) {
    const einsum_term *t = &p->in[k];
    const tensor *x = in[k];
    er[k] = x->rank - t->n;
    if (t->ellipsis_at < 0 ? er[k] != 0 : er[k] < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "Einsum: input %d has rank %d, its term names %d dims%s", k, x->rank, t->n,
                        t->ellipsis_at >= 0 ? " besides '...'" : "");
    if (er[k] > pl->ell_rank) pl->ell_rank = er[k];
  }
  for (int l = 0; l < EINSUM_LABELS; l++) pl->size[l] = -1;
  /* sizes: equal, or 1 (broadcast) */
  for (int k = 0; k < p->n_operands; k++)
    for (int j = 0; j < in[k]->rank; j++) {
      int l = dim_label(&p->in[k], j, er[k], pl->ell_rank);
      int64_t d = in[k]->dims[j], *s = &pl->size[l];
      if (*s < 0 || *s == 1)
        *s = d;
      else if (d != *s && d != 1) {
        char name[16];
        if (l < EINSUM_LETTERS)
          snprintf(name, sizeof name, "'%c'", l < 26 ? 'A' + l : 'a' + l - 26);
        else
          snprintf(name, sizeof name, "'...' dim %d", l - EINSUM_ELL);
        return infer_fail(INFER_ERR_INVALID_MODEL,
                          "Einsum: label %s has size %lld in input %d and %lld elsewhere", name,
                          (long long)d, k, (long long)*s);
      }
    }
  /* strides */
  memset(pl->stride, 0, sizeof pl->stride);
  for (int k = 0; k < p->n_operands; k++) {
    int64_t st[INFER_MAX_RANK];
    dims_strides(in[k]->rank, in[k]->dims, st);
    for (int j = 0; j < in[k]->rank; j++) {
      int l = dim_label(&p->in[k], j, er[k], pl->ell_rank);
      if (in[k]->dims[j] == pl->size[l] && pl->size[l] > 1) pl->stride[k][l] += st[j];
    }
  }
  /* output labels, the ellipsis expanded */
  const einsum_term *o = &p->out;
  int r = 0;
  bool in_out[EINSUM_LABELS] = {false};
  for (int j = 0; j <= o->n; j++) {
    if (j == o->ellipsis_at)
      for (int e = 0; e < pl->ell_rank; e++) {
        if (r >= INFER_MAX_RANK) goto too_many;
        pl->out_label[r++] = (uint8_t)(EINSUM_ELL + e);
      }
    if (j == o->n) break;
    if (r >= INFER_MAX_RANK) goto too_many;
    pl->out_label[r++] = o->label[j];
  }
  pl->out_rank = r;
  for (int i = 0; i < r; i++) in_out[pl->out_label[i]] = true;
  pl->n_sum = 0;
  for (int l = 0; l < EINSUM_LABELS; l++)
    if (pl->size[l] >= 0 && !in_out[l]) pl->sum_label[pl->n_sum++] = (uint8_t)l;
  return INFER_OK;
too_many:
  return infer_fail(INFER_ERR_UNSUPPORTED, "Einsum: output rank exceeds %d", INFER_MAX_RANK);
}

bool einsum_gemm_split(const einsum_plan *pl, int n_operands, einsum_gemm *g) {
  if (n_operands != 2) return false;
  memset(g, 0, sizeof *g);
  bool in_out[EINSUM_LABELS] = {false};
  for (int i = 0; i < pl->out_rank; i++) in_out[pl->out_label[i]] = true;
  for (int l = 0; l < EINSUM_LABELS; l++)
    if (pl->size[l] == 0) return false; /* empty: the plain loop writes the zeros */
  g->B = g->M = g->N = g->K = 1;
  /* groups in an order that lets the GEMM read operands and write the output in
   * place when their layouts allow: b, m, n in output order; k and the sums in
   * decreasing stride of the operand that has them (A's for k) */
  uint8_t order[EINSUM_LABELS];
  int n = 0;
  for (int i = 0; i < pl->out_rank; i++) order[n++] = pl->out_label[i];
  int first_rest = n;
  for (int l = 0; l < EINSUM_LABELS; l++)
    if (pl->size[l] > 1 && !in_out[l]) {
      int k = pl->stride[0][l] != 0 ? 0 : 1, j = n++;
      while (j > first_rest && pl->stride[k][order[j - 1]] < pl->stride[k][l]) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = (uint8_t)l;
    }
  for (int i = 0; i < n; i++) {
    int l = order[i];
    int64_t s = pl->size[l];
    if (s <= 1) continue; /* size 1: no effect on the product */
    bool a = pl->stride[0][l] != 0, b = pl->stride[1][l] != 0, o = in_out[l];
    if (a && b && o) g->b[g->nb++] = (uint8_t)l, g->B *= s;
    else if (a && !b && o) g->m[g->nm++] = (uint8_t)l, g->M *= s;
    else if (!a && b && o) g->n[g->nn++] = (uint8_t)l, g->N *= s;
    else if (a && b) g->k[g->nk++] = (uint8_t)l, g->K *= s;
    else if (a) g->a_sum[g->na_sum++] = (uint8_t)l;
    else if (b) g->b_sum[g->nb_sum++] = (uint8_t)l;
    else return false; /* cannot happen: a used label of size > 1 is in some operand */
  }
  return true;
}
