/* cli.h: the pieces of the `infer` command-line tool. */
#ifndef INFER_CLI_H
#define INFER_CLI_H

#include <stdbool.h>

#include "cli_image.h"
#include "infer.h"

/* Exit codes: the CLI's contract with scripts. */
enum {
  EXIT_OK = 0,
  EXIT_MISMATCH = 1,
  EXIT_USAGE = 2, /* bad usage, unreadable or invalid model or input */
  EXIT_UNSUPPORTED = 3,
  EXIT_DEVICE = 4 /* device or runtime failure */
};

typedef struct named_file {
  const char *name; /* NULL: bound by position */
  const char *path;
} named_file;

typedef struct named_shape {
  const char *name;
  int rank;
  int64_t dims[INFER_MAX_RANK];
} named_shape;

typedef struct cli_args {
  const char *model;
  infer_device device;
  int device_index;
  infer_precision precision;
  int n_inputs, n_refs, n_shapes;
  named_file inputs[64], refs[64];
  named_shape shapes[64];
  long long batch;
  double rtol, atol;
  const char *output_dir;
  bool quiet, verbose;
  unsigned long long seed;
  /* --bench */
  bool bench, no_cuda_graph, profile, diagnose;
  bool no_transfers; /* --bench with inputs and outputs bound in device memory */
  int streams;       /* --bench --streams N: N contexts, a thread each (0: not given) */
  double peak_tflops, peak_gbs;
  double warmup_ms, duration_s;
  bool duration_given; /* --duration on the command line (else the default 3 s) */
  long long iterations; /* --iterations; 0: not given */
  const char *json;
  const char *cache; /* --cache FILE: algorithm choices kept between builds, or NULL */
  int64_t workspace_limit; /* --workspace-limit, in bytes; 0: the library's default */
  int64_t max_memory, max_device_memory; /* --max-memory, --max-device-memory; 0: none */
  int n_configs;
  const char *configs[64]; /* --config KEY=VALUE, as given */
  bool compare_precision;  /* --compare-precision */
  const char *fp32_ops, *fp32_nodes; /* --fp32-ops / --fp32-nodes lists, as given */
  cli_image_args image;    /* --image, preprocessing, --labels, --top (cli_image.h) */
} cli_args;

/* Parses argv; prints the problem and returns false on bad usage. */
bool cli_parse(int argc, char **argv, cli_args *a);
void cli_usage(FILE *f);
/* After a library message: the flags of this command that do what the API names it
 * mentions do (the library never names the CLI's flags), one line each on stderr. */
void cli_hint_flags(const char *message);
/* Exit code for a library status. */
int cli_exit_code(infer_status s);
/* Compares out with ref (same shape), printing the worst errors under `name`;
 * returns true when every element is within atol + rtol * |ref|. */
bool cli_compare(const char *name, const infer_tensor *out, const infer_tensor *ref,
                 double rtol, double atol, bool quiet);

/* --output DIR: creates DIR and its missing parents; returns an exit code (the message
 * printed). */
int cli_make_output_dir(const char *dir);

/* Gives the options the --config entries and the settings the environment names
 * (INFER_CHANNELS_LAST, INFER_CONV_IMPL, INFER_POISON, INFER_CUDNN_RTC, INFER_SYNC:
 * the library itself reads no environment); --config wins. Returns an exit code. */
int cli_apply_config(const cli_args *a, infer_options *o);
/* Seeded random values of the model's input `index` shape (malloc'ed data);
 * returns an exit code. */
int cli_random_input(const infer_engine *e, int index, uint64_t *seed, infer_tensor *t);
/* The same values written into `data` (room for info's elements, info's dtype). */
void cli_random_fill(const infer_tensor *info, uint64_t *seed, void *data);
/* --bench: times runs of a built context and prints a trtexec-style report. */
int cli_bench(const cli_args *a, infer_engine *e, infer_context *c);
/* --bench --streams N (tools/cli_streams.c): N more contexts, each run by its own thread
 * from its in-place input buffers; c checks their outputs afterwards. */
int cli_bench_streams(const cli_args *a, infer_engine *e, infer_context *c);
/* --compare-precision (tools/cli_precision.c): e and c (built keeping their values, the
 * inputs set) against an fp32 CPU engine that `opts` is turned into; prints the ranked
 * table of infer_compare_values. Returns an exit code. */
int cli_compare_precision(const cli_args *a, infer_options *opts, infer_engine *e,
                          infer_context *c);
/* --profile: per-step times over several runs, with rates against the roofline. */
int cli_profile(const cli_args *a, infer_engine *e, infer_context *c);

#endif
