#ifndef CVIPS_SHIM_H
#define CVIPS_SHIM_H
/* libvips (Debian's libvips-dev, 8.14) for ClinicImages. Most of its API is variadic
 * (NULL-terminated option lists), which Swift cannot call: each call the project makes is a
 * static inline function here with its options fixed. */
#include <vips/vips.h>

/* Once, before any other call (ClinicImages does it under a lock). The operation cache keys
 * buffers by their address, so it is off; untrusted loaders (PDF, ImageMagick, JPEG XL…) are
 * blocked: only JPEG, PNG and HEIF are ever decoded. */
static inline int cvips_init(void) {
    if (VIPS_INIT("clinic")) return -1;
    vips_cache_set_max(0);
    vips_block_untrusted_set(TRUE);
    vips_concurrency_set(1);
    return 0;
}

/* The loader libvips would pick for a buffer ("VipsForeignLoadJpegBuffer"…), or NULL. */
static inline const char *cvips_loader_name(const void *buf, size_t len) {
    return vips_foreign_find_load_buffer(buf, len);
}

/* The header only (libvips is lazy): the buffer must outlive the image. */
static inline VipsImage *cvips_load_header(const void *buf, size_t len) {
    return vips_image_new_from_buffer(buf, len, "", NULL);
}

/* Decoded, turned upright (EXIF orientation, HEIF irot), shrunk to fit a max_side square
 * (never enlarged). */
static inline int cvips_fit(const void *buf, size_t len, VipsImage **out, int max_side) {
    return vips_thumbnail_buffer((void *) buf, len, out, max_side, "height", max_side,
        "size", VIPS_SIZE_DOWN, "option_string", "fail_on=truncated", NULL);
}

/* In sRGB (a grey or CMYK picture too); an embedded ICC profile is not applied. */
static inline int cvips_srgb(VipsImage *in, VipsImage **out) {
    return vips_colourspace(in, out, VIPS_INTERPRETATION_sRGB, NULL);
}

/* JPEG has no transparency: transparent parts become white (not libvips's black). */
static inline int cvips_flatten_white(VipsImage *in, VipsImage **out) {
    if (!vips_image_hasalpha(in)) { g_object_ref(in); *out = in; return 0; }
    double white[3] = {255.0, 255.0, 255.0};
    VipsArrayDouble *background = vips_array_double_new(white, 3);
    int result = vips_flatten(in, out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return result;
}

/* JPEG without any metadata (EXIF, GPS, XMP, ICC). */
static inline int cvips_jpeg(VipsImage *in, void **buf, size_t *len, int quality) {
#if VIPS_MAJOR_VERSION > 8 || (VIPS_MAJOR_VERSION == 8 && VIPS_MINOR_VERSION >= 15)
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, "keep", VIPS_FOREIGN_KEEP_NONE, "optimize_coding", TRUE, NULL);
#else
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, "strip", TRUE, "optimize_coding", TRUE, NULL);
#endif
}

static inline void cvips_unref(VipsImage *image) { if (image) g_object_unref(image); }
static inline void cvips_free(void *pointer) { g_free(pointer); }
static inline int cvips_width(VipsImage *image) { return vips_image_get_width(image); }
static inline int cvips_height(VipsImage *image) { return vips_image_get_height(image); }
/* What one decoded pixel takes, from the header: bands x the bytes of a band's sample (two for
 * a 16-bit PNG). */
static inline int cvips_pixel_bytes(VipsImage *image) {
    return vips_image_get_bands(image) * (int) vips_format_sizeof(vips_image_get_format(image));
}
/* The error text so far (a copy to g_free), and the buffer cleared. */
static inline char *cvips_error_take(void) { return vips_error_buffer_copy(); }
#endif
