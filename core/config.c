/* config.c: key/value settings with the keys and values checked when set. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"

typedef enum kind { KIND_FLAG, KIND_COUNT, KIND_NAME, KIND_TRISTATE } kind;

/* The known keys. A change here goes with the list in include/infer.h. */
static const struct {
  const char *key;
  kind kind;
} known[] = {
    {"channels_last", KIND_TRISTATE}, /* auto | 0 | 1 */
    {"cuda.poison", KIND_FLAG},
    {"cuda.conv_impl", KIND_NAME},
    {"cuda.cudnn_rtc", KIND_FLAG},
    {"cuda.nan_exact", KIND_FLAG},
    {"cuda.conv_bias_first", KIND_FLAG},
    {"cuda.host_fallback", KIND_FLAG},
    {"cuda.attention_impl", KIND_NAME}, /* flash | cudnn */
    {"cuda.dynamic_output_bytes", KIND_COUNT},
    {"outline_dynamic", KIND_TRISTATE}, /* auto | 0 | 1 */
    {"int8", KIND_FLAG},
    {"keep_values", KIND_FLAG},
    {"precision.fp32_ops", KIND_NAME},
    {"precision.fp32_nodes", KIND_NAME},
    {"cpu.fp16_storage", KIND_FLAG},
    {"test.fail_step", KIND_COUNT},
    {"test.fail_after", KIND_COUNT},
};
enum { N_KNOWN = sizeof known / sizeof known[0] };

static bool parse_count(const char *v, int *out) {
  char *end = NULL;
  long n = strtol(v, &end, 10);
  if (!*v || *end || n < 0 || n > INT_MAX) return false;
  *out = (int)n;
  return true;
}

static infer_status check(const char *key, const char *value) {
  for (int i = 0; i < N_KNOWN; i++) {
    if (strcmp(known[i].key, key) != 0) continue;
    int n;
    bool ok = known[i].kind == KIND_FLAG       ? strcmp(value, "0") == 0 || strcmp(value, "1") == 0
              : known[i].kind == KIND_TRISTATE ? strcmp(value, "0") == 0 || strcmp(value, "1") == 0 ||
                                                     strcmp(value, "auto") == 0
              : known[i].kind == KIND_COUNT    ? parse_count(value, &n)
                                               : value[0] != 0;
    if (ok) return INFER_OK;
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "config '%s': value '%s' is not %s", key, value,
                      known[i].kind == KIND_FLAG       ? "0 or 1"
                      : known[i].kind == KIND_TRISTATE ? "auto, 0 or 1"
                      : known[i].kind == KIND_COUNT    ? "a non-negative integer"
                                                       : "a name");
  }
  char names[512];
  size_t len = 0;
  names[0] = 0;
  for (int i = 0; i < N_KNOWN && len < sizeof names; i++)
    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", known[i].key);
  return infer_fail(INFER_ERR_INVALID_ARGUMENT, "unknown config key '%s' (known: %s)", key, names);
}

infer_status config_set(config *c, const char *key, const char *value) {
  if (!c || !key) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "config: NULL key");
  if (value) TRY(check(key, value));
  for (int i = 0; i < c->n; i++) {
    if (strcmp(c->entries[i].key, key) != 0) continue;
    if (!value) {
      free(c->entries[i].key);
      free(c->entries[i].value);
      c->entries[i] = c->entries[--c->n];
      return INFER_OK;
    }
    char *v = strdup(value);
    if (!v) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    free(c->entries[i].value);
    c->entries[i].value = v;
    return INFER_OK;
  }
  if (!value) return INFER_OK;
  config_entry *grown = realloc(c->entries, sizeof *grown * (size_t)(c->n + 1));
  if (!grown) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  c->entries = grown;
  char *k = strdup(key), *v = strdup(value);
  if (!k || !v) {
    free(k);
    free(v);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  c->entries[c->n++] = (config_entry){k, v};
  return INFER_OK;
}

const char *config_get(const config *c, const char *key) {
  for (int i = 0; c && i < c->n; i++)
    if (strcmp(c->entries[i].key, key) == 0) return c->entries[i].value;
  return NULL;
}

bool config_flag(const config *c, const char *key, bool def) {
  const char *v = config_get(c, key);
  return v ? strcmp(v, "1") == 0 : def;
}

int config_int(const config *c, const char *key, int def) {
  const char *v = config_get(c, key);
  int n;
  return v && parse_count(v, &n) ? n : def;
}

infer_status config_copy(const config *from, config *to) {
  memset(to, 0, sizeof *to);
  for (int i = 0; from && i < from->n; i++) {
    infer_status st = config_set(to, from->entries[i].key, from->entries[i].value);
    if (st != INFER_OK) {
      config_clear(to);
      return st;
    }
  }
  return INFER_OK;
}

void config_clear(config *c) {
  if (!c) return;
  for (int i = 0; i < c->n; i++) {
    free(c->entries[i].key);
    free(c->entries[i].value);
  }
  free(c->entries);
  memset(c, 0, sizeof *c);
}
