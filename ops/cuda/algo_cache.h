/* algo_cache.h: the autotune cache (infer_options_set_cache, CLI --cache FILE).
 *
 * Choosing a cuDNN/cuBLAS algorithm means running and timing the candidates, which
 * dominates a cold CUDA build. The cache keeps each choice in a text file so a later
 * build on the same machine looks it up instead:
 *
 *   infer-algo-cache 1
 *   env <algo_cache_env(): GPU, SMs, compute capability, driver, runtime, cuDNN, cuBLAS>
 *   <key> <v0> <v1> <v2> <v3>        (one line per entry, sorted by key)
 *
 * A choice measured elsewhere may be wrong or invalid here, so the cache is never
 * trusted: a file made for another environment or format version, or with any line
 * that does not validate, is ignored whole with a warning on the log, and replaced
 * when the build saves. A file whose first line is not a cache header at all is
 * ignored and never overwritten (the path may name someone's other file by mistake).
 * Nothing here fails a build.
 *
 * One cache object belongs to one build (one thread). Processes sharing a file each
 * replace it whole and atomically: readers never see a partial file; the last save
 * wins.
 *
 * algo_cache.c has no CUDA calls (it is unit-tested in CPU-only builds);
 * algo_cache_env.c queries the versions.
 */
#ifndef INFER_ALGO_CACHE_H
#define INFER_ALGO_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../core/log.h"

struct infer_options;
typedef struct algo_cache algo_cache;

/* Longest key, in bytes; longer keys are refused (get misses, put warns). */
#define ALGO_CACHE_KEY_MAX 511
/* Longest environment string kept; a longer one is cut there. */
#define ALGO_CACHE_ENV_MAX 400

/* Reads path (it may not exist yet: empty cache, no warning). `env` is a one-line
 * description of the environment from algo_cache_env(); a file whose env line differs
 * is stale: ignored with a warning and replaced on save. A corrupt or truncated file
 * is ignored whole with a warning naming the path and line. Warnings go through
 * `log` (log_warn; NULL: stderr), which must outlive the cache. Returns NULL only when out of memory (or path/env is NULL). */
algo_cache *algo_cache_open(const char *path, const char *env,
                            const struct log_sink *log);

/* Writes into buf the environment line for `device`: infer's version, GPU name, SM
 * count, compute capability, driver and runtime versions, cuDNN and cuBLAS versions.
 * INFER_ERR_DEVICE when a query fails, INFER_ERR_INVALID_ARGUMENT when cap is too
 * small (256 bytes suffice). */
infer_status algo_cache_env(int device, char *buf, size_t cap);

/* key: printable ASCII without spaces, 1 to ALGO_CACHE_KEY_MAX bytes, built by the op
 * from everything the choice depends on (op and direction, shapes, dtypes, layout,
 * precision / math mode, attributes). vals: what was chosen (e.g. algorithm id, math
 * type, workspace bytes, spare). c may be NULL (no cache): get returns false and
 * counts nothing, put does nothing. get counts a hit or a miss. */
bool algo_cache_get(algo_cache *c, const char *key, int64_t vals[4]);
void algo_cache_put(algo_cache *c, const char *key, const int64_t vals[4]);

/* When anything was put (new or changed): writes the file whole to a temporary file
 * beside it, then renames it over path, so no reader ever sees half a file. A write
 * error is a warning, not a failure. Accepts NULL. */
void algo_cache_save(algo_cache *c);
/* Frees the cache without saving. Accepts NULL. */
void algo_cache_close(algo_cache *c);

int algo_cache_hits(const algo_cache *c);
int algo_cache_misses(const algo_cache *c);

#endif
