/* cuda_quantize.c: QuantizeLinear and DequantizeLinear on the GPU (kernels/quantize.cu),
 * with the CPU reference's semantics (ops/quant_linear.c). A constant scale and zero
 * point (as in the QDQ models the usual tools write) are read on the host at build in
 * the model's own dtypes (a float32 scale stays float32 in an fp16 engine, where its
 * float16 storage would move quantization boundaries): kernel arguments per tensor,
 * float32 / int32 device copies per axis or blocked. Computed ones are read from the
 * device in their storage dtypes. DynamicQuantizeLinear (a reduction first) is left to
 * the host fallback. */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../../core/cuda_check.h"
#include "../../kernels/k_dtype.h"
#include "../../kernels/quantize.h"
#include "../cuda_op.h"
#include "../quant_util.h"

typedef struct quant_state {
  k_quant_layout l;
  int x_dtype, y_dtype;
  float *scale;  /* device copies of constant parameters, per axis / blocked; else NULL */
  int32_t *zp;
  bool scale_in, zp_in; /* the parameters are read from the step's inputs 1 and 2 */
  bool quantize;        /* QuantizeLinear, else DequantizeLinear */
} quant_state;

static void quant_release(void *p) {
  quant_state *s = p;
  if (!s) return;
  if (s->scale) cudaFree(s->scale);
  if (s->zp) cudaFree(s->zp);
  free(s);
}

/* The layout and parameters of this node's scale / zero point; quantize: the
 * division's precision. */
static infer_status prepare_common(const node *n, const void *params, const tensor *const *in,
                                   const tensor *const *host_in, tensor *const *out,
                                   bool quantize, void **state) {
  const quant_linear_params *p = params;
  const char *op = n->op_type;
  const tensor *hs = host_in[1], *hz = n->n_inputs > 2 ? host_in[2] : NULL;
  bool has_zp = n->n_inputs > 2 && in[2];
  quant_layout ql;
  TRY(quant_layout_make(op, in[0], in[1], has_zp ? in[2] : NULL, p->axis, p->block_size,
                        n->opset >= 13, n->opset >= 21, &ql));
  quant_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  s->x_dtype = (int)in[0]->dtype;
  s->y_dtype = (int)out[0]->dtype;
  s->l.kind = ql.kind == QUANT_PER_TENSOR ? 0 : ql.kind == QUANT_PER_AXIS ? 1 : 2;
  s->l.dim = ql.dim > 0 ? ql.dim : 1;
  s->l.inner = ql.inner > 0 ? ql.inner : 1;
  s->l.block = ql.block > 0 ? ql.block : 1;
  s->l.sdim = ql.sdim;
  s->l.istep = ql.istep;
  s->l.count = dims_count(in[0]->rank, in[0]->dims);
  if (quantize) {
    int64_t lo, hi;
    if (!quant_range(out[0]->dtype, &lo, &hi) || out[0]->dtype == INFER_DTYPE_INT32)
      return infer_fail(INFER_ERR_UNSUPPORTED, "QuantizeLinear on the GPU: output %s",
                        infer_dtype_name(out[0]->dtype));
    s->l.lo = (int32_t)lo;
    s->l.hi = (int32_t)hi;
    /* the division's precision: the attribute, else a constant scale's dtype (a
     * computed scale's storage may be float16 for a float32 value: float32 then) */
    infer_dtype prec = p->precision ? p->precision : hs ? hs->dtype : INFER_DTYPE_FLOAT32;
    if (prec != INFER_DTYPE_FLOAT32 && prec != INFER_DTYPE_FLOAT16)
      return infer_fail(INFER_ERR_UNSUPPORTED, "QuantizeLinear on the GPU: precision %s",
                        infer_dtype_name(prec));
    s->l.div_f16 = prec == INFER_DTYPE_FLOAT16;
  }
  if (!hs || (has_zp && !hz)) { /* computed parameters: read on the device */
    s->scale_in = true;
    s->zp_in = has_zp;
    s->l.scale_dtype = (int)in[1]->dtype;
    s->l.zp_dtype = has_zp ? (int)in[2]->dtype : K_I32;
    if (in[1]->dtype != INFER_DTYPE_FLOAT32 && in[1]->dtype != INFER_DTYPE_FLOAT16 &&
        in[1]->dtype != INFER_DTYPE_BFLOAT16)
      return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: scale %s", op,
                        infer_dtype_name(in[1]->dtype));
    return INFER_OK;
  }
  int64_t np = dims_count(hs->rank, hs->dims);
  if (s->l.kind == 0) {
    s->l.params_in_args = 1;
    s->l.scale0 = quant_float_at(hs, 0);
    s->l.zp0 = has_zp ? (int32_t)quant_int_at(hz, 0) : 0;
    return INFER_OK;
  }
  float *hsf = malloc((size_t)np * sizeof *hsf);
  int32_t *hzi = has_zp ? malloc((size_t)np * sizeof *hzi) : NULL;
  if (!hsf || (has_zp && !hzi)) {
    free(hsf);
    free(hzi);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  for (int64_t i = 0; i < np; i++) {
    hsf[i] = quant_float_at(hs, i);
    if (hzi) hzi[i] = (int32_t)quant_int_at(hz, i);
  }
  s->l.scale_dtype = K_F32;
  s->l.zp_dtype = K_I32;
  cudaError_t e = cudaMalloc((void **)&s->scale, (size_t)np * sizeof *hsf);
  if (e == cudaSuccess) e = cudaMemcpy(s->scale, hsf, (size_t)np * sizeof *hsf, cudaMemcpyHostToDevice);
  if (e == cudaSuccess && hzi) e = cudaMalloc((void **)&s->zp, (size_t)np * sizeof *hzi);
  if (e == cudaSuccess && hzi)
    e = cudaMemcpy(s->zp, hzi, (size_t)np * sizeof *hzi, cudaMemcpyHostToDevice);
  free(hsf);
  free(hzi);
  CUDA_TRY(e);
  return INFER_OK;
}

static infer_status quant_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  (void)x;
  (void)ws_bytes;
  bool quantize = strcmp(n->op_type, "QuantizeLinear") == 0;
  /* the float side: QuantizeLinear's x (or int32), DequantizeLinear's output */
  infer_dtype fd = quantize ? in[0]->dtype : out[0]->dtype;
  if (fd != INFER_DTYPE_FLOAT32 && fd != INFER_DTYPE_FLOAT16 && fd != INFER_DTYPE_BFLOAT16 &&
      !(quantize && fd == INFER_DTYPE_INT32))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: %s %s", n->op_type,
                      quantize ? "x" : "output", infer_dtype_name(fd));
  TRY(prepare_common(n, params, in, host_in, out, quantize, state));
  ((quant_state *)*state)->quantize = quantize;
  return INFER_OK;
}

static infer_status quant_run(const cuda_exec *x, const node *n, const void *params,
                              const void *state, const tensor *const *in, tensor *const *out) {
  (void)n;
  (void)params;
  const quant_state *s = state;
  /* the parameters: the device copies, or the step's own inputs */
  const void *sc = s->scale_in ? in[1]->data : s->scale;
  const void *zp = s->scale_in ? (s->zp_in ? in[2]->data : NULL) : s->zp;
  CUDA_LAUNCH_TRY((s->quantize ? k_quantize : k_dequantize)(s->x_dtype, in[0]->data, s->y_dtype,
                                                            out[0]->data, sc, zp, &s->l,
                                                            (cudaStream_t)x->stream));
  return INFER_OK;
}

static const cuda_op cuda_quantize_linear = {
    .name = "QuantizeLinear", .prepare = quant_prepare, .run = quant_run, .release = quant_release};
static const cuda_op cuda_dequantize_linear = {.name = "DequantizeLinear",
                                               .prepare = quant_prepare,
                                               .run = quant_run,
                                               .release = quant_release};
const cuda_op *const cuda_ops_quantize[] = {&cuda_quantize_linear, &cuda_dequantize_linear, NULL};
