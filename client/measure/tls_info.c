/* tls_info: see tls_info.h. */
#include "tls_info.h"

#include <openssl/ssl.h>
#include <stdio.h>
#include <string.h>

void tls_info_get(CURL *h, char *version, size_t vlen, char *cipher, size_t clen)
{
    version[0] = cipher[0] = 0;
    struct curl_tlssessioninfo *ti = NULL;
    if (!h || curl_easy_getinfo(h, CURLINFO_TLS_SSL_PTR, &ti) != CURLE_OK || !ti ||
        ti->backend == CURLSSLBACKEND_NONE || !ti->internals)
        return;
    if (ti->backend != CURLSSLBACKEND_OPENSSL) {
        snprintf(version, vlen, "unknown");
        snprintf(cipher, clen, "unknown");
        return;
    }
    SSL *ssl = ti->internals;
    const char *v = SSL_get_version(ssl); /* "TLSv1.3" */
    if (strncmp(v, "TLSv", 4) == 0)
        snprintf(version, vlen, "TLS%s", v + 4);
    else
        snprintf(version, vlen, "%s", v);
    const SSL_CIPHER *c = SSL_get_current_cipher(ssl);
    const char *name = c ? SSL_CIPHER_standard_name(c) : NULL;
    snprintf(cipher, clen, "%s", name ? name : "unknown");
}
