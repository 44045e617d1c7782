/* labels.c: reading a class-name file, one name per line. */
#include "labels.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LABELS_MAX_BYTES = 16 << 20 };

void labels_clear(labels *l) {
  if (!l) return;
  free(l->names);
  free(l->text);
  memset(l, 0, sizeof *l);
}

bool labels_read(const char *path, labels *out, char *err, size_t cap) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, cap, "cannot open: %s", strerror(errno));
    return false;
  }
  char *text = malloc(LABELS_MAX_BYTES + 1);
  if (!text) {
    fclose(f);
    snprintf(err, cap, "out of memory");
    return false;
  }
  size_t n = fread(text, 1, LABELS_MAX_BYTES + 1, f);
  bool bad_read = ferror(f) != 0;
  fclose(f);
  if (bad_read || n > LABELS_MAX_BYTES) {
    free(text);
    snprintf(err, cap, bad_read ? "read error" : "larger than 16 MiB: not a label file");
    return false;
  }
  text[n] = 0;
  if (memchr(text, 0, n)) {
    free(text);
    snprintf(err, cap, "holds NUL bytes: not a text file of labels");
    return false;
  }
  /* a final newline ends the last line rather than starting an empty one */
  int lines = 0;
  for (size_t i = 0; i < n; i++) lines += text[i] == '\n';
  if (n > 0 && text[n - 1] != '\n') lines++;
  if (lines == 0) {
    free(text);
    snprintf(err, cap, "is empty: no labels");
    return false;
  }
  char **names = malloc(sizeof(char *) * (size_t)lines);
  if (!names) {
    free(text);
    snprintf(err, cap, "out of memory");
    return false;
  }
  char *p = text;
  for (int k = 0; k < lines; k++) {
    char *nl = strchr(p, '\n');
    if (nl) *nl = 0;
    size_t len = strlen(p);
    if (len > 0 && p[len - 1] == '\r') p[--len] = 0;
    if (len == 0) {
      free(names);
      free(text);
      snprintf(err, cap, "line %d is empty (line i names class i; an empty line would shift "
               "every class after it)", k + 1);
      return false;
    }
    names[k] = p;
    p = nl ? nl + 1 : p + len;
  }
  out->count = lines;
  out->names = names;
  out->text = text;
  return true;
}
