/* attr.c: typed attribute access for op parse functions. */
#include <string.h>

#include "op.h"

const attr *node_attr(const node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
  return NULL;
}

static infer_status wrong_type(const char *name, const char *want) {
  return infer_fail(INFER_ERR_INVALID_MODEL, "attribute '%s' must be of type %s", name, want);
}

infer_status attr_get_int(const node *n, const char *name, int64_t def, int64_t *out) {
  const attr *a = node_attr(n, name);
  *out = def;
  if (!a) return INFER_OK;
  if (a->type != ATTR_INT) return wrong_type(name, "INT");
  *out = a->i;
  return INFER_OK;
}

infer_status attr_get_float(const node *n, const char *name, float def, float *out) {
  const attr *a = node_attr(n, name);
  *out = def;
  if (!a) return INFER_OK;
  if (a->type != ATTR_FLOAT) return wrong_type(name, "FLOAT");
  *out = a->f;
  return INFER_OK;
}

infer_status attr_get_string(const node *n, const char *name, const char *def,
                             const char **out) {
  const attr *a = node_attr(n, name);
  *out = def;
  if (!a) return INFER_OK;
  if (a->type != ATTR_STRING) return wrong_type(name, "STRING");
  *out = a->s;
  return INFER_OK;
}

infer_status attr_get_ints(const node *n, const char *name, const int64_t **v, int *count) {
  const attr *a = node_attr(n, name);
  *v = NULL;
  *count = -1;
  if (!a) return INFER_OK;
  if (a->type != ATTR_INTS) return wrong_type(name, "INTS");
  *v = a->ints;
  *count = a->n;
  return INFER_OK;
}

infer_status attr_get_floats(const node *n, const char *name, const float **v, int *count) {
  const attr *a = node_attr(n, name);
  *v = NULL;
  *count = -1;
  if (!a) return INFER_OK;
  if (a->type != ATTR_FLOATS) return wrong_type(name, "FLOATS");
  *v = a->floats;
  *count = a->n;
  return INFER_OK;
}
