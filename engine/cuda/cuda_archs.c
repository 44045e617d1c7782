/* cuda_archs.c: reading the build's CUDA architecture list (see cuda_archs.h). */
#include "cuda_archs.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct arch_entry {
  int number;    /* 90 for "90", "90-real", "90a" */
  bool sass;     /* has sm_NN code */
  bool ptx;      /* has compute_NN code */
  bool specific; /* "a"/"f" suffix: runs on exactly that compute capability */
  char suffix;   /* 'a', 'f' or 0 */
} arch_entry;

/* Next entry of the list from *p; false at the end. Malformed text is skipped. */
static bool next_entry(const char **p, arch_entry *e) {
  const char *s = *p;
  for (;;) {
    while (*s && (*s < '0' || *s > '9')) s++;
    if (!*s) {
      *p = s;
      return false;
    }
    memset(e, 0, sizeof *e);
    while (*s >= '0' && *s <= '9') e->number = e->number * 10 + (*s++ - '0');
    if (*s == 'a' || *s == 'f') e->suffix = *s++;
    e->specific = e->suffix != 0;
    e->sass = e->ptx = true;
    if (strncmp(s, "-real", 5) == 0) {
      e->ptx = false;
      s += 5;
    } else if (strncmp(s, "-virtual", 8) == 0) {
      e->sass = false;
      s += 8;
    }
    *p = s;
    if (e->number > 0) return true;
  }
}

cuda_arch_fit cuda_archs_fit(const char *list, int major, int minor, int *used) {
  int cc = major * 10 + minor, best_sass = 0, best_ptx = 0;
  arch_entry e;
  for (const char *p = list ? list : ""; next_entry(&p, &e);) {
    bool exact = e.number == cc;
    if (e.sass && (e.specific ? exact : e.number / 10 == major && e.number % 10 <= minor) &&
        e.number > best_sass)
      best_sass = e.number;
    if (e.ptx && (e.specific ? exact : e.number <= cc) && e.number > best_ptx)
      best_ptx = e.number;
  }
  if (used) *used = best_sass ? best_sass : best_ptx;
  return best_sass ? CUDA_ARCH_SASS : best_ptx ? CUDA_ARCH_PTX_JIT : CUDA_ARCH_NONE;
}

void cuda_archs_describe(const char *list, char *buf, size_t cap) {
  if (!cap) return;
  buf[0] = 0;
  size_t len = 0;
  arch_entry e;
  for (int pass = 0; pass < 2; pass++) { /* SASS first, then PTX */
    bool first = true;
    for (const char *p = list ? list : ""; next_entry(&p, &e);) {
      if (pass == 0 ? !e.sass : !e.ptx) continue;
      const char *lead = first ? (pass == 0 ? "" : len ? "; PTX " : "PTX ") : ", ";
      int n = snprintf(buf + len, cap - len, "%s%s_%d%s", lead, pass == 0 ? "sm" : "compute",
                       e.number, e.suffix ? (e.suffix == 'a' ? "a" : "f") : "");
      if (n < 0 || (size_t)n >= cap - len) return; /* truncated */
      len += (size_t)n;
      first = false;
    }
  }
  if (!len) snprintf(buf, cap, "(unknown)");
}
