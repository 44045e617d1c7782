/* resize_upsample.c: Upsample (7, 9; deprecated at 10), the Resize of opset 10 under
 * its old name: out = floor(in * scale) per axis, mode nearest (floor of out / scale)
 * or linear (asymmetric coordinates). Opset 7 takes the scales as an attribute, 9 as
 * the second input. Every scale must be >= 1. Parse, shape inference and the run are
 * Resize's (ops/resize.c, called through op_resize on a view of the node as a
 * Resize-10 node: X and scales), so the two cannot drift apart. */
#include <stdlib.h>
#include <string.h>

#include "pad_resize.h"
#include "resize_plan.h"

typedef struct upsample_params {
  resize_params resize;
  int n_scales; /* opset 7: the attribute; -1 at opset 9 */
  float scales[INFER_MAX_RANK];
} upsample_params;

static const char *const upsample_attrs[] = {"mode", "scales", NULL};

/* n as the Resize-10 node it stands for. */
static node as_resize(const node *n) {
  node r = *n;
  r.opset = 10;
  r.n_inputs = 2;
  return r;
}

static infer_status upsample_parse(const node *n, void **params) {
  const char *mode;
  TRY(attr_get_string(n, "mode", "nearest", &mode));
  if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Upsample: mode '%s' must be nearest or linear",
                      mode);
  const float *v;
  int count;
  TRY(attr_get_floats(n, "scales", &v, &count));
  if (n->opset < 9 && count < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Upsample: attribute 'scales' is required");
  if (n->opset >= 9 && count >= 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Upsample: 'scales' is an input from opset 9");
  if (count > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Upsample: %d scales", count);
  node r = as_resize(n);
  void *rp = NULL;
  TRY(op_resize.parse(&r, &rp));
  upsample_params *p = malloc(sizeof *p);
  if (!p) {
    free(rp);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Upsample: out of memory");
  }
  p->resize = *(resize_params *)rp;
  free(rp);
  p->n_scales = count;
  for (int i = 0; i < count; i++) p->scales[i] = v[i];
  *params = p;
  return INFER_OK;
}

/* The Resize-10 inputs: X and the scales (the attribute as a tensor, or input 1). */
static infer_status upsample_inputs(const node *n, const upsample_params *p,
                                    const tensor *const *in, tensor *attr_scales,
                                    const tensor **rin) {
  rin[0] = in[0];
  if (p->n_scales >= 0) {
    memset(attr_scales, 0, sizeof *attr_scales);
    attr_scales->dtype = INFER_DTYPE_FLOAT32;
    attr_scales->rank = 1;
    attr_scales->dims[0] = p->n_scales;
    attr_scales->data = (void *)p->scales;
    rin[1] = attr_scales;
  } else {
    if (n->n_inputs < 2 || !in[1])
      return infer_fail(INFER_ERR_INVALID_MODEL, "Upsample: input 'scales' is missing");
    rin[1] = in[1];
  }
  const tensor *s = rin[1];
  if (s->data && s->dtype == INFER_DTYPE_FLOAT32)
    for (int64_t i = 0; i < dims_count(s->rank, s->dims); i++)
      if (!(((const float *)s->data)[i] >= 1.0f))
        return infer_fail(INFER_ERR_INVALID_MODEL, "Upsample: scale %g must be >= 1",
                          ((const float *)s->data)[i]);
  return INFER_OK;
}

static infer_status upsample_infer(const node *n, const void *params, const tensor *const *in,
                                   tensor *const *out) {
  const upsample_params *p = params;
  tensor attr_scales;
  const tensor *rin[2];
  TRY(upsample_inputs(n, p, in, &attr_scales, rin));
  node r = as_resize(n);
  return op_resize.infer(&r, &p->resize, rin, out);
}

static int64_t upsample_workspace(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out) {
  const upsample_params *p = params;
  tensor attr_scales;
  const tensor *rin[2];
  if (upsample_inputs(n, p, in, &attr_scales, rin) != INFER_OK) return -1;
  node r = as_resize(n);
  return op_resize.workspace(&r, &p->resize, rin, out);
}

static infer_status upsample_run(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out, void *ws) {
  const upsample_params *p = params;
  tensor attr_scales;
  const tensor *rin[2];
  TRY(upsample_inputs(n, p, in, &attr_scales, rin));
  node r = as_resize(n);
  return op_resize.run(&r, &p->resize, rin, out, ws);
}

const op_desc op_upsample = {.name = "Upsample",
                             .domain = "",
                             .since = 7,
                             .until = 9,
                             .min_inputs = 1,
                             .max_inputs = 2,
                             .min_outputs = 1,
                             .max_outputs = 1,
                             .attrs = upsample_attrs,
                             .parse = upsample_parse,
                             .infer = upsample_infer,
                             .run = upsample_run,
                             .workspace = upsample_workspace};
