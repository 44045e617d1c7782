/* cli_image.h: `infer --image FILE ...`: image files decoded, preprocessed as torchvision
 * does (image_preprocess.h) and batched into one NCHW float input; `--labels FILE
 * --top K` prints the most probable classes of each row of the first output.
 * `--input-type u8` feeds input 0 as uint8 NHWC instead (infer_options_set_input_image):
 * the engine normalizes with the preset's (or --mean/--std) values, and --image then
 * batches the resized and cropped pixels as they are. */
#ifndef INFER_CLI_IMAGE_H
#define INFER_CLI_IMAGE_H

#include <stdbool.h>

#include "image_preprocess.h"
#include "infer.h"

#define CLI_MAX_IMAGES 1024

typedef struct cli_image_args {
  int n_images;
  const char *images[CLI_MAX_IMAGES];
  const char *preset;          /* --preprocess; NULL: imagenet */
  bool resize_set, crop_set, mean_set, std_set;
  int resize_h, resize_w;      /* --resize N (w 0: shorter side) or HxW; 0x0: none */
  int crop_h, crop_w;          /* --crop N or HxW; 0: none */
  float mean[3], std[3];
  const char *labels;          /* --labels FILE */
  int top;                     /* --top K; 0: not given (5 with --image or --labels) */
  const char *save_input;      /* --save-input FILE.npy: the preprocessed batch */
  bool input_u8;               /* --input-type u8: input 0 is fed as uint8 NHWC */
} cli_image_args;

/* Option o with value v: 1 when it is one of the options above (stored in ia), 0 when
 * it is not, -1 when its value is bad (the problem is printed). */
int cli_image_option(const char *o, const char *v, cli_image_args *ia);

/* Checks the combination after parsing (preprocessing flags without --image or
 * --input-type u8, ...); prints the problem and returns false. have_inputs: --input
 * files were given. */
bool cli_image_check(const cli_image_args *ia, bool have_inputs);

/* True when the run should end with top-K lines (--image, --labels or --top). */
bool cli_image_wants_top(const cli_image_args *ia);

/* The normalization of the images: the preset's (imagenet by default) mean and std, or
 * --mean / --std. */
void cli_image_normalization(const cli_image_args *ia, float mean[3], float std[3]);

/* Decodes and preprocesses every --image into *batch: float32 [N, 3, H, W], or with
 * --input-type u8 the resized and cropped pixels as uint8 [N, H, W, 3] (data malloc'ed,
 * the caller clears it). Every image must come out at the same size (a crop, or equal
 * sizes). Errors name the file; returns an exit code. */
int cli_image_load_batch(const cli_image_args *ia, bool verbose, infer_tensor *batch);

/* With --save-input: writes batch as .npy; returns an exit code. */
int cli_image_save_input(const cli_image_args *ia, const infer_tensor *batch);

/* Checks the engine's input 0 against the batch (one image input, float NCHW, or uint8
 * NHWC with --input-type u8, a batch dim that takes N) and converts the batch to the
 * input's float dtype if needed.
 * model names the model file in messages. Returns an exit code. */
int cli_image_fit_model(const char *model, const infer_engine *e, infer_tensor *batch);

/* Prints the top K classes of each row of out (output `name`), with probabilities
 * (softmax, unless the row already sums to 1), labelled from --labels and titled by
 * the image file (or "row i" without --image). Returns an exit code. */
int cli_image_print_top(const cli_image_args *ia, const char *name, const infer_tensor *out);

#endif
