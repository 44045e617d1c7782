/* image_jpeg.c: JPEG to RGB with libjpeg(-turbo), decoded with the library's defaults
 * (accurate integer IDCT, smooth chroma upsampling), as PIL decodes, so that both give
 * the same pixels. See image_decode.h for what is accepted. */
#include "image_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef INFER_HAVE_JPEG

#include <setjmp.h>
/* jpeglib.h needs size_t and FILE declared first */
#include <jpeglib.h>
#include <jerror.h>

bool image_have_jpeg(void) { return true; }

/* libjpeg's default error_exit prints and calls exit(): ours jumps back to the
 * decoder with the message instead. */
typedef struct jpeg_trap {
  struct jpeg_error_mgr pub;
  jmp_buf jump;
  bool truncated;
  char message[JMSG_LENGTH_MAX];
} jpeg_trap;

static void trap_error(j_common_ptr cinfo) {
  jpeg_trap *t = (jpeg_trap *)cinfo->err;
  t->pub.format_message(cinfo, t->message);
  longjmp(t->jump, 1);
}

/* Warnings that mean the pixels are wrong (missing or corrupt scan data: libjpeg
 * fills such parts with gray and goes on) stop the decode; the rest (extraneous bytes
 * between markers, unknown JFIF revisions, ...) are harmless and ignored, as PIL
 * ignores them. Trace messages (level > 0) are ignored. */
static void trap_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;
  jpeg_trap *t = (jpeg_trap *)cinfo->err;
  switch (t->pub.msg_code) {
    case JWRN_JPEG_EOF:
      t->truncated = true;
      /* fall through */
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_ARITH_BAD_CODE:
    case JWRN_MUST_RESYNC:
      t->pub.format_message(cinfo, t->message);
      longjmp(t->jump, 1);
    default:
      return;
  }
}

static void trap_output(j_common_ptr cinfo) { (void)cinfo; }

image_status image_decode_jpeg(const uint8_t *data, size_t size, image_rgb *out, char *err,
                               size_t cap) {
  memset(out, 0, sizeof *out);
  struct jpeg_decompress_struct cinfo;
  jpeg_trap trap;
  memset(&trap, 0, sizeof trap);
  uint8_t *volatile pixels = NULL;
  cinfo.err = jpeg_std_error(&trap.pub);
  trap.pub.error_exit = trap_error;
  trap.pub.emit_message = trap_message;
  trap.pub.output_message = trap_output;
  if (setjmp(trap.jump)) {
    jpeg_destroy_decompress(&cinfo);
    free(pixels);
    if (trap.truncated)
      snprintf(err, cap, "truncated JPEG (%s)", trap.message);
    else
      snprintf(err, cap, "invalid JPEG (%s)", trap.message);
    return IMAGE_ERR_INVALID;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, (unsigned long)size);
  jpeg_read_header(&cinfo, TRUE);
  switch (cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE: case JCS_YCbCr: case JCS_RGB: break;
    case JCS_CMYK: case JCS_YCCK:
      snprintf(err, cap, "CMYK JPEGs are not supported (convert it to RGB first)");
      jpeg_destroy_decompress(&cinfo);
      return IMAGE_ERR_INVALID;
    default:
      snprintf(err, cap, "JPEG colour space %d with %d components is not supported",
               (int)cinfo.jpeg_color_space, cinfo.num_components);
      jpeg_destroy_decompress(&cinfo);
      return IMAGE_ERR_INVALID;
  }
  /* checked before jpeg_start_decompress, which allocates by the image's size */
  if (!image_size_allowed(cinfo.image_width, cinfo.image_height, err, cap)) {
    jpeg_destroy_decompress(&cinfo);
    return IMAGE_ERR_INVALID;
  }
  cinfo.out_color_space = JCS_RGB; /* gray is replicated into three channels */
  jpeg_start_decompress(&cinfo);
  int w = (int)cinfo.output_width, h = (int)cinfo.output_height;
  if (cinfo.output_components != 3) {
    snprintf(err, cap, "libjpeg gave %d components, not RGB", cinfo.output_components);
    jpeg_destroy_decompress(&cinfo);
    return IMAGE_ERR_INVALID;
  }
  pixels = malloc((size_t)w * (size_t)h * 3);
  if (!pixels) {
    snprintf(err, cap, "out of memory for %dx%d pixels", w, h);
    jpeg_destroy_decompress(&cinfo);
    return IMAGE_ERR_NO_MEMORY;
  }
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = pixels + (size_t)cinfo.output_scanline * (size_t)w * 3;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  /* reads to the end-of-image marker: a file cut after the last scanline is caught too */
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  out->width = w;
  out->height = h;
  out->pixels = pixels;
  return IMAGE_OK;
}

#else /* no libjpeg at build time */

bool image_have_jpeg(void) { return false; }

image_status image_decode_jpeg(const uint8_t *data, size_t size, image_rgb *out, char *err,
                               size_t cap) {
  (void)data;
  (void)size;
  memset(out, 0, sizeof *out);
  snprintf(err, cap, "this build of infer has no JPEG support (it was built without libjpeg: on "
           "Debian, apt-get install libjpeg62-turbo-dev and rebuild)");
  return IMAGE_ERR_NO_SUPPORT;
}

#endif
