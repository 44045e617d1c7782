/* movement_row_gather.c: RowGather (row_gather.h), the CPU reference: attributes,
 * shapes, and the gather row by row. */
#include <stdlib.h>
#include <string.h>

#include "movement_copy.h"
#include "row_gather.h"

static const char *const rg_attrs[] = {"prefix", "tails", "table", NULL};

/* Frees the half-parsed params and fails with the message. */
#define rg_fail(p, ...) (free(p), infer_fail(INFER_ERR_INVALID_MODEL, __VA_ARGS__))

static infer_status rg_parse(const node *n, void **params) {
  int64_t prefix;
  const int64_t *tails, *table;
  int n_tails, n_table;
  TRY(attr_get_int(n, "prefix", -1, &prefix));
  TRY(attr_get_ints(n, "tails", &tails, &n_tails));
  TRY(attr_get_ints(n, "table", &table, &n_table));
  if (prefix < 0 || prefix > INFER_MAX_RANK || n_tails < 0 || n_table < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "RowGather: prefix, tails and table are required");
  if (n->n_outputs > ROW_GATHER_MAX_OUTPUTS || n->n_inputs > ROW_GATHER_MAX_INPUTS)
    return infer_fail(INFER_ERR_UNSUPPORTED, "RowGather: %d inputs and %d outputs (at most %d each)",
                      n->n_inputs, n->n_outputs, ROW_GATHER_MAX_OUTPUTS);
  row_gather_params *p = calloc(1, sizeof *p + sizeof(int64_t) * (size_t)n_table);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "RowGather: out of memory");
  p->prefix = (int)prefix;
  p->n_outputs = n->n_outputs;
  int at = 0;
  int64_t total = 0;
  for (int j = 0; j < n->n_outputs; j++) {
    if (at >= n_tails || tails[at] < 0 || tails[at] + prefix > INFER_MAX_RANK ||
        at + 1 + tails[at] > n_tails)
      return rg_fail(p, "RowGather: tails does not describe output %d", j);
    p->tail_rank[j] = (int)tails[at];
    p->row[j] = 1;
    for (int k = 0; k < p->tail_rank[j]; k++) {
      int64_t d = tails[at + 1 + k];
      if (d < 0 || d > (int64_t)1 << 30)
        return rg_fail(p, "RowGather: output %d, tail dim %lld", j, (long long)d);
      p->tail[j][k] = d;
      p->row[j] *= d;
      if (p->row[j] > (int64_t)1 << 30)
        return rg_fail(p, "RowGather: output %d's row is too long", j);
    }
    at += 1 + p->tail_rank[j];
    p->offset[j] = total;
    total += p->row[j];
  }
  if (at != n_tails || total != n_table)
    return rg_fail(p, "RowGather: %d table entries for rows of %lld", n_table, (long long)total);
  for (int t = 0; t < n_table; t++) {
    if (table[t] < 0 || row_gather_input(table[t]) >= n->n_inputs)
      return rg_fail(p, "RowGather: table entry %d names no input", t);
    p->table[t] = table[t];
  }
  p->n_table = n_table;
  *params = p;
  return INFER_OK;
}

/* The elements of input k's row (its dims after the prefix). */
static int64_t input_row(const tensor *x, int prefix) {
  return dims_count(x->rank - prefix, x->dims + prefix);
}

static infer_status rg_infer(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out) {
  const row_gather_params *p = params;
  size_t es;
  for (int i = 0; i < n->n_inputs; i++) {
    if (!in[i]) return infer_fail(INFER_ERR_INVALID_MODEL, "RowGather: input %d is missing", i);
    TRY(movement_elem_size("RowGather", in[i]->dtype, &es));
    if (in[i]->dtype != in[0]->dtype || in[i]->rank < p->prefix ||
        memcmp(in[i]->dims, in[0]->dims, sizeof(int64_t) * (size_t)p->prefix) != 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "RowGather: input %d's dtype or leading dims "
                        "differ from input 0's", i);
  }
  for (int64_t t = 0; t < p->n_table; t++) {
    int k = row_gather_input(p->table[t]);
    if (row_gather_column(p->table[t]) >= input_row(in[k], p->prefix))
      return infer_fail(INFER_ERR_INVALID_MODEL, "RowGather: table entry %lld is past input %d's "
                        "row", (long long)t, k);
  }
  for (int j = 0; j < n->n_outputs; j++) {
    if (!out[j]) continue;
    out[j]->dtype = in[0]->dtype;
    out[j]->rank = p->prefix + p->tail_rank[j];
    memcpy(out[j]->dims, in[0]->dims, sizeof(int64_t) * (size_t)p->prefix);
    memcpy(out[j]->dims + p->prefix, p->tail[j], sizeof(int64_t) * (size_t)p->tail_rank[j]);
  }
  return INFER_OK;
}

static infer_status rg_run(const node *n, const void *params, const tensor *const *in,
                           tensor *const *out, void *ws) {
  (void)ws;
  const row_gather_params *p = params;
  size_t es = infer_dtype_size(in[0]->dtype);
  int64_t rows = dims_count(p->prefix, in[0]->dims), in_row[ROW_GATHER_MAX_INPUTS];
  for (int i = 0; i < n->n_inputs; i++) in_row[i] = input_row(in[i], p->prefix);
  for (int j = 0; j < n->n_outputs; j++) {
    if (!out[j]) continue;
    const int64_t *tab = p->table + p->offset[j];
    char *dst = out[j]->data;
    for (int64_t r = 0; r < rows; r++)
      for (int64_t c = 0; c < p->row[j]; c++, dst += es) {
        int k = row_gather_input(tab[c]);
        const char *src = (const char *)in[k]->data +
                          ((size_t)(r * in_row[k] + row_gather_column(tab[c]))) * es;
        memcpy(dst, src, es);
      }
  }
  return INFER_OK;
}

const op_desc op_row_gather = {.name = "RowGather",
                               .domain = "infer",
                               .since = 1,
                               .until = 1,
                               .min_inputs = 1,
                               .max_inputs = ROW_GATHER_MAX_INPUTS,
                               .min_outputs = 1,
                               .max_outputs = ROW_GATHER_MAX_OUTPUTS,
                               .attrs = rg_attrs,
                               .parse = rg_parse,
                               .infer = rg_infer,
                               .run = rg_run};
