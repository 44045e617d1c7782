/* image_decode.c: reads an image file, tells JPEG from PNG by content and hands it to
 * the decoder of its format (image_jpeg.c, image_png.c). */
#include "image_decode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void image_rgb_clear(image_rgb *im) {
  if (!im) return;
  free(im->pixels);
  memset(im, 0, sizeof *im);
}

static void say(char *err, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, cap, fmt, ap);
  va_end(ap);
}

bool image_size_allowed(long long width, long long height, char *err, size_t cap) {
  if (width <= 0 || height <= 0) {
    say(err, cap, "the image is empty (%lldx%lld)", width, height);
    return false;
  }
  if (width > IMAGE_MAX_SIDE || height > IMAGE_MAX_SIDE || width * height > IMAGE_MAX_PIXELS) {
    say(err, cap, "the image is %lldx%lld, more than this tool reads (at most %d on a side "
        "and %lld pixels)", width, height, IMAGE_MAX_SIDE, (long long)IMAGE_MAX_PIXELS);
    return false;
  }
  return true;
}

/* Names the formats people most often hand over by mistake. */
static const char *other_format(const uint8_t *d, size_t n) {
  if (n >= 6 && (memcmp(d, "GIF87a", 6) == 0 || memcmp(d, "GIF89a", 6) == 0)) return "GIF";
  if (n >= 12 && memcmp(d, "RIFF", 4) == 0 && memcmp(d + 8, "WEBP", 4) == 0) return "WebP";
  if (n >= 2 && memcmp(d, "BM", 2) == 0) return "BMP";
  if (n >= 4 && (memcmp(d, "II*\0", 4) == 0 || memcmp(d, "MM\0*", 4) == 0)) return "TIFF";
  if (n >= 12 && memcmp(d + 4, "ftyp", 4) == 0) return "HEIF/AVIF (ISO media)";
  if (n >= 12 && memcmp(d, "\0\0\0\x0cjP  ", 8) == 0) return "JPEG 2000";
  return NULL;
}

image_status image_decode_memory(const uint8_t *data, size_t size, image_rgb *out, char *err,
                                 size_t cap) {
  memset(out, 0, sizeof *out);
  static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (size >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff)
    return image_decode_jpeg(data, size, out, err, cap);
  if (size >= 8 && memcmp(data, png_magic, 8) == 0)
    return image_decode_png(data, size, out, err, cap);
  if (size == 0) {
    say(err, cap, "the file is empty, not an image");
    return IMAGE_ERR_INVALID;
  }
  const char *other = other_format(data, size);
  if (other)
    say(err, cap, "%s images are not supported (JPEG and PNG are)", other);
  else if (size < 3 && memcmp(data, "\xff\xd8\xff", size) == 0)
    say(err, cap, "truncated JPEG (%zu byte%s)", size, size == 1 ? "" : "s");
  else if (size < 8 && memcmp(data, png_magic, size) == 0)
    say(err, cap, "truncated PNG (%zu byte%s)", size, size == 1 ? "" : "s");
  else
    say(err, cap, "not a JPEG or PNG file (it starts with %02x %02x %02x %02x)", data[0],
        size > 1 ? data[1] : 0, size > 2 ? data[2] : 0, size > 3 ? data[3] : 0);
  return IMAGE_ERR_INVALID;
}

image_status image_decode_file(const char *path, image_rgb *out, char *err, size_t cap) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) {
    say(err, cap, "cannot open: %s", strerror(errno));
    return IMAGE_ERR_IO;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    say(err, cap, "not a regular file");
    return IMAGE_ERR_IO;
  }
  if ((long long)st.st_size > IMAGE_MAX_FILE_BYTES) {
    fclose(f);
    say(err, cap, "the file has %lld bytes, more than this tool reads (%lld)",
        (long long)st.st_size, (long long)IMAGE_MAX_FILE_BYTES);
    return IMAGE_ERR_INVALID;
  }
  size_t size = (size_t)st.st_size;
  uint8_t *data = malloc(size ? size : 1);
  if (!data) {
    fclose(f);
    say(err, cap, "out of memory reading %zu bytes", size);
    return IMAGE_ERR_NO_MEMORY;
  }
  size_t got = fread(data, 1, size, f);
  bool read_error = ferror(f) != 0;
  fclose(f);
  if (read_error || got != size) {
    free(data);
    say(err, cap, "read error");
    return IMAGE_ERR_IO;
  }
  image_status s = image_decode_memory(data, size, out, err, cap);
  free(data);
  return s;
}
