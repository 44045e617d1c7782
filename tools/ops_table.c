/* ops_table.c: prints the supported-ops table (Markdown) from the registry, for the README. */
#include <stdio.h>

#include "infer.h"

int main(void) {
  printf("| op | domain | opsets |\n|---|---|---|\n");
  const char *name, *domain;
  int since, until;
  for (int i = 0; infer_op_info(i, &name, &domain, &since, &until) == INFER_OK; i++)
    printf("| %s | %s | %d-%d |\n", name, domain, since, until);
  return 0;
}
