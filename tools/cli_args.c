/* cli_args.c: command-line parsing for `infer`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "shape_arg.h"

void cli_usage(FILE *f) {
  fprintf(f,
          "usage: infer MODEL.onnx [options]\n"
          "       infer MODEL.onnx --image FILE [--image FILE ...] [--labels FILE] [--top K]\n"
          "       infer --image FILE ... --save-input FILE.npy   (preprocess only)\n"
          "       infer --diagnose          what this build and machine offer, problems and fixes\n"
          "  --device cpu|cuda[:N]     where to run (default cpu)\n"
          "  --precision fp32|tf32|fp16  (default fp32)\n"
          "  --input [NAME=]FILE       input tensor (.pb TensorProto or .npy); by name or in order\n"
          "  --shape NAME=AxBxC        bind a symbolic input shape\n"
          "  --batch N                 value of every unbound first (batch) dim\n"
          "  --reference [NAME=]FILE   expected output; by name or in order\n"
          "  --rtol R --atol A         tolerance |out-ref| <= atol + rtol*|ref| (1e-3, 1e-7)\n"
          "  --output DIR              write each output as DIR/NAME.npy (DIR is created)\n"
          "  --seed N                  seed of the random inputs used when none are given\n"
          "  --image FILE              a JPEG or PNG as the (single) input; several make a batch;\n"
          "                            preprocessed as torchvision's ImageNet preset by default\n"
          "  --preprocess P            imagenet (resize 256, crop 224, ImageNet mean/std),\n"
          "                            inception (342, 299), none (pixels / 255 only)\n"
          "  --resize N|HxW            shorter side to N (bilinear, as PIL), or exactly HxW; 0: none\n"
          "  --crop N|HxW              center crop (zero-padded where larger); 0: none\n"
          "  --mean R,G,B --std R,G,B  normalization (x / 255 - mean) / std\n"
          "  --input-type u8|f32       u8: input 0 is fed as uint8 N x H x W x 3 (a quarter of the\n"
          "                            bytes) and the engine normalizes it with the --preprocess\n"
          "                            preset's or --mean/--std values (the GPU in its first\n"
          "                            kernel); with --image the pixels go in as decoded, resized\n"
          "                            and cropped. f32 (default): as the model says\n"
          "  --labels FILE             class names, one per line (models/imagenet_labels.txt)\n"
          "  --top K                   print the K most probable classes per image (default 5)\n"
          "  --save-input FILE.npy     write the preprocessed image batch\n"
          "  --quiet | --verbose\n"
          "  --bench                   time runs and print a report (random inputs rotated\n"
          "                            among several buffers); with --warmup MS (200),\n"
          "                            --duration S (3), --iterations N (exactly N runs;\n"
          "                            with --duration too, at least N), --json FILE\n"
          "  --streams N               with --bench: N contexts, each in its own thread, fed from\n"
          "                            their in-place (pinned) input buffers, written once: runs\n"
          "                            time H2D + compute + D2H only; reports total images/s,\n"
          "                            per-stream latency and how much copy time was hidden\n"
          "  --no-cuda-graph           run the steps one by one instead of replaying a CUDA graph\n"
          "  --no-transfers            with --bench on cuda: inputs and outputs stay in device\n"
          "                            memory (bound once), so runs time no host transfers\n"
          "  --cache FILE              keep the algorithms measured at a CUDA build in FILE and\n"
          "                            reuse them (a stale or corrupt file is ignored, with a\n"
          "                            warning, and rewritten)\n"
          "  --workspace-limit MiB     CUDA: most scratch memory one step's algorithm may use\n"
          "                            (default 1024)\n"
          "  --max-memory SIZE         the most host memory the engine and its contexts may\n"
          "                            take (weights, folded constants, arena, workspace,\n"
          "                            staging); SIZE in bytes or with K, M, G, T (x1024)\n"
          "  --max-device-memory SIZE  the same for GPU memory; both unlimited by default\n"
          "  --config KEY=VALUE        a library setting (infer_options_set_config): channels_last,\n"
          "                            cuda.poison, cuda.conv_impl, cuda.cudnn_rtc, cuda.nan_exact,\n"
          "                            cuda.conv_bias_first, cuda.host_fallback,\n"
          "                            cuda.attention_impl, cuda.dynamic_output_bytes,\n"
          "                            outline_dynamic, int8, keep_values, cpu.fp16_storage,\n"
          "                            precision.fp32_ops, precision.fp32_nodes,\n"
          "                            test.fail_step, test.fail_after\n"
          "  --profile                 one line per step: median time, share, FLOPs, bytes,\n"
          "                            achieved rates, roofline fraction (--peak-tflops T,\n"
          "                            --peak-gbs G set the peaks; H200 figures by default)\n"
          "  --compare-precision       run the model as the other flags say and as fp32 on the\n"
          "                            CPU, compare every intermediate both keep (by ONNX name)\n"
          "                            and print them ranked by where the error grows: max/mean\n"
          "                            error, ranges, NaN/Inf, float16 overflow, what ran\n"
          "  --fp32-ops OP,...          fp16 builds: nodes of these op types compute and store\n"
          "                            float32 (casts placed around them); auto (default): Pow,\n"
          "                            Exp, ReduceSumSquare and reductions of them; none: nothing;\n"
          "                            auto,OP,... adds to the default (docs/precision.md)\n"
          "  --fp32-nodes NAME,...     the same for the nodes of these names\n"
          "exit codes: 0 ok, 1 outputs differ from --reference, 2 bad usage/model/input,\n"
          "            3 unsupported op/attribute/dtype, 4 device or runtime failure\n");
}

void cli_hint_flags(const char *message) {
  static const struct {
    const char *api, *flag;
  } names[] = {{"infer_options_set_batch", "--batch N"},
               {"infer_options_set_input_shape", "--shape NAME=AxBxC"},
               {"INFER_DEVICE_CPU", "--device cpu"},
               {"infer_options_set_memory_limit", "--max-memory / --max-device-memory SIZE"}};
  for (size_t i = 0; message && i < sizeof names / sizeof names[0]; i++)
    if (strstr(message, names[i].api))
      fprintf(stderr, "infer: (%s is %s here)\n", names[i].api, names[i].flag);
}

int cli_exit_code(infer_status s) {
  switch (s) {
    case INFER_OK: return EXIT_OK;
    case INFER_ERR_UNSUPPORTED: return EXIT_UNSUPPORTED;
    case INFER_ERR_INVALID_ARGUMENT:
    case INFER_ERR_INVALID_MODEL:
    case INFER_ERR_INVALID_INPUT:
    case INFER_ERR_IO: return EXIT_USAGE;
    default: return EXIT_DEVICE;
  }
}

/* Every option, for "did you mean" (keep in step with cli_parse, cli_image_option and
 * cli_usage; the test cli_did_you_mean_every_option checks it against --help). */
static const char *const options[] = {
    "--help", "--quiet", "--verbose", "--bench", "--no-cuda-graph", "--no-transfers",
    "--diagnose", "--profile", "--device", "--precision", "--input", "--reference", "--shape",
    "--batch", "--rtol", "--atol", "--warmup", "--duration", "--iterations", "--peak-tflops",
    "--peak-gbs", "--json", "--workspace-limit", "--cache", "--output", "--seed", "--config",
    "--streams", "--input-type", "--compare-precision", "--fp32-ops",
    "--fp32-nodes", "--max-memory", "--max-device-memory",
    /* tools/cli_image.c */
    "--image", "--preprocess", "--resize", "--crop", "--mean", "--std", "--labels", "--top",
    "--save-input"};

/* Edit distance (insertions, deletions, substitutions, adjacent swaps) of two short
 * strings; long ones count as far apart. */
static int distance(const char *a, const char *b) {
  int la = (int)strlen(a), lb = (int)strlen(b);
  if (la > 40 || lb > 40) return 99;
  int d[41][41];
  for (int i = 0; i <= la; i++) d[i][0] = i;
  for (int j = 0; j <= lb; j++) d[0][j] = j;
  for (int i = 1; i <= la; i++)
    for (int j = 1; j <= lb; j++) {
      int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      bool swap = i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1];
      if (swap && d[i - 2][j - 2] + 1 < best) best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[la][lb];
}

/* The option an unknown one was most likely meant to be: the only one it is a prefix
 * of, else the nearest within a third of its length; NULL when none is close. */
static const char *did_you_mean(const char *o) {
  const char *prefix_of = NULL, *best = NULL;
  int n_prefix = 0, best_d = 99;
  size_t len = strlen(o);
  for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
    if (len > 2 && strncmp(options[i], o, len) == 0) {
      prefix_of = options[i];
      n_prefix++;
    }
    int d = distance(o, options[i]);
    if (d < best_d) {
      best_d = d;
      best = options[i];
    }
  }
  if (n_prefix == 1) return prefix_of;
  return best_d <= (int)(len / 3 > 1 ? len / 3 : 1) ? best : NULL;
}

static bool bad(const char *fmt, const char *arg) {
  fprintf(stderr, "infer: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n");
  return false;
}

static bool parse_named(const char *arg, named_file *f) {
  const char *eq = strchr(arg, '=');
  if (eq && eq != arg) {
    /* NAME=FILE; the name is a view into argv, so cut it there */
    ((char *)eq)[0] = 0;
    f->name = arg;
    f->path = eq + 1;
  } else {
    f->name = NULL;
    f->path = arg;
  }
  return f->path[0] != 0;
}

static bool parse_double(const char *s, double *out) {
  char *end;
  *out = strtod(s, &end);
  return end != s && *end == 0 && *out >= 0;
}

/* "4G", "512M", "1.5G", "100000": bytes, the suffixes K M G T (optionally followed by
 * "B" or "iB") powers of 1024; at least 1 byte. */
static bool parse_size(const char *s, int64_t *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || !(v >= 0)) return false;
  double scale = 1;
  switch (*end) {
    case 'k': case 'K': scale = 1024.0; end++; break;
    case 'm': case 'M': scale = 1024.0 * 1024; end++; break;
    case 'g': case 'G': scale = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': scale = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
  }
  if (scale > 1 && end[0] == 'i' && end[1] == 'B') end += 2;
  else if (*end == 'B') end++;
  if (*end || v * scale < 1 || v * scale > 9.0e18) return false;
  *out = (int64_t)(v * scale);
  return true;
}

static bool unknown_option(const char *o) {
  const char *near = did_you_mean(o);
  if (!near) return bad("unknown option '%s'", o);
  fprintf(stderr, "infer: unknown option '%s'; did you mean '%s'?\n", o, near);
  return false;
}

bool cli_parse(int argc, char **argv, cli_args *a) {
  memset(a, 0, sizeof *a);
  a->rtol = 1e-3;
  a->atol = 1e-7;
  a->warmup_ms = 200;
  a->duration_s = 3;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    bool takes = true;
    int image_opt;
    if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
      cli_usage(stdout);
      exit(EXIT_OK);
    } else if (strcmp(o, "--quiet") == 0) {
      a->quiet = true; takes = false;
    } else if (strcmp(o, "--verbose") == 0) {
      a->verbose = true; takes = false;
    } else if (strcmp(o, "--bench") == 0) {
      a->bench = true; takes = false;
    } else if (strcmp(o, "--no-cuda-graph") == 0) {
      a->no_cuda_graph = true; takes = false;
    } else if (strcmp(o, "--no-transfers") == 0) {
      a->no_transfers = true; takes = false;
    } else if (strcmp(o, "--diagnose") == 0) {
      a->diagnose = true; takes = false;
    } else if (strcmp(o, "--profile") == 0) {
      a->profile = true; takes = false;
    } else if (strcmp(o, "--compare-precision") == 0) {
      a->compare_precision = true; takes = false;
    } else if (strcmp(o, "--config") == 0) {
      if (!v || !strchr(v, '=') || v[0] == '=') return bad("--config takes KEY=VALUE, not '%s'", v ? v : "");
      if (a->n_configs == 64) return bad("too many --config entries (at %s)", v);
      a->configs[a->n_configs++] = v;
    } else if (o[0] != '-' || strcmp(o, "-") == 0) {
      if (a->model) return bad("more than one model given ('%s')", o);
      a->model = o;
      takes = false;
    } else if (!v) {
      if (!did_you_mean(o) || strcmp(did_you_mean(o), o) != 0) return unknown_option(o);
      return bad("option %s needs a value", o);
    } else if (strcmp(o, "--device") == 0) {
      if (strcmp(v, "cpu") == 0) a->device = INFER_DEVICE_CPU;
      else if (strncmp(v, "cuda", 4) == 0 && (v[4] == 0 || v[4] == ':')) {
        a->device = INFER_DEVICE_CUDA;
        if (v[4] == ':') {
          char *end;
          long n = strtol(v + 5, &end, 10);
          if (end == v + 5 || *end || n < 0) return bad("bad device '%s'", v);
          a->device_index = (int)n;
        }
      } else return bad("unknown device '%s' (cpu, cuda or cuda:N)", v);
    } else if (strcmp(o, "--precision") == 0) {
      if (strcmp(v, "fp32") == 0) a->precision = INFER_PRECISION_FP32;
      else if (strcmp(v, "tf32") == 0) a->precision = INFER_PRECISION_TF32;
      else if (strcmp(v, "fp16") == 0) a->precision = INFER_PRECISION_FP16;
      else return bad("unknown precision '%s' (fp32, tf32, fp16)", v);
    } else if (strcmp(o, "--input") == 0) {
      if (a->n_inputs == 64) return bad("too many inputs%s", "");
      if (!parse_named(v, &a->inputs[a->n_inputs++])) return bad("bad --input '%s'", v);
    } else if (strcmp(o, "--reference") == 0) {
      if (a->n_refs == 64) return bad("too many references%s", "");
      if (!parse_named(v, &a->refs[a->n_refs++])) return bad("bad --reference '%s'", v);
    } else if (strcmp(o, "--shape") == 0) {
      if (a->n_shapes == 64) return bad("too many shapes%s", "");
      named_shape *sh = &a->shapes[a->n_shapes++];
      if (!shape_arg_parse(argv[i + 1], &sh->name, &sh->rank, sh->dims, INFER_MAX_RANK))
        return bad("bad --shape '%s' (want NAME=AxBxC)", v);
    } else if (strcmp(o, "--batch") == 0) {
      char *end;
      a->batch = strtoll(v, &end, 10);
      if (end == v || *end || a->batch < 1) return bad("bad --batch '%s'", v);
    } else if (strcmp(o, "--rtol") == 0) {
      if (!parse_double(v, &a->rtol)) return bad("bad --rtol '%s'", v);
    } else if (strcmp(o, "--atol") == 0) {
      if (!parse_double(v, &a->atol)) return bad("bad --atol '%s'", v);
    } else if (strcmp(o, "--warmup") == 0) {
      if (!parse_double(v, &a->warmup_ms)) return bad("bad --warmup '%s'", v);
    } else if (strcmp(o, "--duration") == 0) {
      if (!parse_double(v, &a->duration_s)) return bad("bad --duration '%s'", v);
      a->duration_given = true;
    } else if (strcmp(o, "--iterations") == 0) {
      char *end;
      a->iterations = strtoll(v, &end, 10);
      if (end == v || *end || a->iterations < 1) return bad("bad --iterations '%s'", v);
    } else if (strcmp(o, "--peak-tflops") == 0) {
      if (!parse_double(v, &a->peak_tflops)) return bad("bad --peak-tflops '%s'", v);
    } else if (strcmp(o, "--peak-gbs") == 0) {
      if (!parse_double(v, &a->peak_gbs)) return bad("bad --peak-gbs '%s'", v);
    } else if (strcmp(o, "--streams") == 0) {
      char *end;
      long n = strtol(v, &end, 10);
      if (end == v || *end || n < 1 || n > 64) return bad("bad --streams '%s' (1 to 64)", v);
      a->streams = (int)n;
    } else if (strcmp(o, "--fp32-ops") == 0) {
      a->fp32_ops = v;
    } else if (strcmp(o, "--fp32-nodes") == 0) {
      a->fp32_nodes = v;
    } else if (strcmp(o, "--json") == 0) {
      a->json = v;
    } else if (strcmp(o, "--workspace-limit") == 0) {
      char *end;
      long long mib = strtoll(v, &end, 10);
      if (end == v || *end || mib < 1 || mib > (1LL << 30))
        return bad("bad --workspace-limit '%s' (MiB, at least 1)", v);
      a->workspace_limit = mib << 20;
    } else if (strcmp(o, "--max-memory") == 0) {
      if (!parse_size(v, &a->max_memory))
        return bad("bad --max-memory '%s' (a size: bytes, or with K, M, G or T)", v);
    } else if (strcmp(o, "--max-device-memory") == 0) {
      if (!parse_size(v, &a->max_device_memory))
        return bad("bad --max-device-memory '%s' (a size: bytes, or with K, M, G or T)", v);
    } else if (strcmp(o, "--cache") == 0) {
      if (!v[0]) return bad("bad --cache '%s'", v);
      a->cache = v;
    } else if ((image_opt = cli_image_option(o, v, &a->image)) != 0) {
      if (image_opt < 0) return false;
    } else if (strcmp(o, "--output") == 0) {
      a->output_dir = v;
    } else if (strcmp(o, "--seed") == 0) {
      char *end;
      a->seed = strtoull(v, &end, 10);
      if (end == v || *end) return bad("bad --seed '%s'", v);
    } else {
      return unknown_option(o);
    }
    if (takes) i++;
  }
  if (!cli_image_check(&a->image, a->n_inputs > 0)) return false;
  bool preprocess_only = a->image.n_images > 0 && a->image.save_input;
  if (!a->model && !a->diagnose && !preprocess_only) return bad("no model given%s", "");
  if (a->image.n_images > 0 && (a->bench || a->profile))
    return bad("--image cannot be combined with --bench or --profile (they time random "
               "inputs)%s", "");
  if (a->compare_precision && (a->bench || a->profile || a->image.n_images > 0 ||
                               a->n_refs > 0 || a->output_dir))
    return bad("--compare-precision runs once and prints its table: it cannot be combined with "
               "--bench, --profile, --image, --reference or --output%s", "");
  if (a->streams > 0 && !a->bench) return bad("--streams needs --bench%s", "");
  if (a->streams > 0 && a->no_transfers)
    return bad("--streams feeds the streams from host memory: it cannot be combined with "
               "--no-transfers%s", "");
  if (a->no_transfers && (!a->bench || a->device != INFER_DEVICE_CUDA))
    return bad("--no-transfers needs --bench and --device cuda (device-resident inputs)%s", "");
  return true;
}
