#ifndef CLINIC_CSQLITE_SHIM_H
#define CLINIC_CSQLITE_SHIM_H
// SQLite's C API, for ClinicKit's read-only data files (DataFile).
#include <sqlite3.h>
#endif
