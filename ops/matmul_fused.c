/* matmul_fused.c: FusedMatMul's attributes, shapes and CPU reference (matmul_fused.h):
 * one GEMM over all rows of A, then bias, Z and the activation in the same pass over Y
 * (in float, as the GPU's epilogue does, so the CPU checks the GPU's arithmetic). */
#include <stdlib.h>
#include <string.h>

#include "conv_util.h"
#include "cpu_gemm.h"
#include "matmul_fused.h"

static const char *const act_names[] = {"", "Relu", "Gelu", "GeluTanh"};

const char *matmul_act_name(matmul_act a) {
  return a >= MATMUL_ACT_NONE && a <= MATMUL_ACT_GELU_TANH ? act_names[a] : "?";
}

static infer_status fm_parse(const node *n, void **params) {
  fused_matmul_params *p = calloc(1, sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *params = p;
  const char *act;
  int64_t tb;
  TRY(attr_get_string(n, "activation", "", &act));
  TRY(attr_get_int(n, "trans_b", 0, &tb));
  TRY(attr_get_float(n, "alpha", 1.0f, &p->alpha));
  p->trans_b = tb != 0;
  const int64_t *od;
  int orank = -1;
  TRY(attr_get_ints(n, "out_shape", &od, &orank));
  if (orank == 0 || orank > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedMatMul: out_shape of rank %d", orank);
  if (orank > 0) {
    p->out_rank = orank;
    memcpy(p->out_dims, od, sizeof(int64_t) * (size_t)orank);
  }
  int k = 0;
  while (k < 4 && strcmp(act_names[k], act) != 0) k++;
  if (k == 4)
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedMatMul: activation '%s' is not supported", act);
  p->act = (matmul_act)k;
  return INFER_OK;
}

static infer_status fm_infer(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out) {
  const fused_matmul_params *p = params;
  const tensor *a = in[0], *b = in[1];
  char s1[96], s2[96];
  bool floats = a->dtype == INFER_DTYPE_FLOAT32 || a->dtype == INFER_DTYPE_FLOAT16 ||
                a->dtype == INFER_DTYPE_BFLOAT16;
  if (a->dtype != b->dtype || !floats)
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedMatMul: A %s and B %s (float32, float16 or bfloat16, both the same)",
                      infer_dtype_name(a->dtype), infer_dtype_name(b->dtype));
  if (a->rank < 1 || b->rank != 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedMatMul: A %s, B %s (B must be 2-D)",
                      dims_format(a->rank, a->dims, s1, sizeof s1),
                      dims_format(b->rank, b->dims, s2, sizeof s2));
  int64_t k = b->dims[p->trans_b ? 1 : 0], nn = b->dims[p->trans_b ? 0 : 1];
  if (a->dims[a->rank - 1] != k)
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedMatMul: inner dims of %s and %s differ",
                      dims_format(a->rank, a->dims, s1, sizeof s1),
                      dims_format(b->rank, b->dims, s2, sizeof s2));
  if (n->n_inputs > 2 && in[2]) {
    if (in[2]->dtype != a->dtype || dims_count(in[2]->rank, in[2]->dims) != nn ||
        (in[2]->rank >= 1 && in[2]->dims[in[2]->rank - 1] != nn))
      return infer_fail(INFER_ERR_INVALID_MODEL, "FusedMatMul: bias %s is not [%lld]",
                        dims_format(in[2]->rank, in[2]->dims, s1, sizeof s1), (long long)nn);
  }
  tensor *y = out[0];
  y->dtype = a->dtype;
  y->rank = a->rank;
  memcpy(y->dims, a->dims, sizeof(int64_t) * (size_t)a->rank);
  y->dims[y->rank - 1] = nn;
  if (p->out_rank > 0) { /* the same rows, seen with other leading dims */
    int64_t rows = k ? dims_count(a->rank, a->dims) / k : 0;
    if (p->out_dims[p->out_rank - 1] != nn || dims_count(p->out_rank, p->out_dims) != rows * nn)
      return infer_fail(INFER_ERR_INVALID_MODEL, "FusedMatMul: out_shape %s does not hold the "
                        "%lld x %lld product", dims_format(p->out_rank, p->out_dims, s1, sizeof s1),
                        (long long)rows, (long long)nn);
    y->rank = p->out_rank;
    memcpy(y->dims, p->out_dims, sizeof(int64_t) * (size_t)p->out_rank);
  }
  if (n->n_inputs > 3 && in[3] &&
      (in[3]->dtype != a->dtype || !dims_equal(in[3]->rank, in[3]->dims, y->rank, y->dims)))
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedMatMul: Z %s is not of Y's shape %s",
                      dims_format(in[3]->rank, in[3]->dims, s1, sizeof s1),
                      dims_format(y->rank, y->dims, s2, sizeof s2));
  if (tensor_nbytes(y) < 0) return infer_fail(INFER_ERR_INVALID_MODEL, "FusedMatMul: Y too large");
  return INFER_OK;
}

/* float32 staging for A, B and Y when the data is not float32 */
static int64_t fm_workspace(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out) {
  if (in[0]->dtype == INFER_DTYPE_FLOAT32) return 0;
  int64_t total = 0;
  ws_add(&total, dims_count(in[0]->rank, in[0]->dims), 4);
  ws_add(&total, dims_count(in[1]->rank, in[1]->dims), 4);
  ws_add(&total, dims_count(out[0]->rank, out[0]->dims), 4);
  return total;
}

static infer_status fm_run(const node *n, const void *params, const tensor *const *in,
                           tensor *const *out, void *ws) {
  const fused_matmul_params *p = params;
  const tensor *a = in[0], *b = in[1];
  const tensor *bias = n->n_inputs > 2 ? in[2] : NULL, *z = n->n_inputs > 3 ? in[3] : NULL;
  tensor *y = out[0];
  int64_t k = a->dims[a->rank - 1], nn = y->dims[y->rank - 1];
  int64_t m = nn ? dims_count(y->rank, y->dims) / nn : 0;
  int64_t na = dims_count(a->rank, a->dims), nb = dims_count(2, b->dims), ny = m * nn;
  const float *af = a->data, *bf = b->data;
  float *yf = y->data;
  if (a->dtype != INFER_DTYPE_FLOAT32) {
    char *cur = ws;
    float *as = ws_take(&cur, na, 4), *bs = ws_take(&cur, nb, 4);
    yf = ws_take(&cur, ny, 4);
    stage_to_f32(a->data, a->dtype, na, as);
    stage_to_f32(b->data, b->dtype, nb, bs);
    af = as;
    bf = bs;
  }
  if (m > 0 && nn > 0)
    cpu_sgemm(false, p->trans_b, m, nn, k, p->alpha, af, k, bf, p->trans_b ? k : nn, 0.0f, yf, nn);
  for (int64_t i = 0; i < ny; i++) {
    double v = yf[i];
    if (bias) v += tensor_get_f64(bias, i % nn);
    if (z) v += tensor_get_f64(z, i);
    yf[i] = (float)matmul_act_apply(p->act, v);
  }
  if (a->dtype != INFER_DTYPE_FLOAT32) stage_from_f32(yf, y->dtype, ny, y->data);
  return INFER_OK;
}

static const char *const fm_attrs[] = {"activation", "trans_b", "alpha", "out_shape", NULL};
static const op_desc op_fused_matmul = {
    .name = "FusedMatMul", .domain = "infer", .since = 1, .until = 1,
    .min_inputs = 2, .max_inputs = 4, .min_outputs = 1, .max_outputs = 1,
    .attrs = fm_attrs, .parse = fm_parse, .infer = fm_infer, .run = fm_run,
    .workspace = fm_workspace};

const op_desc *const ops_matmul_fused[] = {&op_fused_matmul, NULL};
