/* cuda_registry.c: the GPU implementations, joined from the family lists. */
#include <string.h>

#include "../cuda_op.h"

static const cuda_op *const *const families[] = {
    cuda_ops_elementwise, cuda_ops_conv,   cuda_ops_matmul,   cuda_ops_pool,
    cuda_ops_norm,        cuda_ops_reduce, cuda_ops_movement, cuda_ops_shape,
    cuda_ops_attention,   cuda_ops_elementwise_chain, cuda_ops_quantize,
    cuda_ops_conv_int8,
};

static const char *domain_of(const char *d) {
  return (d == NULL || strcmp(d, "ai.onnx") == 0) ? "" : d;
}

const cuda_op *cuda_op_find(const char *domain, const char *op_type) {
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (const cuda_op *const *p = families[f]; *p; p++)
      if (strcmp((*p)->name, op_type) == 0 &&
          strcmp(domain_of((*p)->domain), domain_of(domain)) == 0)
        return *p;
  return NULL;
}
