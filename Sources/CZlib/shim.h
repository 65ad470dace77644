// zlib (Debian's zlib1g-dev), to inflate a PDF's Flate streams when looking for scripts in it.
#include <zlib.h>
