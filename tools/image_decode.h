/* image_decode.h: JPEG and PNG files to 8-bit RGB pixels, for `infer --image`.
 *
 * What is read (the choice follows what torchvision's usual loader,
 * PIL.Image.open(f).convert("RGB"), hands a model):
 * - JPEG (libjpeg-turbo): baseline and progressive, YCbCr, RGB and grayscale
 *   (gray is replicated into R, G and B). CMYK and YCCK JPEGs are refused: their
 *   conversion depends on the (often absent or inverted) colour profile.
 *   Truncated or corrupt scan data is an error, not a gray-filled image.
 * - PNG (libpng): every colour type and bit depth. Gray is replicated, palette
 *   images are expanded to RGB, 1/2/4-bit gray is scaled to 8 bits, an alpha channel
 *   (or tRNS transparency) is dropped without compositing, 16-bit samples keep their
 *   high byte. Interlaced files are read whole. Gamma and colour profiles are
 *   ignored (as PIL does). A truncated file, a CRC error in a critical chunk or
 *   missing image data is an error.
 * - No EXIF orientation is applied (torchvision applies none either).
 * - At most IMAGE_MAX_SIDE pixels on a side and IMAGE_MAX_PIXELS in all: larger
 *   images are refused after their header is read, before anything is allocated
 *   for the pixels. Files over IMAGE_MAX_FILE_BYTES are refused unread.
 * - Neither library may end the process: both report through setjmp/longjmp
 *   handlers here, and every failure comes back as a status and a message. */
#ifndef INFER_IMAGE_DECODE_H
#define INFER_IMAGE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IMAGE_MAX_SIDE 32768
#define IMAGE_MAX_PIXELS (1LL << 27) /* 134 million: 384 MiB of RGB */
#define IMAGE_MAX_FILE_BYTES (1LL << 30)

/* Height x width x 3 bytes, row-major, R G B; pixels malloc'ed, owned by the holder. */
typedef struct image_rgb {
  int width, height;
  uint8_t *pixels;
} image_rgb;

typedef enum image_status {
  IMAGE_OK = 0,
  IMAGE_ERR_INVALID,     /* not an image we read, corrupt, truncated, too large */
  IMAGE_ERR_IO,          /* the file could not be opened or read */
  IMAGE_ERR_NO_SUPPORT,  /* this build has no decoder for the format */
  IMAGE_ERR_NO_MEMORY
} image_status;

/* Decodes the file at path (JPEG or PNG, told apart by content). On failure *out is
 * zeroed and err (cap bytes) holds a message without the file name, e.g.
 * "truncated JPEG (Premature end of JPEG file)". */
image_status image_decode_file(const char *path, image_rgb *out, char *err, size_t cap);

/* The same, for a JPEG or PNG already in memory. */
image_status image_decode_memory(const uint8_t *data, size_t size, image_rgb *out, char *err,
                                 size_t cap);

/* Per format, on memory (image_jpeg.c, image_png.c). Where the build lacks the
 * library they return IMAGE_ERR_NO_SUPPORT. */
image_status image_decode_jpeg(const uint8_t *data, size_t size, image_rgb *out, char *err,
                               size_t cap);
image_status image_decode_png(const uint8_t *data, size_t size, image_rgb *out, char *err,
                              size_t cap);
bool image_have_jpeg(void);
bool image_have_png(void);

/* Checks width x height against the caps above; writes the message when refused. */
bool image_size_allowed(long long width, long long height, char *err, size_t cap);

void image_rgb_clear(image_rgb *im);

#endif
