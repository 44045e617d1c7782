/* One engine, two threads, one context each. Build: cc example.c $(pkg-config --cflags --libs infer) */
#include <infer.h>
#include <pthread.h>
#include <stdio.h>

static infer_engine *engine;

static void *worker(void *arg) {
  infer_context *ctx = NULL;
  infer_tensor in, out;
  infer_status s = infer_context_create(engine, &ctx);
  if (s == INFER_OK) s = infer_tensor_read_file((const char *)arg, &in, NULL);
  if (s == INFER_OK) s = infer_context_set_input(ctx, 0, &in);
  if (s == INFER_OK) s = infer_context_run(ctx);
  if (s == INFER_OK) s = infer_context_get_output(ctx, 0, &out); /* owned by ctx */
  if (s == INFER_OK) printf("first output value %g\n", infer_tensor_get(&out, 0));
  else fprintf(stderr, "error: %s\n", infer_last_error()); /* this thread's message */
  infer_tensor_clear(&in);
  infer_context_release(ctx);
  return (void *)(long)s;
}

int main(int argc, char **argv) {
  if (argc != 3) return fprintf(stderr, "usage: %s MODEL.onnx INPUT.npy\n", argv[0]), 2;
  infer_options *opts = NULL;
  infer_status s = infer_options_create(&opts);
  if (s == INFER_OK) s = infer_options_set_batch(opts, 2);
  if (s == INFER_OK) s = infer_engine_load(argv[1], opts, &engine);
  infer_options_release(opts);
  if (s != INFER_OK) return fprintf(stderr, "load: %s\n", infer_last_error()), 1;
  pthread_t t[2];
  void *r[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, argv[2]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], &r[i]);
  infer_engine_release(engine);
  return r[0] || r[1];
}
