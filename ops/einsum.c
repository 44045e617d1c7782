/* einsum.c: Einsum (12+) on the CPU, for every numeric dtype (equation and plan in
 * ops/einsum_plan.h).
 *
 * Two operands of float32/float16/bfloat16 (matmuls, batched matmuls, bilinear forms,
 * outer products: what models use) run as batched GEMMs through cpu_sgemm. A float32
 * operand whose layout already is a batch of (maybe transposed) matrices is read in
 * place, as is the output when its labels come as batch, m, n; otherwise an operand is
 * packed once into [batch, m, k] / [batch, k, n] float32 (diagonals, broadcasts and
 * labels only that operand sums over are resolved while packing) and the products land
 * in scratch, then are written out in the output's label order. Everything else (one or
 * three+ operands, float64, integers, empty dims) runs the plain loop: every output
 * element sums the product of its operands over the summed labels, floats accumulating
 * in double and integers in 64 bits wrapping like their type. */
#include <stdlib.h>
#include <string.h>

#include "cpu_gemm.h"
#include "einsum_plan.h"
#include "index_params.h"
#include "movement_copy.h"
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
  if (x->dtype == INFER_DTYPE_FLOAT32 && ns == 0 && nd <= MOVEMENT_MAX_VIEW_RANK) {
    int64_t dims[MOVEMENT_MAX_VIEW_RANK], strides[MOVEMENT_MAX_VIEW_RANK];
    for (int d = 0; d < nd; d++) {
      dims[d] = pl->size[dl[d]];
      strides[d] = pl->stride[k][dl[d]];
    }
    movement_copy_view(dst, x->data, sizeof(float), nd, dims, strides);
    return;
  }
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

/* Labels lab[0..n) seen through strides st (indexed by label) as one dim: true when
 * each label's stride is the next one's times the next one's size; *inner is the last
 * label's stride (0 for an empty group, which has size 1). */
static bool group_stride(const einsum_plan *pl, const int64_t *st, const uint8_t *lab, int n,
                         int64_t *inner) {
  *inner = 0;
  if (n == 0) return true;
  for (int i = 0; i + 1 < n; i++)
    if (st[lab[i]] != st[lab[i + 1]] * pl->size[lab[i + 1]]) return false;
  *inner = st[lab[n - 1]];
  return true;
}

/* One GEMM operand read where it lies: rows x cols (rows labels r, cols labels c, batch
 * labels bl) with batch stride *bs, row stride *ld and *trans. False when the layout
 * needs packing. */
static bool operand_in_place(const einsum_plan *pl, const int64_t *st, const uint8_t *bl, int nb,
                             const uint8_t *r, int nr, int64_t rows, const uint8_t *c, int nc,
                             int64_t cols, int64_t *bs, int64_t *ld, bool *trans) {
  int64_t sr, sc;
  if (!group_stride(pl, st, bl, nb, bs) || !group_stride(pl, st, r, nr, &sr) ||
      !group_stride(pl, st, c, nc, &sc))
    return false;
  if ((cols == 1 || sc == 1) && (rows == 1 || sr >= cols)) {
    *trans = false;
    *ld = rows == 1 ? cols : sr;
    return true;
  }
  if ((rows == 1 || sr == 1) && (cols == 1 || sc >= rows)) {
    *trans = true;
    *ld = cols == 1 ? rows : sc;
    return true;
  }
  return false;
}

static void einsum_gemm_run(const einsum_plan *pl, const einsum_gemm *g, const tensor *const *in,
                            tensor *out, float *ws) {
  float *pa = ws, *pb = pa + g->B * g->M * g->K, *pc = pb + g->B * g->K * g->N;
  const float *a = pa, *b = pb;
  float *c = pc;
  int64_t bsa = g->M * g->K, bsb = g->K * g->N, bsc = g->M * g->N, lda = g->K, ldb = g->N;
  bool ta = false, tb = false;
  /* float32 operands whose layout is already a (batched, maybe transposed) matrix are
   * read in place; the others are packed into [batch, m, k] / [batch, k, n] */
  bool f32 = in[0]->dtype == INFER_DTYPE_FLOAT32;
  if (!(f32 && g->na_sum == 0 &&
        operand_in_place(pl, pl->stride[0], g->b, g->nb, g->m, g->nm, g->M, g->k, g->nk, g->K,
                         &bsa, &lda, &ta))) {
    uint8_t la[3 * EINSUM_LABELS];
    int na = 0;
    for (int i = 0; i < g->nb; i++) la[na++] = g->b[i];
    for (int i = 0; i < g->nm; i++) la[na++] = g->m[i];
    for (int i = 0; i < g->nk; i++) la[na++] = g->k[i];
    pack_operand(pl, 0, in[0], la, na, g->a_sum, g->na_sum, pa);
    bsa = g->M * g->K, lda = g->K, ta = false;
  } else {
    a = in[0]->data;
  }
  if (!(f32 && g->nb_sum == 0 &&
        operand_in_place(pl, pl->stride[1], g->b, g->nb, g->k, g->nk, g->K, g->n, g->nn, g->N,
                         &bsb, &ldb, &tb))) {
    uint8_t lb[3 * EINSUM_LABELS];
    int nb = 0;
    for (int i = 0; i < g->nb; i++) lb[nb++] = g->b[i];
    for (int i = 0; i < g->nk; i++) lb[nb++] = g->k[i];
    for (int i = 0; i < g->nn; i++) lb[nb++] = g->n[i];
    pack_operand(pl, 1, in[1], lb, nb, g->b_sum, g->nb_sum, pb);
    bsb = g->K * g->N, ldb = g->N, tb = false;
  } else {
    b = in[1]->data;
  }
  /* the output is written in place when its labels (size 1 aside) are b, m, n in order */
  uint8_t seq[3 * EINSUM_LABELS];
  int ns = 0, no = 0;
  for (int i = 0; i < g->nb; i++) seq[ns++] = g->b[i];
  for (int i = 0; i < g->nm; i++) seq[ns++] = g->m[i];
  for (int i = 0; i < g->nn; i++) seq[ns++] = g->n[i];
  bool direct = out->dtype == INFER_DTYPE_FLOAT32;
  for (int i = 0; direct && i < pl->out_rank; i++)
    if (pl->size[pl->out_label[i]] > 1) direct = no < ns && seq[no++] == pl->out_label[i];
  direct = direct && no == ns;
  if (direct) c = out->data;
  for (int64_t i = 0; i < g->B; i++)
    cpu_sgemm(ta, tb, g->M, g->N, g->K, 1.0f, a + i * bsa, lda, b + i * bsb, ldb, 0.0f,
              c + i * bsc, g->N);
  if (direct) return;
  /* stride of every label in c = [batch..., m..., n...] (0: size-1 labels) */
  int64_t cs[EINSUM_LABELS] = {0}, st = 1;
  for (int i = g->nn - 1; i >= 0; i--) cs[g->n[i]] = st, st *= pl->size[g->n[i]];
  for (int i = g->nm - 1; i >= 0; i--) cs[g->m[i]] = st, st *= pl->size[g->m[i]];
  for (int i = g->nb - 1; i >= 0; i--) cs[g->b[i]] = st, st *= pl->size[g->b[i]];
  if (out->dtype == INFER_DTYPE_FLOAT32) {
    int64_t dims[INFER_MAX_RANK], strides[INFER_MAX_RANK];
    for (int d = 0; d < pl->out_rank; d++) {
      dims[d] = pl->size[pl->out_label[d]];
      strides[d] = cs[pl->out_label[d]];
    }
    movement_copy_view(out->data, c, sizeof(float), pl->out_rank, dims, strides);
    return;
  }
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
