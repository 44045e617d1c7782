/* einsum.c: Einsum (12+) on the CPU, for every numeric dtype (equation and plan in
 * ops/einsum_plan.h).
 *
 * Two operands of float32/float16/bfloat16 (matmuls, batched matmuls, bilinear forms,
 * outer products: what models use) run as batched GEMMs through cpu_sgemm: each operand
 * is packed once into [batch, m, k] / [batch, k, n] float32 (diagonals, broadcasts and
 * labels only that operand sums over are resolved while packing), the products land in
 * scratch and are written out in the output's label order. Everything else (one or
 * three+ operands, float64, integers, empty dims) runs the plain loop: every output
 * element sums the product of its operands over the summed labels, floats accumulating
 * in double and integers in 64 bits wrapping like their type. */
#include <stdlib.h>
#include <string.h>

#include "cpu_gemm.h"
#include "einsum_plan.h"
#include "index_params.h"
#include "reduce_util.h"

static const char *const einsum_attrs[] = {"equation", NULL};

static infer_status einsum_parse(const node *n, void **params) {
  const char *eq;
  if (!node_attr(n, "equation"))
    return infer_fail(INFER_ERR_INVALID_MODEL, "Einsum: attribute 'equation' is required");
  TRY(attr_get_string(n, "equation", "", &eq));
  einsum_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Einsum: out of memory");
  infer_status s = einsum_parse_equation(eq, n->n_inputs, p);
  if (s != INFER_OK) {
    free(p);
    return s;
  }
  *params = p;
  return INFER_OK;
}

static infer_status einsum_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  const einsum_params *p = params;
  einsum_plan pl;
  for (int k = 0; k < p->n_operands; k++) {
    if (!in[k]) return infer_fail(INFER_ERR_INVALID_MODEL, "Einsum: input %d is missing", k);
    if (!index_dtype_numeric(in[k]->dtype))
      return infer_fail(INFER_ERR_UNSUPPORTED, "Einsum: dtype %s is not supported",
                        infer_dtype_name(in[k]->dtype));
    if (in[k]->dtype != in[0]->dtype)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Einsum: input %d is %s, input 0 is %s", k,
                        infer_dtype_name(in[k]->dtype), infer_dtype_name(in[0]->dtype));
  }
  TRY(einsum_make_plan(p, in, &pl));
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = pl.out_rank;
  for (int i = 0; i < pl.out_rank; i++) out[0]->dims[i] = pl.size[pl.out_label[i]];
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Einsum: output size overflows");
  return INFER_OK;
}

static bool gemm_dtype(infer_dtype dt) {
  return dt == INFER_DTYPE_FLOAT32 || dt == INFER_DTYPE_FLOAT16 || dt == INFER_DTYPE_BFLOAT16;
}

/* Floats of scratch for the GEMM path (A, B and C packed), or -1 on overflow. */
static int64_t gemm_floats(const einsum_gemm *g) {
  int64_t a, b, c, t;
  if (!size_mul(g->B, g->M, &t) || !size_mul(t, g->K, &a)) return -1;
  if (!size_mul(g->B, g->K, &t) || !size_mul(t, g->N, &b)) return -1;
  if (!size_mul(g->B, g->M, &t) || !size_mul(t, g->N, &c)) return -1;
  if (!size_add(a, b, &t) || !size_add(t, c, &t)) return -1;
  return t;
}

static int64_t einsum_workspace(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  const einsum_params *p = params;
  einsum_plan pl;
  einsum_gemm g;
  if (!gemm_dtype(in[0]->dtype) || einsum_make_plan(p, in, &pl) != INFER_OK ||
      !einsum_gemm_split(&pl, p->n_operands, &g))
    return 0;
  int64_t f = gemm_floats(&g), bytes;
  return f >= 0 && size_mul(f, (int64_t)sizeof(float), &bytes) ? bytes : -1;
}

/* ---- the plain loop ------------------------------------------------------------------- */

/* Advances an odometer over labels lab[0..n) of the plan, moving the operand offsets
 * off[0..ops) by the label strides. */
static void odo_next(const einsum_plan *pl, int ops, int n, const uint8_t *lab, int64_t *idx,
                     int64_t *off) {
  for (int d = n - 1; d >= 0; d--) {
    int l = lab[d];
    for (int k = 0; k < ops; k++) off[k] += pl->stride[k][l];
    if (++idx[d] < pl->size[l]) return;
    for (int k = 0; k < ops; k++) off[k] -= pl->stride[k][l] * pl->size[l];
    idx[d] = 0;
  }
}

static void einsum_loop(const einsum_plan *pl, int ops, const tensor *const *in, tensor *out) {
  bool is_float = dtype_is_float(out->dtype);
  int64_t count = dims_count(out->rank, out->dims), sum_count = 1;
  for (int d = 0; d < pl->n_sum; d++) sum_count *= pl->size[pl->sum_label[d]];
  int64_t oidx[INFER_MAX_RANK] = {0}, ooff[EINSUM_MAX_OPERANDS] = {0};
  /* the summing odometer wraps back to all zeros after sum_count steps */
  int64_t sidx[EINSUM_LABELS] = {0}, soff[EINSUM_MAX_OPERANDS];
  for (int64_t o = 0; o < count; o++) {
    memcpy(soff, ooff, sizeof soff);
    double fa = 0;
    uint64_t ia = 0;
    for (int64_t s = 0; s < sum_count; s++) {
      if (is_float) {
        double v = nr_load(in[0], soff[0]);
        for (int k = 1; k < ops; k++) v *= nr_load(in[k], soff[k]);
        fa += v;
      } else {
        uint64_t v = (uint64_t)tensor_get_i64(in[0], soff[0]);
        for (int k = 1; k < ops; k++) v *= (uint64_t)tensor_get_i64(in[k], soff[k]);
        ia += v;
      }
      odo_next(pl, ops, pl->n_sum, pl->sum_label, sidx, soff);
    }
    if (is_float)
      nr_store(out, o, fa);
    else
      tensor_set_i64(out, o, (int64_t)ia);
    odo_next(pl, ops, pl->out_rank, pl->out_label, oidx, ooff);
  }
}

/* ---- the GEMM path ----------------------------------------------------------------------- */

/* dst (contiguous over labels dl[0..nd), C order) = x summed over labels sl[0..ns), as
 * float, reading operand k of the plan. */
static void pack_operand(const einsum_plan *pl, int k, const tensor *x, const uint8_t *dl,
                         int nd, const uint8_t *sl, int ns, float *dst) {
  int64_t count = 1, sum_count = 1;
  for (int d = 0; d < nd; d++) count *= pl->size[dl[d]];
  for (int d = 0; d < ns; d++) sum_count *= pl->size[sl[d]];
  /* odometers over one operand: strides taken from row k only */
  int64_t didx[EINSUM_LABELS] = {0}, off = 0;
  for (int64_t i = 0; i < count; i++) {
    if (ns == 0) {
      dst[i] = (float)nr_load(x, off);
    } else {
      int64_t sidx[EINSUM_LABELS] = {0}, so = off;
      double acc = 0;
      for (int64_t s = 0; s < sum_count; s++) {
        acc += nr_load(x, so);
        for (int d = ns - 1; d >= 0; d--) {
          int l = sl[d];
          so += pl->stride[k][l];
          if (++sidx[d] < pl->size[l]) break;
          so -= pl->stride[k][l] * pl->size[l];
          sidx[d] = 0;
        }
      }
      dst[i] = (float)acc;
    }
    for (int d = nd - 1; d >= 0; d--) {
      int l = dl[d];
      off += pl->stride[k][l];
      if (++didx[d] < pl->size[l]) break;
      off -= pl->stride[k][l] * pl->size[l];
      didx[d] = 0;
    }
  }
}

static void einsum_gemm_run(const einsum_plan *pl, const einsum_gemm *g, const tensor *const *in,
                            tensor *out, float *ws) {
  float *a = ws, *b = a + g->B * g->M * g->K, *c = b + g->B * g->K * g->N;
  uint8_t la[3 * EINSUM_LABELS], lb[3 * EINSUM_LABELS];
  int na = 0, nb = 0;
  for (int i = 0; i < g->nb; i++) la[na++] = g->b[i], lb[nb++] = g->b[i];
  for (int i = 0; i < g->nm; i++) la[na++] = g->m[i];
  for (int i = 0; i < g->nk; i++) la[na++] = g->k[i], lb[nb++] = g->k[i];
  for (int i = 0; i < g->nn; i++) lb[nb++] = g->n[i];
  pack_operand(pl, 0, in[0], la, na, g->a_sum, g->na_sum, a);
  pack_operand(pl, 1, in[1], lb, nb, g->b_sum, g->nb_sum, b);
  for (int64_t i = 0; i < g->B; i++)
    cpu_sgemm(false, false, g->M, g->N, g->K, 1.0f, a + i * g->M * g->K, g->K,
              b + i * g->K * g->N, g->N, 0.0f, c + i * g->M * g->N, g->N);
  /* stride of every label in c = [batch..., m..., n...] (0: size-1 labels) */
  int64_t cs[EINSUM_LABELS] = {0}, s = 1;
  for (int i = g->nn - 1; i >= 0; i--) cs[g->n[i]] = s, s *= pl->size[g->n[i]];
  for (int i = g->nm - 1; i >= 0; i--) cs[g->m[i]] = s, s *= pl->size[g->m[i]];
  for (int i = g->nb - 1; i >= 0; i--) cs[g->b[i]] = s, s *= pl->size[g->b[i]];
  int64_t count = dims_count(out->rank, out->dims), idx[INFER_MAX_RANK] = {0}, off = 0;
  for (int64_t o = 0; o < count; o++) {
    nr_store(out, o, c[off]);
    for (int d = pl->out_rank - 1; d >= 0; d--) {
      int l = pl->out_label[d];
      off += cs[l];
      if (++idx[d] < pl->size[l]) break;
      off -= cs[l] * pl->size[l];
      idx[d] = 0;
    }
  }
}

static infer_status einsum_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  const einsum_params *p = params;
  einsum_plan pl;
  einsum_gemm g;
  TRY(einsum_make_plan(p, in, &pl));
  if (gemm_dtype(in[0]->dtype) && einsum_gemm_split(&pl, p->n_operands, &g) && ws)
    einsum_gemm_run(&pl, &g, in, out[0], ws);
  else
    einsum_loop(&pl, p->n_operands, in, out[0]);
  return INFER_OK;
}

const op_desc op_einsum = {.name = "Einsum",
                           .domain = "",
                           .since = 12,
                           .until = OP_OPSET_MAX,
                           .min_inputs = 1,
                           .max_inputs = EINSUM_MAX_OPERANDS,
                           .min_outputs = 1,
                           .max_outputs = 1,
                           .attrs = einsum_attrs,
                           .parse = einsum_parse,
                           .infer = einsum_infer,
                           .run = einsum_run,
                           .workspace = einsum_workspace};
