/* config.h: the rare settings, as key/value entries (infer_options_set_config), like ONNX
 * Runtime's session config entries. The library reads settings from here, never from the
 * environment. The keys it knows, with their values, are listed in include/infer.h. */
#ifndef INFER_CONFIG_H
#define INFER_CONFIG_H

#include <stdbool.h>

#include "../include/infer.h"

typedef struct config_entry {
  char *key, *value;
} config_entry;

typedef struct config {
  int n;
  config_entry *entries;
} config;

/* Adds or replaces key's entry (both copied); value NULL removes it. Checks the key and
 * the value against the known ones: INFER_ERR_INVALID_ARGUMENT naming them otherwise. */
infer_status config_set(config *c, const char *key, const char *value);
/* key's value, or NULL when not set (c may be NULL). */
const char *config_get(const config *c, const char *key);
/* key's value as a boolean ("1" true, "0" false), or def when not set. */
bool config_flag(const config *c, const char *key, bool def);
/* key's value as a non-negative integer, or def when not set. */
int config_int(const config *c, const char *key, int def);
/* A deep copy into *to (which is overwritten). */
infer_status config_copy(const config *from, config *to);
void config_clear(config *c);

#endif
