/* tls_info: the TLS version and cipher suite of the connection a libcurl handle is using,
 * for a run's JSON "tls" (and to compare with debitd's X-Debit-Tls, which names them the
 * same way). Debian's libcurl uses OpenSSL: CURLINFO_TLS_SSL_PTR gives the SSL *, read
 * with SSL_get_version and SSL_CIPHER_standard_name. Another TLS backend is reported as
 * unknown rather than guessed. */
#ifndef DEBIT_TLS_INFO_H
#define DEBIT_TLS_INFO_H

#include <curl/curl.h>
#include <stddef.h>

/* Fill VERSION ("TLS1.3", OpenSSL's "TLSv1.3" without the v) and CIPHER (IANA name,
 * "TLS_AES_256_GCM_SHA384") for H's current connection; both "" when it is plain HTTP (or
 * H is NULL), "unknown" for a TLS backend other than OpenSSL. Call it while the
 * connection is open (a header or write callback): libcurl closes it after the transfer. */
void tls_info_get(CURL *h, char *version, size_t vlen, char *cipher, size_t clen);

#endif
