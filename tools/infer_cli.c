/* infer_cli.c: `infer MODEL.onnx ...`: load, bind inputs, run, print or compare.
 * Uses only the public header, as any service would. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int fail(infer_status s, const char *what) {
  fprintf(stderr, "infer: %s: %s\n", what, infer_last_error());
  cli_hint_flags(infer_last_error());
  return cli_exit_code(s);
}

/* Index of the model input/output a file binds to: by name, else by position. */
static int bind_index(const named_file *f, int position, int count,
                      int (*by_name)(const infer_engine *, const char *), const infer_engine *e,
                      const char *kind) {
  if (f->name) {
    int i = by_name(e, f->name);
    if (i < 0) fprintf(stderr, "infer: the model has no %s named '%s'\n", kind, f->name);
    return i;
  }
  if (position >= count) {
    fprintf(stderr, "infer: more %s files than the model has %ss (%d)\n", kind, kind, count);
    return -1;
  }
  return position;
}

static void print_tensor(const char *name, const infer_tensor *t) {
  printf("%s: %s [", name, infer_dtype_name(t->dtype));
  for (int k = 0; k < t->rank; k++) printf(k ? ", %lld" : "%lld", (long long)t->dims[k]);
  printf("]");
  int64_t n = infer_tensor_count(t);
  printf(" =");
  for (int64_t i = 0; i < n && i < 8; i++) printf(" %.6g", infer_tensor_get(t, i));
  if (n > 8) printf(" ...");
  printf("\n");
}

/* "2x3x32x32" ("scalar" for rank 0) into buf. */
static const char *shape_text(const infer_tensor *t, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = 0;
  if (t->rank == 0) snprintf(buf, cap, "scalar");
  for (int k = 0; k < t->rank && len < cap; k++)
    len += (size_t)snprintf(buf + len, cap - len, k ? "x%lld" : "%lld", (long long)t->dims[k]);
  return buf;
}

/* Output names may hold '/' or other characters unfit for a file name. */
static void safe_file_name(const char *name, char *buf, size_t cap) {
  size_t j = 0;
  for (size_t i = 0; name[i] && j + 1 < cap; i++) {
    char ch = name[i];
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-' || ch == '.';
    buf[j++] = ok ? ch : '_';
  }
  buf[j] = 0;
  if (j == 0 || strcmp(buf, ".") == 0 || strcmp(buf, "..") == 0) snprintf(buf, cap, "output");
}

int main(int argc, char **argv) {
  cli_args a;
  if (!cli_parse(argc, argv, &a)) {
    /* the problem was printed on one line; the whole usage only with --help */
    fprintf(stderr, "usage: infer MODEL.onnx [options]; 'infer --help' lists them\n");
    return EXIT_USAGE;
  }
  if (a.diagnose) {
    char *text = NULL;
    infer_status ds = infer_diagnose(&text);
    if (ds != INFER_OK) return fail(ds, "diagnose");
    fputs(text, stdout);
    bool problems = strstr(text, "PROBLEM") != NULL;
    free(text);
    return problems ? EXIT_DEVICE : EXIT_OK;
  }
  /* CUDA-only settings on the CPU: said, not silently dropped (the run goes on) */
  if (a.device == INFER_DEVICE_CPU && a.precision != INFER_PRECISION_FP32)
    fprintf(stderr, "infer: warning: --precision %s does not apply to --device cpu (the CPU "
                    "computes in fp32); ignored\n",
            a.precision == INFER_PRECISION_FP16 ? "fp16" : "tf32");
  if (a.device == INFER_DEVICE_CPU && a.cache)
    fprintf(stderr, "infer: warning: --cache does not apply to --device cpu (it keeps CUDA "
                    "algorithm choices); ignored\n");
  /* before the model runs: a directory that cannot be made fails now, not after it */
  if (a.output_dir && cli_make_output_dir(a.output_dir) != EXIT_OK) return EXIT_USAGE;
  int rc = EXIT_OK;
  infer_options *opts = NULL;
  infer_engine *e = NULL;
  infer_context *c = NULL;
  infer_tensor inputs[64];
  char *input_names[64];
  memset(inputs, 0, sizeof inputs);
  memset(input_names, 0, sizeof input_names);
  /* --image: decoded and preprocessed first, so that a bad file fails before a model
   * is built; the batch becomes input 0 */
  infer_tensor image_batch = {0};
  int n_images = a.image.n_images;
  if (n_images > 0) {
    if ((rc = cli_image_load_batch(&a.image, a.verbose, &image_batch)) != EXIT_OK ||
        (rc = cli_image_save_input(&a.image, &image_batch)) != EXIT_OK || !a.model) {
      infer_tensor_clear(&image_batch);
      return rc;
    }
  }
  infer_status s = infer_options_create(&opts);
  if (s != INFER_OK) return fail(s, "options");
  infer_options_set_device(opts, a.device, a.device_index);
  infer_options_set_precision(opts, a.precision);
  infer_options_set_verbose(opts, a.verbose);
  if (a.no_cuda_graph) infer_options_set_cuda_graph(opts, 0);
  if (a.profile) infer_options_set_profile(opts, 1);
  if (a.batch > 0) infer_options_set_batch(opts, a.batch);
  if (a.workspace_limit > 0) infer_options_set_workspace_limit(opts, a.workspace_limit);
  infer_options_set_memory_limit(opts, a.max_memory, a.max_device_memory);
  if ((rc = cli_apply_config(&a, opts)) != EXIT_OK) goto out;
  if (a.compare_precision && (s = infer_options_set_config(opts, "keep_values", "1")) != INFER_OK) {
    rc = fail(s, "--compare-precision");
    goto out;
  }
  if (a.cache && (s = infer_options_set_cache(opts, a.cache)) != INFER_OK) {
    rc = fail(s, "--cache");
    goto out;
  }
  for (int i = 0; i < a.n_shapes; i++)
    if ((s = infer_options_set_input_shape(opts, a.shapes[i].name, a.shapes[i].rank,
                                           a.shapes[i].dims)) != INFER_OK) {
      rc = fail(s, "--shape");
      goto out;
    }
  if (a.image.input_u8) {
    /* input 0 is fed as uint8 NHWC; the engine normalizes (the model's input stays NCHW
     * float, which --shape and the image sizes below still describe) */
    float mean[3], std[3];
    cli_image_normalization(&a.image, mean, std);
    if ((s = infer_options_set_input_image(opts, 0, 3, mean, std)) != INFER_OK) {
      rc = fail(s, "--input-type u8");
      goto out;
    }
  }
  if (n_images > 0) {
    /* the images fix channels, height and width; the batch dim is the model's own, or
     * the number of images where it is symbolic (cli_image_fit_model checks it) */
    bool u8 = image_batch.dtype == INFER_DTYPE_UINT8; /* N x H x W x 3 */
    int64_t dims[4] = {-1, 3, image_batch.dims[u8 ? 1 : 2], image_batch.dims[u8 ? 2 : 3]};
    if ((s = infer_options_set_input_shape_at(opts, 0, 4, dims)) != INFER_OK ||
        (a.batch <= 0 && (s = infer_options_set_batch(opts, n_images)) != INFER_OK)) {
      rc = fail(s, "--image");
      goto out;
    }
  }
  /* Input files are read first: their shapes bind the model's symbolic dims.
   * Files bind by NAME= when given, else in the order of the model's inputs. */
  for (int i = 0; i < a.n_inputs; i++) {
    if ((s = infer_tensor_read_file(a.inputs[i].path, &inputs[i], &input_names[i])) != INFER_OK) {
      rc = fail(s, "input"); /* the message names the file */
      goto out;
    }
    /* with --batch, the engine is built for that batch and the file's own batch
     * (at most that) is what the run takes */
    int64_t dims[INFER_MAX_RANK];
    memcpy(dims, inputs[i].dims, sizeof dims);
    if (a.batch > 0 && inputs[i].rank > 0) dims[0] = -1;
    if (a.inputs[i].name)
      s = infer_options_set_input_shape(opts, a.inputs[i].name, inputs[i].rank, dims);
    else
      s = infer_options_set_input_shape_at(opts, i, inputs[i].rank, dims);
    if (s != INFER_OK) {
      rc = fail(s, a.inputs[i].path);
      goto out;
    }
  }
  if ((s = infer_engine_load(a.model, opts, &e)) != INFER_OK) {
    rc = fail(s, a.model);
    if (n_images > 0 && s == INFER_ERR_INVALID_INPUT)
      fprintf(stderr, "infer: the image%s make%s a %lldx3x%lldx%lld input; --crop sets its "
              "height and width (and --preprocess inception gives 299x299)\n",
              n_images > 1 ? "s" : "", n_images > 1 ? "" : "s", (long long)n_images,
              (long long)image_batch.dims[image_batch.dtype == INFER_DTYPE_UINT8 ? 1 : 2],
              (long long)image_batch.dims[image_batch.dtype == INFER_DTYPE_UINT8 ? 2 : 3]);
    goto out;
  }
  if (n_images > 0 && (rc = cli_image_fit_model(a.model, e, &image_batch)) != EXIT_OK) goto out;
  if ((s = infer_context_create(e, &c)) != INFER_OK) {
    rc = fail(s, "context");
    goto out;
  }
  int n_in = infer_engine_input_count(e);
  bool bound[64] = {false};
  for (int i = 0; i < a.n_inputs; i++) {
    int k = bind_index(&a.inputs[i], i, n_in, infer_engine_input_index, e, "input");
    if (k < 0) { rc = EXIT_USAGE; goto out; }
    if ((s = infer_context_set_input(c, k, &inputs[i])) != INFER_OK) {
      rc = fail(s, a.inputs[i].path);
      goto out;
    }
    bound[k] = true;
  }
  if (n_images > 0) {
    if ((s = infer_context_set_input(c, 0, &image_batch)) != INFER_OK) {
      rc = fail(s, "--image");
      goto out;
    }
    bound[0] = true;
  }
  uint64_t seed = a.seed;
  for (int k = 0; k < n_in && k < 64; k++) {
    if (bound[k]) continue;
    infer_tensor t;
    if ((rc = cli_random_input(e, k, &seed, &t)) != EXIT_OK) goto out;
    s = infer_context_set_input(c, k, &t);
    infer_tensor_clear(&t);
    if (s != INFER_OK) { rc = fail(s, "random input"); goto out; }
  }
  if (a.compare_precision) {
    rc = cli_compare_precision(&a, opts, e, c);
    goto out;
  }
  if (a.bench) {
    rc = cli_bench(&a, e, c);
    goto out;
  }
  if (a.profile) {
    rc = cli_profile(&a, e, c);
    goto out;
  }
  if ((s = infer_context_run(c)) != INFER_OK) {
    rc = fail(s, "run");
    goto out;
  }
  int n_out = infer_engine_output_count(e);
  bool mismatch = false;
  for (int i = 0; i < a.n_refs; i++) {
    int k = bind_index(&a.refs[i], i, n_out, infer_engine_output_index, e, "output");
    if (k < 0) { rc = EXIT_USAGE; goto out; }
    infer_tensor ref, got;
    const char *name;
    infer_engine_output_info(e, k, &name, NULL);
    if ((s = infer_tensor_read_file(a.refs[i].path, &ref, NULL)) != INFER_OK) {
      rc = fail(s, "reference"); /* the message names the file */
      goto out;
    }
    infer_context_get_output(c, k, &got);
    bool same_shape = got.rank == ref.rank;
    for (int d = 0; same_shape && d < got.rank; d++) same_shape = got.dims[d] == ref.dims[d];
    if (!same_shape || infer_tensor_count(&got) != infer_tensor_count(&ref)) {
      char got_shape[160], ref_shape[160];
      fprintf(stderr, "output '%s': shape %s differs from the reference's %s (%s)\n", name,
              shape_text(&got, got_shape, sizeof got_shape),
              shape_text(&ref, ref_shape, sizeof ref_shape), a.refs[i].path);
      mismatch = true;
    } else if (!cli_compare(name, &got, &ref, a.rtol, a.atol, a.quiet)) {
      mismatch = true;
    }
    infer_tensor_clear(&ref);
  }
  for (int k = 0; k < n_out; k++) {
    infer_tensor got;
    const char *name;
    infer_engine_output_info(e, k, &name, NULL);
    infer_context_get_output(c, k, &got);
    if (k == 0 && cli_image_wants_top(&a.image)) {
      if (!a.quiet && (rc = cli_image_print_top(&a.image, name, &got)) != EXIT_OK) goto out;
    } else if (!a.quiet && a.n_refs == 0) {
      print_tensor(name, &got);
    }
    if (a.output_dir) {
      char file[256], path[4096];
      safe_file_name(name, file, sizeof file);
      snprintf(path, sizeof path, "%s/%s.npy", a.output_dir, file);
      if ((s = infer_tensor_write_npy(path, &got)) != INFER_OK) {
        rc = fail(s, path);
        goto out;
      }
    }
  }
  rc = mismatch ? EXIT_MISMATCH : EXIT_OK;
out:
  infer_tensor_clear(&image_batch);
  for (int i = 0; i < a.n_inputs; i++) {
    infer_tensor_clear(&inputs[i]);
    free(input_names[i]);
  }
  infer_context_release(c);
  infer_engine_release(e);
  infer_options_release(opts);
  return rc;
}
