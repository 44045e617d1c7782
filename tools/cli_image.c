/* cli_image.c: the CLI side of image inputs (see cli_image.h): flags, decoding and
 * preprocessing into one batch, checking it against the model, top-K printing. */
#include "cli_image.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "labels.h"
#include "topk.h"

static int bad_value(const char *o, const char *v, const char *want) {
  fprintf(stderr, "infer: bad %s '%s' (%s)\n", o, v, want);
  return -1;
}

/* "N" (*w = 0) or "HxW", each 0..IMAGE_MAX_SIDE */
static bool parse_size(const char *v, int *h, int *w) {
  char *end;
  errno = 0;
  long a = strtol(v, &end, 10);
  if (end == v || a < 0 || a > IMAGE_MAX_SIDE || errno) return false;
  if (*end == 0) {
    *h = (int)a;
    *w = 0;
    return true;
  }
  if (*end != 'x' && *end != 'X') return false;
  const char *s = end + 1;
  long b = strtol(s, &end, 10);
  if (end == s || *end || b < 0 || b > IMAGE_MAX_SIDE || errno) return false;
  if ((a == 0) != (b == 0)) return false; /* 0 means "none" only as a whole */
  *h = (int)a;
  *w = (int)b;
  return true;
}

/* "a,b,c" or one value for all three channels; positive ones only if `positive` */
static bool parse_triple(const char *v, float out[3], bool positive) {
  double x[3];
  int n = 0;
  const char *s = v;
  while (n < 3) {
    char *end;
    x[n] = strtod(s, &end);
    if (end == s || !isfinite(x[n]) || (positive && !(x[n] > 0))) return false;
    n++;
    if (*end == 0) break;
    if (*end != ',') return false;
    s = end + 1;
    if (n == 3) return false; /* a fourth value */
  }
  if (n == 2) return false;
  for (int c = 0; c < 3; c++) out[c] = (float)(n == 1 ? x[0] : x[c]);
  return true;
}

int cli_image_option(const char *o, const char *v, cli_image_args *ia) {
  if (strcmp(o, "--image") == 0) {
    if (ia->n_images == CLI_MAX_IMAGES) {
      fprintf(stderr, "infer: more than %d --image files\n", CLI_MAX_IMAGES);
      return -1;
    }
    if (!v[0]) return bad_value(o, v, "a file name");
    ia->images[ia->n_images++] = v;
  } else if (strcmp(o, "--preprocess") == 0) {
    image_prep p;
    if (!image_prep_preset(v, &p)) return bad_value(o, v, image_prep_preset_names());
    ia->preset = v;
  } else if (strcmp(o, "--resize") == 0) {
    if (!parse_size(v, &ia->resize_h, &ia->resize_w))
      return bad_value(o, v, "N for the shorter side, HxW, or 0 for none");
    ia->resize_set = true;
  } else if (strcmp(o, "--crop") == 0) {
    if (!parse_size(v, &ia->crop_h, &ia->crop_w))
      return bad_value(o, v, "N for NxN, HxW, or 0 for none");
    if (ia->crop_w == 0) ia->crop_w = ia->crop_h;
    ia->crop_set = true;
  } else if (strcmp(o, "--mean") == 0) {
    if (!parse_triple(v, ia->mean, false)) return bad_value(o, v, "R,G,B or one value");
    ia->mean_set = true;
  } else if (strcmp(o, "--std") == 0) {
    if (!parse_triple(v, ia->std, true)) return bad_value(o, v, "R,G,B > 0 or one value");
    ia->std_set = true;
  } else if (strcmp(o, "--labels") == 0) {
    if (!v[0]) return bad_value(o, v, "a file name");
    ia->labels = v;
  } else if (strcmp(o, "--top") == 0) {
    char *end;
    long k = strtol(v, &end, 10);
    if (end == v || *end || k < 1 || k > 1000000) return bad_value(o, v, "K >= 1");
    ia->top = (int)k;
  } else if (strcmp(o, "--input-type") == 0) {
    if (strcmp(v, "u8") != 0 && strcmp(v, "f32") != 0)
      return bad_value(o, v, "u8: input 0 fed as uint8 NHWC, normalized by the engine; f32: "
                       "as the model says");
    ia->input_u8 = strcmp(v, "u8") == 0;
  } else if (strcmp(o, "--save-input") == 0) {
    if (!v[0]) return bad_value(o, v, "a .npy file name");
    ia->save_input = v;
  } else {
    return 0;
  }
  return 1;
}

bool cli_image_check(const cli_image_args *ia, bool have_inputs) {
  /* the normalization flags also serve --input-type u8 without images */
  const char *normalizes = ia->input_u8 ? NULL
                           : ia->preset ? "--preprocess" : ia->mean_set ? "--mean"
                           : ia->std_set ? "--std" : NULL;
  const char *needs_image = normalizes ? normalizes : ia->resize_set ? "--resize"
                            : ia->crop_set ? "--crop" : ia->save_input ? "--save-input" : NULL;
  if (ia->n_images == 0 && needs_image) {
    fprintf(stderr, "infer: %s needs --image%s\n", needs_image,
            normalizes ? " (or --input-type u8)" : "");
    return false;
  }
  if (ia->n_images > 0 && have_inputs) {
    fprintf(stderr, "infer: --image and --input cannot be combined (the images are the "
            "model's input)\n");
    return false;
  }
  return true;
}

bool cli_image_wants_top(const cli_image_args *ia) {
  return ia->n_images > 0 || ia->labels || ia->top > 0;
}

void cli_image_normalization(const cli_image_args *ia, float mean[3], float std[3]) {
  image_prep p;
  image_prep_preset(ia->preset ? ia->preset : "imagenet", &p);
  memcpy(mean, ia->mean_set ? ia->mean : p.mean, sizeof p.mean);
  memcpy(std, ia->std_set ? ia->std : p.std, sizeof p.std);
}

/* The preset (imagenet by default) with the explicit flags over it. */
static void resolve_prep(const cli_image_args *ia, image_prep *p) {
  image_prep_preset(ia->preset ? ia->preset : "imagenet", p);
  if (ia->resize_set) {
    p->resize_height = ia->resize_h;
    p->resize_width = ia->resize_w;
  }
  if (ia->crop_set) {
    p->crop_height = ia->crop_h;
    p->crop_width = ia->crop_w;
  }
  if (ia->mean_set) memcpy(p->mean, ia->mean, sizeof p->mean);
  if (ia->std_set) memcpy(p->std, ia->std, sizeof p->std);
}

static int exit_for(image_status s) {
  switch (s) {
    case IMAGE_OK: return EXIT_OK;
    case IMAGE_ERR_NO_SUPPORT: return EXIT_UNSUPPORTED;
    case IMAGE_ERR_NO_MEMORY: return EXIT_DEVICE;
    default: return EXIT_USAGE;
  }
}

int cli_image_load_batch(const cli_image_args *ia, bool verbose, infer_tensor *batch) {
  memset(batch, 0, sizeof *batch);
  image_prep p;
  resolve_prep(ia, &p);
  /* float32 NCHW normalized here, or (--input-type u8) the pixels as they are */
  size_t es = ia->input_u8 ? 1 : sizeof(float);
  uint8_t *data = NULL;
  int w0 = 0, h0 = 0;
  size_t per_image = 0;
  for (int i = 0; i < ia->n_images; i++) {
    const char *path = ia->images[i];
    char err[512];
    image_rgb im, g;
    image_status s = image_decode_file(path, &im, err, sizeof err);
    if (s != IMAGE_OK) {
      fprintf(stderr, "infer: %s: %s\n", path, err);
      free(data);
      return exit_for(s);
    }
    if (!image_prep_geometry(&im, &p, &g, err, sizeof err)) {
      fprintf(stderr, "infer: %s (%dx%d): %s\n", path, im.width, im.height, err);
      image_rgb_clear(&im);
      free(data);
      return EXIT_USAGE;
    }
    if (verbose)
      fprintf(stderr, "image %s: %dx%d -> %dx%d (width x height)\n", path, im.width, im.height,
              g.width, g.height);
    image_rgb_clear(&im);
    if (i == 0) {
      w0 = g.width;
      h0 = g.height;
      per_image = (size_t)3 * (size_t)w0 * (size_t)h0;
      if (per_image > ((size_t)1 << 40) / es / (size_t)ia->n_images ||
          !(data = malloc(per_image * es * (size_t)ia->n_images))) {
        fprintf(stderr, "infer: out of memory for %d images of 3x%dx%d\n", ia->n_images, h0,
                w0);
        image_rgb_clear(&g);
        return EXIT_DEVICE;
      }
    } else if (g.width != w0 || g.height != h0) {
      fprintf(stderr, "infer: %s preprocesses to %dx%d (height x width), but %s to %dx%d: one "
              "batch needs one size (give --crop, or --resize HxW)\n", path, g.height, g.width,
              ia->images[0], h0, w0);
      image_rgb_clear(&g);
      free(data);
      return EXIT_USAGE;
    }
    if (ia->input_u8) /* the engine normalizes: the HWC pixels go in as they are */
      memcpy(data + per_image * (size_t)i, g.pixels, per_image);
    else
      image_to_chw(&g, p.mean, p.std, (float *)(void *)(data + per_image * es * (size_t)i));
    image_rgb_clear(&g);
  }
  batch->dtype = ia->input_u8 ? INFER_DTYPE_UINT8 : INFER_DTYPE_FLOAT32;
  batch->rank = 4;
  batch->dims[0] = ia->n_images;
  batch->dims[1] = ia->input_u8 ? h0 : 3;
  batch->dims[2] = ia->input_u8 ? w0 : h0;
  batch->dims[3] = ia->input_u8 ? 3 : w0;
  batch->data = data;
  return EXIT_OK;
}

int cli_image_save_input(const cli_image_args *ia, const infer_tensor *batch) {
  if (!ia->save_input) return EXIT_OK;
  infer_status s = infer_tensor_write_npy(ia->save_input, batch);
  if (s != INFER_OK) {
    fprintf(stderr, "infer: --save-input: %s\n", infer_last_error());
    return cli_exit_code(s);
  }
  return EXIT_OK;
}

static const char *dims_text(const infer_tensor *t, char *buf, size_t cap) {
  size_t off = 0;
  buf[0] = 0;
  for (int k = 0; k < t->rank && off < cap; k++)
    off += (size_t)snprintf(buf + off, cap - off, k ? "x%lld" : "%lld", (long long)t->dims[k]);
  return buf;
}

int cli_image_fit_model(const char *model, const infer_engine *e, infer_tensor *batch) {
  int n_in = infer_engine_input_count(e);
  if (n_in != 1) {
    fprintf(stderr, "infer: %s has %d inputs; --image feeds models with a single (image) "
            "input\n", model, n_in);
    return EXIT_USAGE;
  }
  const char *name;
  infer_tensor info;
  char a[96], b[96];
  infer_engine_input_info(e, 0, &name, &info);
  bool u8 = batch->dtype == INFER_DTYPE_UINT8; /* --input-type u8: N x H x W x 3 */
  int cdim = u8 ? 3 : 1;
  bool fits = info.rank == 4 && info.dims[cdim] == 3;
  for (int k = 1; fits && k < 4; k++) fits = k == cdim || info.dims[k] == batch->dims[k];
  if (!fits) {
    fprintf(stderr, "infer: %s: input '%s' is %s, the images make %s (N x %s)\n", model,
            name, dims_text(&info, a, sizeof a), dims_text(batch, b, sizeof b),
            u8 ? "H x W x 3" : "3 x H x W");
    return EXIT_USAGE;
  }
  int64_t n = batch->dims[0], max_batch = infer_engine_max_batch(e);
  if (info.dims[0] != n && max_batch < n) {
    fprintf(stderr, "infer: %s takes a batch of %lld (input '%s' is %s), but %lld image%s "
            "given (--image)%s\n", model, (long long)info.dims[0], name,
            dims_text(&info, a, sizeof a), (long long)n, n == 1 ? " was" : "s were",
            info.dims[0] == 1 ? "; give one image per run, or export the model with a "
            "dynamic batch dim" : "");
    return EXIT_USAGE;
  }
  if (info.dtype == batch->dtype) return EXIT_OK;
  if (u8) { /* the engine was built with the option: this cannot differ */
    fprintf(stderr, "infer: %s: input '%s' is %s, not uint8 (--input-type u8)\n", model, name,
            infer_dtype_name(info.dtype));
    return EXIT_USAGE;
  }
  if (info.dtype != INFER_DTYPE_FLOAT16 && info.dtype != INFER_DTYPE_BFLOAT16 &&
      info.dtype != INFER_DTYPE_FLOAT64) {
    fprintf(stderr, "infer: %s: input '%s' is %s; --image gives floating-point NCHW\n", model,
            name, infer_dtype_name(info.dtype));
    return EXIT_USAGE;
  }
  infer_tensor conv = *batch;
  conv.dtype = info.dtype;
  int64_t count = infer_tensor_count(batch);
  conv.data = malloc((size_t)count * infer_dtype_size(info.dtype));
  if (!conv.data) {
    fprintf(stderr, "infer: out of memory converting the images to %s\n",
            infer_dtype_name(info.dtype));
    return EXIT_DEVICE;
  }
  for (int64_t i = 0; i < count; i++) infer_tensor_set(&conv, i, ((const float *)batch->data)[i]);
  infer_tensor_clear(batch);
  *batch = conv;
  return EXIT_OK;
}

int cli_image_print_top(const cli_image_args *ia, const char *name, const infer_tensor *out) {
  int64_t n = infer_tensor_count(out);
  int64_t rows = out->rank >= 2 ? out->dims[0] : 1;
  if (n <= 0 || rows <= 0 || n % rows) {
    fprintf(stderr, "infer: output '%s' has no classes to rank\n", name);
    return EXIT_USAGE;
  }
  int64_t classes = n / rows;
  if (ia->n_images > 0 && rows != ia->n_images) {
    fprintf(stderr, "infer: output '%s' has %lld rows for %d images\n", name, (long long)rows,
            ia->n_images);
    return EXIT_USAGE;
  }
  labels lab = {0};
  if (ia->labels) {
    char err[512];
    if (!labels_read(ia->labels, &lab, err, sizeof err)) {
      fprintf(stderr, "infer: %s: %s\n", ia->labels, err);
      return EXIT_USAGE;
    }
    if (lab.count != classes) {
      fprintf(stderr, "infer: %s has %d labels, but output '%s' has %lld classes per row\n",
              ia->labels, lab.count, name, (long long)classes);
      labels_clear(&lab);
      return EXIT_USAGE;
    }
  }
  int k = ia->top > 0 ? ia->top : 5;
  if (k > classes) k = (int)classes;
  double *v = malloc(sizeof(double) * (size_t)classes);
  double *p = malloc(sizeof(double) * (size_t)classes);
  int64_t *idx = malloc(sizeof(int64_t) * (size_t)k);
  if (!v || !p || !idx) {
    free(v);
    free(p);
    free(idx);
    labels_clear(&lab);
    fprintf(stderr, "infer: out of memory ranking %lld classes\n", (long long)classes);
    return EXIT_DEVICE;
  }
  int digits = snprintf(NULL, 0, "%lld", (long long)(classes - 1));
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t i = 0; i < classes; i++) v[i] = infer_tensor_get(out, r * classes + i);
    bool dist = topk_is_distribution(v, classes);
    if (dist)
      memcpy(p, v, sizeof(double) * (size_t)classes);
    else
      topk_softmax(v, classes, p);
    topk_select(p, classes, k, idx);
    if (ia->n_images > 0)
      printf("%s:", ia->images[r]);
    else
      printf("row %lld:", (long long)r);
    if (dist)
      printf(" top %d of %lld classes (output '%s' already sums to 1: shown as is)\n", k,
             (long long)classes, name);
    else
      printf(" top %d of %lld classes (softmax of output '%s')\n", k, (long long)classes, name);
    for (int j = 0; j < k; j++) {
      printf("  %.4f  %*lld", p[idx[j]], digits, (long long)idx[j]);
      if (lab.count) printf("  %s", lab.names[idx[j]]);
      printf("\n");
    }
  }
  free(v);
  free(p);
  free(idx);
  labels_clear(&lab);
  return EXIT_OK;
}
