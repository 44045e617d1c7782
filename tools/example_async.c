/* Asynchronous runs from in-place buffers, 8-bit images in: two contexts of one engine take
 * turns, so the host writes the next batch while the device runs the last one.
 * Build: cc example_async.c $(pkg-config --cflags --libs infer) */
#include <infer.h>
#include <stdio.h>
#include <string.h>

static infer_status report(infer_context *ctx, int batch) {
  infer_tensor out;
  infer_status s = infer_context_wait(ctx); /* the run's own status */
  if (s == INFER_OK) s = infer_context_get_output(ctx, 0, &out); /* owned by ctx */
  if (s == INFER_OK) printf("batch %d: first output value %g\n", batch, infer_tensor_get(&out, 0));
  return s;
}

int main(int argc, char **argv) {
  if (argc != 2) return fprintf(stderr, "usage: %s MODEL.onnx\n", argv[0]), 2;
  const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
  infer_options *opts = NULL;
  infer_engine *engine = NULL;
  infer_context *ctx[2] = {NULL, NULL};
  void *pixels[2];
  int64_t bytes[2];
  int in_flight[2] = {-1, -1}; /* the batch each context runs, or -1 */
  infer_status s = infer_options_create(&opts);
  if (s == INFER_OK) s = infer_options_set_batch(opts, 2);
  /* input 0, float32 N x 3 x H x W in the model, is fed as uint8 N x H x W x 3 pixels */
  if (s == INFER_OK) s = infer_options_set_input_image(opts, 0, 3, mean, std);
  if (s == INFER_OK) s = infer_engine_load(argv[1], opts, &engine);
  infer_options_release(opts);
  for (int k = 0; k < 2 && s == INFER_OK; k++) s = infer_context_create(engine, &ctx[k]);
  for (int k = 0; k < 2 && s == INFER_OK; k++)
    s = infer_context_input_buffer(ctx[k], 0, &pixels[k], &bytes[k]); /* pinned on CUDA */
  for (int batch = 0; batch < 6 && s == INFER_OK; batch++) {
    int k = batch % 2;
    if (in_flight[k] >= 0) s = report(ctx[k], in_flight[k]); /* its buffer is free again */
    in_flight[k] = -1;
    if (s != INFER_OK) break;
    memset(pixels[k], 40 * batch, (size_t)bytes[k]); /* decode images here, in place */
    s = infer_context_enqueue(ctx[k]); /* returns at once on the GPU */
    if (s == INFER_OK) in_flight[k] = batch;
  }
  for (int k = 0; k < 2; k++) {
    infer_status w = in_flight[k] >= 0 ? report(ctx[k], in_flight[k]) : INFER_OK;
    if (s == INFER_OK) s = w;
  }
  if (s != INFER_OK) fprintf(stderr, "error: %s\n", infer_last_error());
  for (int k = 0; k < 2; k++) infer_context_release(ctx[k]);
  infer_engine_release(engine);
  return s != INFER_OK;
}
