/* status.c: thread-local error messages. */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { MESSAGE_CAP = 2048 };
static _Thread_local char last_message[MESSAGE_CAP];

const char *infer_last_error(void) { return last_message; }

infer_status infer_fail(infer_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_message, sizeof last_message, fmt, ap);
  va_end(ap);
  return code;
}

infer_status infer_fail_prefix(infer_status code, const char *fmt, ...) {
  char prefix[512];
  char old[MESSAGE_CAP];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, last_message, sizeof old);
  snprintf(last_message, sizeof last_message, "%s: %s", prefix, old);
  return code;
}

const char *infer_status_name(infer_status s) {
  switch (s) {
    case INFER_OK: return "ok";
    case INFER_ERR_INVALID_ARGUMENT: return "invalid argument";
    case INFER_ERR_INVALID_MODEL: return "invalid model";
    case INFER_ERR_INVALID_INPUT: return "invalid input";
    case INFER_ERR_IO: return "i/o error";
    case INFER_ERR_UNSUPPORTED: return "unsupported";
    case INFER_ERR_DEVICE: return "device error";
    case INFER_ERR_OUT_OF_MEMORY: return "out of memory";
    case INFER_ERR_RUNTIME: return "runtime error";
    case INFER_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
const char *infer_version(void) {
  return TEXT(INFER_VERSION_MAJOR) "." TEXT(INFER_VERSION_MINOR) "." TEXT(INFER_VERSION_PATCH);
}
