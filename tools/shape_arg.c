/* shape_arg.c: "NAME=AxBxC" command-line shapes. */
#include "shape_arg.h"

#include <stdlib.h>
#include <string.h>

bool shape_arg_parse(char *arg, const char **name, int *rank, int64_t *dims, int max_rank) {
  char *eq = strrchr(arg, '=');
  if (!eq || eq == arg) return false;
  *eq = 0;
  *name = arg;
  *rank = 0;
  char *p = eq + 1;
  if (strcmp(p, "scalar") == 0) return true;
  while (*p) {
    if (*rank == max_rank) return false;
    char *end;
    long long d = strtoll(p, &end, 10);
    if (end == p || d < 0) return false;
    dims[(*rank)++] = d;
    if (*end == 'x' || *end == ',') end++;
    else if (*end) return false;
    p = end;
  }
  return *rank > 0;
}
