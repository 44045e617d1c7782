/* image_png.c: PNG to 8-bit RGB with libpng. See image_decode.h for the conversions
 * (they follow what PIL's convert("RGB") gives, except for 16-bit gray: PIL turns it
 * into 32-bit integers and clips them at 255, here it keeps the high byte as for
 * every other 16-bit PNG). */
#include "image_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef INFER_HAVE_PNG

#include <png.h>

bool image_have_png(void) { return true; }

/* libpng's default error handler longjmps to png_jmpbuf, and aborts if nobody set
 * it; ours keeps the message and jumps back to our own buffer. */
typedef struct png_trap {
  jmp_buf jump;
  char message[256];
  char warning[256]; /* the last one: libpng says what is wrong with an IHDR there */
} png_trap;

static void trap_error(png_structp png, png_const_charp msg) {
  png_trap *t = png_get_error_ptr(png);
  snprintf(t->message, sizeof t->message, "%s", msg ? msg : "unknown libpng error");
  longjmp(t->jump, 1);
}

/* Warnings (bad ancillary chunks, which libpng skips) do not change the pixels; the
 * last is kept, since libpng explains a refused IHDR in warnings before its error. */
static void trap_warning(png_structp png, png_const_charp msg) {
  png_trap *t = png_get_error_ptr(png);
  snprintf(t->warning, sizeof t->warning, "%s", msg ? msg : "");
}

typedef struct png_source {
  const uint8_t *data;
  size_t size, pos;
  bool truncated;
} png_source;

static void source_read(png_structp png, png_bytep dst, size_t n) {
  png_source *s = png_get_io_ptr(png);
  if (n > s->size - s->pos) {
    s->truncated = true;
    png_error(png, "the file ends early");
  }
  memcpy(dst, s->data + s->pos, n);
  s->pos += n;
}

image_status image_decode_png(const uint8_t *data, size_t size, image_rgb *out, char *err,
                              size_t cap) {
  memset(out, 0, sizeof *out);
  png_trap trap;
  memset(&trap, 0, sizeof trap);
  png_source src = {data, size, 0, false};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &trap, trap_error,
                                           trap_warning);
  if (!png) {
    snprintf(err, cap, "libpng could not start (out of memory?)");
    return IMAGE_ERR_NO_MEMORY;
  }
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_read_struct(&png, NULL, NULL);
    snprintf(err, cap, "libpng could not start (out of memory?)");
    return IMAGE_ERR_NO_MEMORY;
  }
  uint8_t *volatile pixels = NULL;
  png_bytep *volatile rows = NULL;
  if (setjmp(trap.jump)) {
    png_destroy_read_struct(&png, &info, NULL);
    free(pixels);
    free(rows);
    if (src.truncated)
      snprintf(err, cap, "truncated PNG (%s)", trap.message);
    else if (strcmp(trap.message, "Invalid IHDR data") == 0 && trap.warning[0])
      snprintf(err, cap, "invalid PNG (%s: %s)", trap.message, trap.warning);
    else
      snprintf(err, cap, "invalid PNG (%s)", trap.message);
    return IMAGE_ERR_INVALID;
  }
  png_set_read_fn(png, &src, source_read);
  png_read_info(png, info);
  png_uint_32 w = 0, h = 0;
  int depth = 0, color = 0, interlace = 0;
  png_get_IHDR(png, info, &w, &h, &depth, &color, &interlace, NULL, NULL);
  if (!image_size_allowed(w, h, err, cap)) {
    png_destroy_read_struct(&png, &info, NULL);
    return IMAGE_ERR_INVALID;
  }
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (depth == 16) png_set_strip_16(png); /* high byte, as PIL's 16-bit RGB modes */
  /* alpha, whether stored or expanded from tRNS, is dropped without compositing */
  png_set_strip_alpha(png);
  if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA)
    png_set_gray_to_rgb(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_channels(png, info) != 3 || png_get_bit_depth(png, info) != 8 ||
      png_get_rowbytes(png, info) != (size_t)w * 3) {
    snprintf(err, cap, "libpng gave %d channels of %d bits, not 8-bit RGB",
             png_get_channels(png, info), png_get_bit_depth(png, info));
    png_destroy_read_struct(&png, &info, NULL);
    return IMAGE_ERR_INVALID;
  }
  pixels = malloc((size_t)w * (size_t)h * 3);
  rows = malloc(sizeof(png_bytep) * h);
  if (!pixels || !rows) {
    snprintf(err, cap, "out of memory for %ux%u pixels", (unsigned)w, (unsigned)h);
    png_destroy_read_struct(&png, &info, NULL);
    free(pixels);
    free(rows);
    return IMAGE_ERR_NO_MEMORY;
  }
  for (png_uint_32 y = 0; y < h; y++) rows[y] = pixels + (size_t)y * w * 3;
  png_read_image(png, rows);
  /* up to IEND: a file cut after its image data is refused too */
  png_read_end(png, NULL);
  png_destroy_read_struct(&png, &info, NULL);
  free(rows);
  out->width = (int)w;
  out->height = (int)h;
  out->pixels = pixels;
  return IMAGE_OK;
}

#else /* no libpng at build time */

bool image_have_png(void) { return false; }

image_status image_decode_png(const uint8_t *data, size_t size, image_rgb *out, char *err,
                              size_t cap) {
  (void)data;
  (void)size;
  memset(out, 0, sizeof *out);
  snprintf(err, cap, "this build of infer has no PNG support (it was built without libpng: on "
           "Debian, apt-get install libpng-dev and rebuild)");
  return IMAGE_ERR_NO_SUPPORT;
}

#endif
