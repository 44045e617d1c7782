/* cli_output_dir.c: --output DIR, made (with its parents) when it does not exist. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

int cli_make_output_dir(const char *dir) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
    fprintf(stderr, "infer: --output %s: the path is too long\n", dir);
    return EXIT_USAGE;
  }
  /* each prefix ending before a '/', then the whole path */
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p != 0) continue;
    char saved = *p;
    *p = 0;
    struct stat st;
    if (stat(path, &st) != 0) {
      if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "infer: --output %s: cannot create %s: %s\n", dir, path, strerror(errno));
        return EXIT_USAGE;
      }
    } else if (!S_ISDIR(st.st_mode)) {
      if (saved) fprintf(stderr, "infer: --output %s: %s is not a directory\n", dir, path);
      else fprintf(stderr, "infer: --output %s: not a directory\n", dir);
      return EXIT_USAGE;
    }
    *p = saved;
    if (!saved) break;
  }
  return EXIT_OK;
}
