// libcurl's SMTP client (STARTTLS, SMTPS, authentication) and an HTTP GET, each wrapped in one
// function: the options are set through curl_easy_setopt, a variadic macro Swift cannot call.
#ifndef CLINIC_CCURL_SHIM_H
#define CLINIC_CCURL_SHIM_H

#include <curl/curl.h>
#include <string.h>

struct clinic_upload {
    const char *data;
    size_t length;
    size_t offset;
};

static size_t clinic_upload_read(char *buffer, size_t size, size_t count, void *user) {
    struct clinic_upload *upload = (struct clinic_upload *)user;
    size_t room = size * count, left = upload->length - upload->offset;
    size_t n = left < room ? left : room;
    memcpy(buffer, upload->data + upload->offset, n);
    upload->offset += n;
    return n;
}

/// Sends one message. `require_tls`: 1 demands TLS (SMTPS, or STARTTLS on smtp://), 0 uses
/// STARTTLS when the server offers it. The server's certificate is always verified, against
/// `ca_file` when given (a private CA), else the system's CAs. Returns a CURLcode (0 = the server accepted the
/// message); `response` gets the server's last reply code, `error` (CURL_ERROR_SIZE bytes) the
/// reason of a failure.
static inline int clinic_smtp_send(const char *url, const char *user, const char *password, int require_tls,
                                   const char *ca_file, const char *from, const char *to, const char *data,
                                   size_t length, long timeout_seconds, long *response, char *error) {
    CURL *curl = curl_easy_init();
    if (!curl) return CURLE_FAILED_INIT;
    struct clinic_upload upload = { data, length, 0 };
    struct curl_slist *recipients = curl_slist_append(NULL, to);
    error[0] = 0;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    if (user && user[0]) curl_easy_setopt(curl, CURLOPT_USERNAME, user);
    if (password && password[0]) curl_easy_setopt(curl, CURLOPT_PASSWORD, password);
    curl_easy_setopt(curl, CURLOPT_USE_SSL, require_tls ? (long)CURLUSESSL_ALL : (long)CURLUSESSL_TRY);
    if (ca_file && ca_file[0]) curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
    curl_easy_setopt(curl, CURLOPT_MAIL_FROM, from);
    curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, recipients);
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, clinic_upload_read);
    curl_easy_setopt(curl, CURLOPT_READDATA, &upload);
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)length);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, timeout_seconds);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    CURLcode result = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, response);
    if (result != CURLE_OK && error[0] == 0) {
        strncpy(error, curl_easy_strerror(result), CURL_ERROR_SIZE - 1);
        error[CURL_ERROR_SIZE - 1] = 0;
    }
    curl_slist_free_all(recipients);
    curl_easy_cleanup(curl);
    return (int)result;
}

struct clinic_download {
    char *data;
    size_t capacity;
    size_t length;
};

static size_t clinic_download_write(char *buffer, size_t size, size_t count, void *user) {
    struct clinic_download *download = (struct clinic_download *)user;
    size_t n = size * count, room = download->capacity - download->length;
    size_t kept = n < room ? n : room;
    memcpy(download->data + download->length, buffer, kept);
    download->length += kept;
    return n;
}

/// An HTTP(S) GET (the SMS gateway's `sendsms`). The first `capacity` bytes of the answer's
/// body go to `body` (`*body_length` of them); `status` gets the HTTP status. The server's
/// certificate is verified, against `ca_file` when given. Returns a CURLcode (0: an answer came,
/// whatever its status); `error` (CURL_ERROR_SIZE bytes) gets the reason of a failure.
static inline int clinic_http_get(const char *url, const char *ca_file, long timeout_seconds, long *status,
                                  char *body, size_t capacity, size_t *body_length, char *error) {
    CURL *curl = curl_easy_init();
    if (!curl) return CURLE_FAILED_INIT;
    struct clinic_download download = { body, capacity, 0 };
    error[0] = 0;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    if (ca_file && ca_file[0]) curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, clinic_download_write);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &download);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, timeout_seconds);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    CURLcode result = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
    *body_length = download.length;
    if (result != CURLE_OK && error[0] == 0) {
        strncpy(error, curl_easy_strerror(result), CURL_ERROR_SIZE - 1);
        error[CURL_ERROR_SIZE - 1] = 0;
    }
    curl_easy_cleanup(curl);
    return (int)result;
}

static inline void clinic_curl_global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

#endif
