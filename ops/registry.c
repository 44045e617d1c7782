/* registry.c: the one table of ops, joined from the op family lists. */
#include <string.h>

#include "op.h"

static const op_desc *const *const families[] = {
    ops_elementwise, ops_activation, ops_conv,  ops_pool,     ops_norm,
    ops_matmul,      ops_reduce,     ops_shape, ops_movement, ops_matmul_fused,
    ops_attention_fused, ops_elementwise_chain,
    ops_index,  /* ops/index.c */
    ops_vision, /* ops/vision.c */
    ops_quant,  /* ops/quant.c */
    ops_misc,   /* ops/misc.c */
    ops_control, /* ops/control.c */
    ops_recurrent, /* ops/recurrent.c */
    ops_attention_onnx, /* ops/attention_onnx.c */
    ops_signal, /* ops/signal.c */
};
enum { FAMILY_COUNT = sizeof families / sizeof families[0] };

static const char *domain_of(const char *d) {
  return (d == NULL || strcmp(d, "ai.onnx") == 0) ? "" : d;
}

int op_registry_count(void) {
  int n = 0;
  for (int f = 0; f < FAMILY_COUNT; f++)
    for (const op_desc *const *p = families[f]; *p; p++) n++;
  return n;
}

const op_desc *op_registry_at(int i) {
  for (int f = 0; f < FAMILY_COUNT; f++)
    for (const op_desc *const *p = families[f]; *p; p++)
      if (i-- == 0) return *p;
  return NULL;
}

const op_desc *op_registry_find(const char *domain, const char *op_type, int64_t opset,
                                bool *known_op) {
  const char *d = domain_of(domain);
  if (known_op) *known_op = false;
  for (int f = 0; f < FAMILY_COUNT; f++)
    for (const op_desc *const *p = families[f]; *p; p++) {
      const op_desc *o = *p;
      if (strcmp(o->name, op_type) != 0 || strcmp(domain_of(o->domain), d) != 0) continue;
      if (known_op) *known_op = true;
      if (opset >= o->since && opset <= o->until) return o;
    }
  return NULL;
}

infer_status infer_op_info(int i, const char **name, const char **domain, int *since_opset,
                           int *until_opset) {
  const op_desc *o = i >= 0 ? op_registry_at(i) : NULL;
  if (!o) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "op index %d out of range", i);
  if (name) *name = o->name;
  if (domain) *domain = o->domain[0] ? o->domain : "ai.onnx";
  if (since_opset) *since_opset = o->since;
  if (until_opset) *until_opset = o->until;
  return INFER_OK;
}
