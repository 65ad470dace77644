#ifndef CQPDF_SHIM_H
#define CQPDF_SHIM_H
/* qpdf's C API (Debian's libqpdf-dev, 11.x), for ClinicKit's check of uploaded PDFs
 * (PDFActiveContent.swift): qpdf parses the file, reads object streams and decodes every
 * standard filter and predictor. Only reading: nothing is ever written. */
#include <qpdf/qpdf-c.h>
#endif
