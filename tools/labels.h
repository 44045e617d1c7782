/* labels.h: class names for `infer --labels FILE`: line i of the file names class i
 * (the format of torchvision's category list, models/imagenet_labels.txt). */
#ifndef INFER_LABELS_H
#define INFER_LABELS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct labels {
  int count;
  char **names; /* count strings into text */
  char *text;
} labels;

/* Reads path: UTF-8 text, one name per line, "\n" or "\r\n"; a last line without a
 * newline counts, an empty line anywhere but at the very end is an error (it would
 * shift every class after it), as are NUL bytes and files over 16 MiB. On failure
 * err holds a message (with the line number where there is one). */
bool labels_read(const char *path, labels *out, char *err, size_t cap);
void labels_clear(labels *l);

#endif
