/* options.c: build options, an opaque object with setters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "../core/status.h"
#include "../core/tensor.h"

infer_status infer_options_create(infer_options **out) {
  if (!out) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_options_create: out is NULL");
  *out = calloc(1, sizeof(infer_options));
  if (!*out) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  (*out)->cuda_graph = true;
  return INFER_OK;
}

void infer_options_release(infer_options *o) {
  if (!o) return;
  for (int i = 0; i < o->n_shapes; i++) {
    free(o->shapes[i].name);
    free(o->shapes[i].value.data);
  }
  free(o->shapes);
  free(o->images);
  free(o->cache_path);
  config_clear(&o->cfg);
  free(o);
}

infer_status infer_options_set_device(infer_options *o, infer_device d, int index) {
  if (!o || (d != INFER_DEVICE_CPU && d != INFER_DEVICE_CUDA) || index < 0)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "invalid device %d:%d", (int)d, index);
  o->device = d;
  o->device_index = index;
  return INFER_OK;
}

infer_status infer_options_set_precision(infer_options *o, infer_precision p) {
  if (!o || p < INFER_PRECISION_FP32 || p > INFER_PRECISION_FP16)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "invalid precision %d", (int)p);
  o->precision = p;
  return INFER_OK;
}

/* Adds or replaces the shape bound to an input name (name != NULL) or index. */
static infer_status set_shape(infer_options *o, const char *name, int index, int rank,
                              const int64_t *dims) {
  if (!o || rank < 0 || rank > INFER_MAX_RANK || (rank > 0 && !dims))
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "invalid shape for input '%s'",
                      name ? name : "(by index)");
  for (int i = 0; i < rank; i++)
    if (dims[i] < -1)
      return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input '%s': dim %d is negative",
                        name ? name : "(by index)", i);
  input_shape *s = NULL;
  for (int i = 0; i < o->n_shapes; i++)
    if (name ? (o->shapes[i].name && strcmp(o->shapes[i].name, name) == 0)
             : (!o->shapes[i].name && o->shapes[i].index == index))
      s = &o->shapes[i];
  if (!s) {
    input_shape *grown = realloc(o->shapes, sizeof(input_shape) * (size_t)(o->n_shapes + 1));
    if (!grown) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    o->shapes = grown;
    s = &o->shapes[o->n_shapes];
    memset(s, 0, sizeof *s);
    if (name && !(s->name = strdup(name)))
      return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    s->index = index;
    o->n_shapes++;
  }
  s->rank = rank;
  for (int i = 0; i < rank; i++) s->dims[i] = dims[i];
  return INFER_OK;
}

infer_status infer_options_set_input_shape(infer_options *o, const char *name, int rank,
                                           const int64_t *dims) {
  if (!name) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input name is NULL");
  return set_shape(o, name, -1, rank, dims);
}

infer_status infer_options_set_input_shape_at(infer_options *o, int index, int rank,
                                              const int64_t *dims) {
  if (index < 0) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input index %d", index);
  return set_shape(o, NULL, index, rank, dims);
}

infer_status infer_options_set_input_constant_at(infer_options *o, int index,
                                                 const infer_tensor *t) {
  if (!t || index < 0 || t->rank < 0 || t->rank > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "invalid constant for input %d", index);
  int64_t nb = tensor_nbytes(t);
  if (nb < 0 || (nb > 0 && !t->data))
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "invalid constant for input %d", index);
  TRY(set_shape(o, NULL, index, t->rank, t->dims));
  input_shape *s = NULL;
  for (int i = 0; i < o->n_shapes; i++)
    if (!o->shapes[i].name && o->shapes[i].index == index) s = &o->shapes[i];
  void *copy = malloc(nb > 0 ? (size_t)nb : 1);
  if (!copy) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  if (nb > 0) memcpy(copy, t->data, (size_t)nb);
  free(s->value.data);
  s->value = *t;
  s->value.data = copy;
  return INFER_OK;
}

infer_status infer_options_set_batch(infer_options *o, int64_t batch) {
  if (!o || batch < 1)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "batch must be at least 1, not %lld",
                      (long long)batch);
  o->batch = batch;
  return INFER_OK;
}

infer_status infer_options_set_verbose(infer_options *o, int level) {
  if (!o) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "options is NULL");
  o->log.verbose = level;
  return INFER_OK;
}

infer_status infer_options_set_cuda_graph(infer_options *o, int enabled) {
  if (!o) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "options is NULL");
  o->cuda_graph = enabled != 0;
  return INFER_OK;
}

infer_status infer_options_set_sync_each_op(infer_options *o, int enabled) {
  if (!o) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "options is NULL");
  o->sync_each_op = enabled != 0;
  return INFER_OK;
}

infer_status infer_options_set_profile(infer_options *o, int enabled) {
  if (!o) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "options is NULL");
  o->profile = enabled != 0;
  return INFER_OK;
}

infer_status infer_options_set_cache(infer_options *o, const char *path) {
  if (!o) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "options is NULL");
  if (path && !path[0]) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "cache path is empty");
  char *copy = NULL;
  if (path && !(copy = strdup(path))) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  free(o->cache_path);
  o->cache_path = copy;
  return INFER_OK;
}

infer_status infer_options_set_workspace_limit(infer_options *o, int64_t bytes) {
  if (!o) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "options is NULL");
  if (bytes < 0)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "workspace limit %lld is negative",
                      (long long)bytes);
  o->workspace_limit = bytes;
  return INFER_OK;
}

infer_status infer_options_set_memory_limit(infer_options *o, int64_t host_bytes,
                                           int64_t device_bytes) {
  if (!o) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "options is NULL");
  if (host_bytes < 0 || device_bytes < 0)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "memory limits must not be negative (host "
                      "%lld, device %lld bytes)", (long long)host_bytes, (long long)device_bytes);
  o->host_memory_limit = host_bytes;
  o->device_memory_limit = device_bytes;
  return INFER_OK;
}

infer_status infer_options_set_log(infer_options *o, infer_log_fn fn, void *user) {
  if (!o) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "options is NULL");
  o->log.fn = fn;
  o->log.user = user;
  return INFER_OK;
}

infer_status infer_options_set_config(infer_options *o, const char *key, const char *value) {
  if (!o || !key) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_options_set_config: NULL argument");
  return config_set(&o->cfg, key, value);
}
