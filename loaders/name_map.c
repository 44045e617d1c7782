/* name_map.c: FNV-1a hashed, linearly probed, grows at half full. */
#include "name_map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
  return (size_t)h;
}

bool name_map_init(name_map *m, size_t cap) {
  size_t c = 16;
  while (c < cap * 2) c *= 2;
  m->keys = calloc(c, sizeof(char *));
  m->vals = calloc(c, sizeof(int));
  m->cap = c;
  m->count = 0;
  return m->keys && m->vals;
}

void name_map_free(name_map *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

int name_map_get(const name_map *m, const char *key) {
  if (!m->cap) return -1;
  for (size_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    if (!m->keys[i]) return -1;
    if (strcmp(m->keys[i], key) == 0) return m->vals[i];
  }
}

static void insert(name_map *m, const char *key, int val) {
  size_t i = hash(key) & (m->cap - 1);
  while (m->keys[i]) i = (i + 1) & (m->cap - 1);
  m->keys[i] = key;
  m->vals[i] = val;
  m->count++;
}

bool name_map_put(name_map *m, const char *key, int val) {
  if ((m->count + 1) * 2 > m->cap) {
    name_map bigger;
    if (!name_map_init(&bigger, m->cap)) return false; /* doubles: init takes cap*2 */
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) insert(&bigger, m->keys[i], m->vals[i]);
    name_map_free(m);
    *m = bigger;
  }
  insert(m, key, val);
  return true;
}
