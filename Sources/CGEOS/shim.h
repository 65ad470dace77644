#ifndef CLINIC_CGEOS_SHIM_H
#define CLINIC_CGEOS_SHIM_H
// Only the reentrant (_r) API: every call takes an explicit context handle.
#define GEOS_USE_ONLY_R_API
#include <geos_c.h>
#endif
