#ifndef CLINIC_CARGON2_SHIM_H
#define CLINIC_CARGON2_SHIM_H
#include <argon2.h>
#endif
