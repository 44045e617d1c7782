/* consumer.c: a program built against an installed libinfer, through the public
 * header only (tests/run_install_test.sh builds it with find_package(infer) and with
 * pkg-config). It loads MODEL, runs it on INPUT (.npy or .pb) on the CPU and compares
 * every element of output 0 with REFERENCE: |out - ref| <= 1e-7 + 1e-3 * |ref|.
 *   consumer MODEL INPUT REFERENCE      exit 0 when they match, 1 otherwise
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <infer.h>

static int fail(const char *what, infer_status s) {
  fprintf(stderr, "consumer: %s: %s: %s\n", what, infer_status_name(s), infer_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: consumer MODEL INPUT REFERENCE\n");
    return 2;
  }
  if (strcmp(infer_version(), "0.0.0") == 0 || INFER_VERSION_MAJOR != 0) {
    fprintf(stderr, "consumer: unexpected version %s\n", infer_version());
    return 1;
  }
  infer_tensor in = {0}, ref = {0}, out = {0};
  infer_engine *engine = NULL;
  infer_context *ctx = NULL;
  int rc = 1;
  infer_status s;

  if ((s = infer_tensor_read_file(argv[2], &in, NULL)) != INFER_OK) {
    rc = fail("reading the input", s);
    goto done;
  }
  if ((s = infer_tensor_read_file(argv[3], &ref, NULL)) != INFER_OK) {
    rc = fail("reading the reference", s);
    goto done;
  }
  infer_options *opts = NULL;
  if ((s = infer_options_create(&opts)) != INFER_OK) {
    rc = fail("options", s);
    goto done;
  }
  infer_options_set_device(opts, INFER_DEVICE_CPU, 0);
  infer_options_set_input_shape_at(opts, 0, in.rank, in.dims);
  s = infer_engine_load(argv[1], opts, &engine);
  infer_options_release(opts);
  if (s != INFER_OK) {
    rc = fail("loading the model", s);
    goto done;
  }
  if ((s = infer_context_create(engine, &ctx)) != INFER_OK ||
      (s = infer_context_set_input(ctx, 0, &in)) != INFER_OK ||
      (s = infer_context_run(ctx)) != INFER_OK ||
      (s = infer_context_get_output(ctx, 0, &out)) != INFER_OK) {
    rc = fail("running", s);
    goto done;
  }

  int64_t n = infer_tensor_count(&out);
  if (n < 0 || n != infer_tensor_count(&ref) || out.rank != ref.rank) {
    fprintf(stderr, "consumer: output has %lld elements (rank %d), the reference %lld (rank %d)\n",
            (long long)n, out.rank, (long long)infer_tensor_count(&ref), ref.rank);
    goto done;
  }
  double worst = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double o = infer_tensor_get(&out, i), r = infer_tensor_get(&ref, i);
    double err = fabs(o - r);
    if (!(err <= 1e-7 + 1e-3 * fabs(r))) bad++;
    if (err > worst || err != err) worst = err;
  }
  printf("consumer: infer %s, %lld outputs, %lld mismatched, max abs error %g\n", infer_version(),
         (long long)n, (long long)bad, worst);
  rc = bad == 0 ? 0 : 1;

done:
  infer_context_release(ctx);  /* out.data is owned by the context */
  infer_engine_release(engine);
  infer_tensor_clear(&in);
  infer_tensor_clear(&ref);
  return rc;
}
