/* test_config.c: infer_options_set_config checks keys and values, replaces and removes
 * entries, and an engine built with channels_last=1 on the CPU runs the pass. */
#include <stdio.h>
#include <string.h>

#include "infer.h"
#include "check.h"

static void log_line(void *user, const char *line) {
  if (strstr(line, "pass to-channels-last")) *(int *)user = 1;
}

int main(int argc, char **argv) {
  infer_options *o = NULL;
  CHECK(infer_options_create(&o) == INFER_OK);
  CHECK(infer_options_set_config(o, "no.such.key", "1") == INFER_ERR_INVALID_ARGUMENT);
  CHECK(strstr(infer_last_error(), "no.such.key") && strstr(infer_last_error(), "channels_last"));
  CHECK(infer_options_set_config(o, "cuda.poison", "yes") == INFER_ERR_INVALID_ARGUMENT);
  CHECK(strstr(infer_last_error(), "0 or 1") != NULL);
  CHECK(infer_options_set_config(o, "test.fail_step", "-3") == INFER_ERR_INVALID_ARGUMENT);
  CHECK(infer_options_set_config(o, "channels_last", "sometimes") == INFER_ERR_INVALID_ARGUMENT);
  CHECK(infer_options_set_config(o, NULL, "1") == INFER_ERR_INVALID_ARGUMENT);
  CHECK(infer_options_set_config(o, "channels_last", "0") == INFER_OK);
  CHECK(infer_options_set_config(o, "channels_last", "1") == INFER_OK); /* replaces */
  CHECK(infer_options_set_config(o, "cuda.poison", "1") == INFER_OK);
  CHECK(infer_options_set_config(o, "cuda.poison", NULL) == INFER_OK); /* removes */
  if (argc > 1) {
    /* the engine keeps its own copy: the options may go before the build's readers */
    int ran = 0;
    infer_options_set_verbose(o, 1);
    infer_options_set_log(o, log_line, &ran);
    infer_options_set_batch(o, 1);
    infer_engine *e = NULL;
    CHECK(infer_engine_load(argv[1], o, &e) == INFER_OK);
    CHECK(ran == 1); /* channels_last=1 forced the pass on the CPU */
    infer_engine_release(e);
  }
  infer_options_release(o);
  if (failures) return 1;
  printf("test_config: all checks passed\n");
  return 0;
}
