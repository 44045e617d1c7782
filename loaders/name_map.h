/* name_map.h: string -> int hash map (open addressing) for value names while loading. */
#ifndef INFER_NAME_MAP_H
#define INFER_NAME_MAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct name_map {
  const char **keys; /* borrowed: the strings must outlive the map */
  int *vals;
  size_t cap, count;
} name_map;

bool name_map_init(name_map *m, size_t cap);
void name_map_free(name_map *m);
int name_map_get(const name_map *m, const char *key); /* -1 when absent */
bool name_map_put(name_map *m, const char *key, int val); /* false: out of memory */

#endif
