/* cli_config.c: the library's config entries from --config KEY=VALUE and from the
 * environment variables the command has always honoured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Environment variable -> config key (values pass through). */
static const struct {
  const char *env, *key;
} env_keys[] = {
    {"INFER_CHANNELS_LAST", "channels_last"},
    {"INFER_CONV_IMPL", "cuda.conv_impl"},
    {"INFER_POISON", "cuda.poison"},
    {"INFER_CUDNN_RTC", "cuda.cudnn_rtc"},
    {"INFER_NAN_EXACT", "cuda.nan_exact"},
};

int cli_apply_config(const cli_args *a, infer_options *o) {
  for (size_t i = 0; i < sizeof env_keys / sizeof env_keys[0]; i++) {
    const char *v = getenv(env_keys[i].env);
    if (!v || !*v) continue;
    infer_status s = infer_options_set_config(o, env_keys[i].key, v);
    if (s != INFER_OK) {
      fprintf(stderr, "infer: %s=%s: %s\n", env_keys[i].env, v, infer_last_error());
      return cli_exit_code(s);
    }
  }
  const char *sync = getenv("INFER_SYNC");
  if (sync && strcmp(sync, "1") == 0) infer_options_set_sync_each_op(o, 1);
  /* --fp32-ops / --fp32-nodes are config entries; a --config of the same key wins */
  const struct { const char *flag, *key, *value; } lists[] = {
      {"--fp32-ops", "precision.fp32_ops", a->fp32_ops},
      {"--fp32-nodes", "precision.fp32_nodes", a->fp32_nodes}};
  for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
    if (!lists[i].value) continue;
    infer_status s = infer_options_set_config(o, lists[i].key, lists[i].value);
    if (s != INFER_OK) {
      fprintf(stderr, "infer: %s %s: %s\n", lists[i].flag, lists[i].value, infer_last_error());
      return cli_exit_code(s);
    }
  }
  for (int i = 0; i < a->n_configs; i++) {
    char key[128];
    const char *eq = strchr(a->configs[i], '=');
    size_t n = (size_t)(eq - a->configs[i]);
    if (n >= sizeof key) n = sizeof key - 1;
    memcpy(key, a->configs[i], n);
    key[n] = 0;
    infer_status s = infer_options_set_config(o, key, eq + 1);
    if (s != INFER_OK) {
      fprintf(stderr, "infer: --config %s: %s\n", a->configs[i], infer_last_error());
      return cli_exit_code(s);
    }
  }
  return EXIT_OK;
}
