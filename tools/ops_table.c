/* ops_table.c: prints the supported-ops table (Markdown) from the registry, sorted by
 * name, for the README (tools/update-readme.sh pastes it; a test checks it is current). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"

typedef struct row {
  const char *name, *domain;
  int since, until;
} row;

static int by_name(const void *a, const void *b) {
  const row *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : x->since - y->since;
}

int main(void) {
  row rows[1024];
  int n = 0;
  while (n < 1024 && infer_op_info(n, &rows[n].name, &rows[n].domain, &rows[n].since,
                                   &rows[n].until) == INFER_OK)
    n++;
  qsort(rows, (size_t)n, sizeof(row), by_name);
  printf("| op | opsets | op | opsets | op | opsets |\n|---|---|---|---|---|---|\n");
  for (int i = 0; i < n; i += 3) {
    for (int j = i; j < i + 3; j++) {
      if (j < n)
        printf("| %s%s%s | %d-%d ", rows[j].name, strcmp(rows[j].domain, "ai.onnx") ? " " : "",
               strcmp(rows[j].domain, "ai.onnx") ? rows[j].domain : "", rows[j].since, rows[j].until);
      else
        printf("| | ");
    }
    printf("|\n");
  }
  printf("\n%d ops (default domain ai.onnx unless named).\n", n);
  return 0;
}
