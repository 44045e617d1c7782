/* index_depth.c: DepthToSpace (1+; mode 11+) and SpaceToDepth (1+) on N,C,H,W data of
 * any dtype, with blocksize b:
 *   DepthToSpace  [N, C, H, W] -> [N, C/(b*b), H*b, W*b]; mode DCR (default) takes the
 *                 block offset from the high channel bits, CRD from the low ones.
 *   SpaceToDepth  [N, C, H, W] -> [N, C*b*b, H/b, W/b] (the inverse of DCR).
 * Both are one strided copy: the output in C order is a 6-D view of the input. */
#include <stdlib.h>
#include <string.h>

#include "index_params.h"
#include "movement_copy.h"

static const char *const d2s_attrs[] = {"blocksize", "mode", NULL};
static const char *const s2d_attrs[] = {"blocksize", NULL};

static infer_status depth_space_parse(const node *n, void **params) {
  depth_space_params v = {.to_space = strcmp(n->op_type, "DepthToSpace") == 0};
  const char *mode;
  if (!node_attr(n, "blocksize"))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: attribute 'blocksize' is required",
                      n->op_type);
  TRY(attr_get_int(n, "blocksize", 1, &v.blocksize));
  if (v.blocksize < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: blocksize %lld must be >= 1", n->op_type,
                      (long long)v.blocksize);
  TRY(attr_get_string(n, "mode", "DCR", &mode));
  if (node_attr(n, "mode") && n->opset < 11)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "DepthToSpace: attribute 'mode' does not exist at opset %lld",
                      (long long)n->opset);
  if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "DepthToSpace: mode '%s' is not DCR or CRD", mode);
  v.crd = strcmp(mode, "CRD") == 0;
  depth_space_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", n->op_type);
  *p = v;
  *params = p;
  return INFER_OK;
}

infer_status depth_space_view(const depth_space_params *p, const tensor *x, int64_t *out_dims,
                              int64_t *dims, int64_t *strides) {
  const char *op = p->to_space ? "DepthToSpace" : "SpaceToDepth";
  char buf[160];
  if (x->rank != 4)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input must be N,C,H,W, not %s", op,
                      dims_format(x->rank, x->dims, buf, sizeof buf));
  int64_t b = p->blocksize, bb, N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  if (!size_mul(b, b, &bb))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: blocksize %lld is too large", op,
                      (long long)b);
  int64_t sC = H * W, sH = W, sW = 1, sN = C * sC;
  if (p->to_space) {
    if (C % bb != 0)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "DepthToSpace: channels %lld are not a multiple of blocksize^2 = %lld",
                        (long long)C, (long long)bb);
    int64_t Co = C / bb;
    out_dims[0] = N;
    out_dims[1] = Co;
    if (!size_mul(H, b, &out_dims[2]) || !size_mul(W, b, &out_dims[3]))
      return infer_fail(INFER_ERR_INVALID_MODEL, "DepthToSpace: output size overflows");
    /* output [N, C', H, b1, W, b2] */
    int64_t d[6] = {N, Co, H, b, W, b};
    int64_t s_dcr[6] = {sN, sC, sH, b * Co * sC, sW, Co * sC};
    int64_t s_crd[6] = {sN, bb * sC, sH, b * sC, sW, sC};
    memcpy(dims, d, sizeof d);
    memcpy(strides, p->crd ? s_crd : s_dcr, sizeof d);
  } else {
    if (H % b != 0 || W % b != 0)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "SpaceToDepth: height %lld and width %lld must be multiples of "
                        "blocksize %lld", (long long)H, (long long)W, (long long)b);
    out_dims[0] = N;
    if (!size_mul(C, bb, &out_dims[1]))
      return infer_fail(INFER_ERR_INVALID_MODEL, "SpaceToDepth: output size overflows");
    out_dims[2] = H / b;
    out_dims[3] = W / b;
    /* output [N, b1, b2, C, H/b, W/b] */
    int64_t d[6] = {N, b, b, C, H / b, W / b};
    int64_t s[6] = {sN, sH, sW, sC, b * sH, b * sW};
    memcpy(dims, d, sizeof d);
    memcpy(strides, s, sizeof s);
  }
  return INFER_OK;
}

static infer_status depth_space_infer(const node *n, const void *params, const tensor *const *in,
                                      tensor *const *out) {
  int64_t dims[6], strides[6];
  size_t es;
  TRY(movement_elem_size(n->op_type, in[0]->dtype, &es));
  TRY(depth_space_view(params, in[0], out[0]->dims, dims, strides));
  out[0]->rank = 4;
  out[0]->dtype = in[0]->dtype;
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: output size overflows", n->op_type);
  return INFER_OK;
}

static infer_status depth_space_run(const node *n, const void *params, const tensor *const *in,
                                    tensor *const *out, void *ws) {
  int64_t od[4], dims[6], strides[6];
  TRY(depth_space_view(params, in[0], od, dims, strides));
  movement_copy_view(out[0]->data, in[0]->data, infer_dtype_size(in[0]->dtype), 6, dims,
                     strides);
  return INFER_OK;
}

const op_desc op_depth_to_space = {.name = "DepthToSpace",
                                   .domain = "",
                                   .since = 1,
                                   .until = OP_OPSET_MAX,
                                   .min_inputs = 1,
                                   .max_inputs = 1,
                                   .min_outputs = 1,
                                   .max_outputs = 1,
                                   .attrs = d2s_attrs,
                                   .parse = depth_space_parse,
                                   .infer = depth_space_infer,
                                   .run = depth_space_run};

const op_desc op_space_to_depth = {.name = "SpaceToDepth",
                                   .domain = "",
                                   .since = 1,
                                   .until = OP_OPSET_MAX,
                                   .min_inputs = 1,
                                   .max_inputs = 1,
                                   .min_outputs = 1,
                                   .max_outputs = 1,
                                   .attrs = s2d_attrs,
                                   .parse = depth_space_parse,
                                   .infer = depth_space_infer,
                                   .run = depth_space_run};
