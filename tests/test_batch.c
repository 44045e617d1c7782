/* test_batch.c: one engine built for a maximum batch runs every smaller batch.
 *
 *   test_batch [--device cuda [--precision fp32|fp16]] SAMPLE.onnx [ZOO_DIR]
 *
 * sample.onnx (symbolic batch) is built for batch 8 and run at batches 1, 3 and 8
 * on seeded random images; each output row must equal (within 1e-5 relative) the
 * output of an engine built for exactly that batch, and batch 9 must be refused
 * naming the limit. With ZOO_DIR (models/export_zoo.py output), resnet50 and
 * vit_b_16 (whose exported graph computes reshape targets from the batch) are built
 * for batch 64 / 8 and run at 1, 7 and 64 / 1 and 7 on rows of their reference
 * input, each row compared with PyTorch's output for it.
 *
 * On the GPU a smaller batch runs as the first rows of the build batch, only for
 * models whose rows are computed independently (engine/batch_rows.c): resnet50 and
 * the sample run as above (tolerances of the precision; separately built GPU engines
 * may choose other algorithms, so the sample's rows match to 1e-4 in fp32), and
 * vit_b_16, whose graph computes shapes from the batch, must refuse batch 7 with the
 * reason. Exit 77 (skip) without a GPU. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"

static int failures;
static infer_device device = INFER_DEVICE_CPU;
static infer_precision precision = INFER_PRECISION_FP32;

static infer_engine *build(const char *model, int64_t batch) {
  infer_options *o = NULL;
  infer_engine *e = NULL;
  infer_options_create(&o);
  infer_options_set_batch(o, batch);
  infer_options_set_device(o, device, 0);
  infer_options_set_precision(o, precision);
  if (infer_engine_load(model, o, &e) != INFER_OK) {
    printf("FAIL build %s at batch %lld: %s\n", model, (long long)batch, infer_last_error());
    failures++;
  }
  infer_options_release(o);
  return e;
}

/* Runs e on x (batch b, rows copied from `rows` cyclically); out gets a copy. */
static int run_rows(infer_engine *e, const infer_tensor *rows, int64_t b, infer_tensor *out) {
  infer_context *c = NULL;
  infer_tensor x = *rows;
  x.dims[0] = b;
  int64_t row = infer_tensor_count(rows) / rows->dims[0];
  size_t es = infer_dtype_size(rows->dtype);
  x.data = malloc((size_t)(b * row) * es);
  for (int64_t i = 0; i < b; i++)
    memcpy((char *)x.data + (size_t)(i * row) * es,
           (char *)rows->data + (size_t)((i % rows->dims[0]) * row) * es, (size_t)row * es);
  infer_status s = infer_context_create(e, &c);
  if (s == INFER_OK) s = infer_context_set_input(c, 0, &x);
  if (s == INFER_OK) s = infer_context_run(c);
  infer_tensor got;
  if (s == INFER_OK) s = infer_context_get_output(c, 0, &got);
  if (s == INFER_OK) {
    *out = got;
    size_t nb = (size_t)infer_tensor_count(&got) * infer_dtype_size(got.dtype);
    out->data = malloc(nb ? nb : 1);
    memcpy(out->data, got.data, nb);
  }
  infer_context_release(c);
  free(x.data);
  return s;
}

/* Row r of a (b x n) output against row rr of ref, |a-b| <= atol + rtol*|b|. */
static void compare_row(const char *what, const infer_tensor *a, int64_t r, const infer_tensor *ref,
                        int64_t rr, double rtol, double atol) {
  int64_t n = infer_tensor_count(ref) / ref->dims[0];
  for (int64_t i = 0; i < n; i++) {
    double x = infer_tensor_get(a, r * n + i), y = infer_tensor_get(ref, rr * n + i);
    if (!(fabs(x - y) <= atol + rtol * fabs(y))) {
      printf("FAIL %s: row %lld element %lld: %.9g vs %.9g\n", what, (long long)r, (long long)i, x, y);
      failures++;
      return;
    }
  }
}

static void check_sample(const char *model) {
  infer_engine *big = build(model, 8);
  if (!big) return;
  if (infer_engine_max_batch(big) != 8) {
    printf("FAIL max batch %lld, expected 8\n", (long long)infer_engine_max_batch(big));
    failures++;
  }
  infer_tensor images = {INFER_DTYPE_FLOAT32, 4, {8, 3, 32, 32}, NULL};
  images.data = malloc(8 * 3 * 32 * 32 * sizeof(float));
  uint64_t seed = 7;
  for (int64_t i = 0; i < 8 * 3 * 32 * 32; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    ((float *)images.data)[i] = (float)((seed >> 40) / 16777216.0 * 2 - 1);
  }
  const int64_t batches[] = {1, 3, 8};
  for (int k = 0; k < 3; k++) {
    int64_t b = batches[k];
    infer_engine *exact = build(model, b);
    infer_tensor a = {0}, ref = {0};
    if (exact && run_rows(big, &images, b, &a) == INFER_OK &&
        run_rows(exact, &images, b, &ref) == INFER_OK) {
      char what[64];
      snprintf(what, sizeof what, "sample batch %lld", (long long)b);
      if (a.dims[0] != b) {
        printf("FAIL %s: output batch %lld\n", what, (long long)a.dims[0]);
        failures++;
      }
      double rtol = precision == INFER_PRECISION_FP16 ? 2e-2 : device == INFER_DEVICE_CUDA ? 1e-4 : 1e-5;
      for (int64_t r = 0; r < b; r++) compare_row(what, &a, r, &ref, r, rtol, rtol * 1e-2);
    } else {
      printf("FAIL sample batch %lld: %s\n", (long long)b, infer_last_error());
      failures++;
    }
    infer_tensor_clear(&a);
    infer_tensor_clear(&ref);
    infer_engine_release(exact);
  }
  infer_tensor too_big = {0};
  if (run_rows(big, &images, 9, &too_big) == INFER_OK || !strstr(infer_last_error(), "1..8")) {
    printf("FAIL batch 9 on a batch-8 engine: not refused naming the limit (%s)\n",
           infer_last_error());
    failures++;
  }
  infer_tensor_clear(&too_big);
  free(images.data);
  infer_engine_release(big);
}

static void check_zoo(const char *dir, const char *name, int64_t max, const int64_t *batches,
                      int nb) {
  char model[4096], in_path[4096], ref_path[4096];
  snprintf(model, sizeof model, "%s/%s.onnx", dir, name);
  snprintf(in_path, sizeof in_path, "%s/%s_input.npy", dir, name);
  snprintf(ref_path, sizeof ref_path, "%s/%s_output.npy", dir, name);
  infer_tensor in = {0}, ref = {0};
  if (infer_tensor_read_file(in_path, &in, NULL) != INFER_OK ||
      infer_tensor_read_file(ref_path, &ref, NULL) != INFER_OK) {
    /* registered only where the zoo holds the model: missing, it fails */
    printf("FAIL %s: not exported in %s (%s)\n", name, dir, infer_last_error());
    failures++;
    return;
  }
  double absmax = 0;
  for (int64_t i = 0; i < infer_tensor_count(&ref); i++)
    absmax = fmax(absmax, fabs(infer_tensor_get(&ref, i)));
  infer_engine *e = build(model, max);
  bool fp16 = precision == INFER_PRECISION_FP16;
  for (int k = 0; e && k < nb; k++) {
    infer_tensor out = {0};
    char what[128];
    snprintf(what, sizeof what, "%s built for %lld, run at %lld", name, (long long)max,
             (long long)batches[k]);
    bool refuse = device == INFER_DEVICE_CUDA && strcmp(name, "vit_b_16") == 0 &&
                  batches[k] != max;
    infer_status st = run_rows(e, &in, batches[k], &out);
    if (refuse) {
      if (st == INFER_OK || !strstr(infer_last_error(), "runs only its build batch")) {
        printf("FAIL %s: a GPU engine must refuse it, naming why (%s)\n", what,
               st == INFER_OK ? "it ran" : infer_last_error());
        failures++;
      } else {
        printf("ok %s refused: %s\n", what, infer_last_error());
      }
      infer_tensor_clear(&out);
      continue;
    }
    if (st != INFER_OK) {
      printf("FAIL %s: %s\n", what, infer_last_error());
      failures++;
      continue;
    }
    for (int64_t r = 0; r < batches[k]; r++)
      compare_row(what, &out, r, &ref, r % ref.dims[0], fp16 ? 2e-2 : 1e-3,
                  (fp16 ? 2e-2 : 1e-3) * absmax);
    printf("ok %s\n", what);
    infer_tensor_clear(&out);
  }
  infer_engine_release(e);
  infer_tensor_clear(&in);
  infer_tensor_clear(&ref);
}

int main(int argc, char **argv) {
  while (argc > 2 && argv[1][0] == '-') {
    if (strcmp(argv[1], "--device") == 0 && strcmp(argv[2], "cuda") == 0)
      device = INFER_DEVICE_CUDA;
    else if (strcmp(argv[1], "--precision") == 0 && strcmp(argv[2], "fp16") == 0)
      precision = INFER_PRECISION_FP16;
    else if (strcmp(argv[1], "--precision") == 0 && strcmp(argv[2], "fp32") == 0)
      precision = INFER_PRECISION_FP32;
    else
      break;
    argv += 2;
    argc -= 2;
  }
  if (argc < 2 || argv[1][0] == '-') {
    fprintf(stderr, "usage: test_batch [--device cuda [--precision fp32|fp16]] SAMPLE.onnx [ZOO_DIR]\n");
    return 2;
  }
  if (device == INFER_DEVICE_CUDA && infer_device_count(INFER_DEVICE_CUDA) == 0) {
    printf("SKIP: no CUDA device is visible to this build of infer\n");
    return 77;
  }
  check_sample(argv[1]);
  if (argc > 2) {
    const int64_t r50[] = {1, 7, 64}, vit[] = {1, 7};
    check_zoo(argv[2], "resnet50", 64, r50, 3);
    check_zoo(argv[2], "vit_b_16", 8, vit, 2);
  }
  printf(failures ? "%d failures\n" : "all passed\n", failures);
  return failures != 0;
}
