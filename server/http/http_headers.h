/* http_headers: the headers of a file response (type, cache, validators, X-Debit-*) read
 * once per request and added in one place, and the interface an address belongs to. */
#ifndef DEBITD_HTTP_HEADERS_H
#define DEBITD_HTTP_HEADERS_H

#include <microhttpd.h>
#include <net/if.h>
#include <stddef.h>
#include <sys/socket.h>

#include "server.h"

/* What a file response's headers say but for its X-Debit-Transfer and Content-Range: type,
 * cache, ranges, validators, and the X-Debit-* headers that describe the serving
 * configuration, read for every request (http_file_head) and added in one place
 * (http_file_head_add). Pointers are borrowed from the request's call. */
struct file_head {
    const char *etag, *last_modified, *kernel;
    int details; /* server.details: X-Debit-Interface and X-Debit-Kernel are sent */
    char tcp[160], offload[256], ifname[IF_NAMESIZE + 1], cpu[256], tls[256];
};
/* Fill H for a response of L to CONN with ETAG (borrowed: it must outlive H's use). */
void http_file_head(struct listener *l, struct MHD_Connection *conn, const char *etag, struct file_head *h);
/* Add H's headers to RESP; NOT_MODIFIED (a 304): without Content-Type and Accept-Ranges. */
void http_file_head_add(const struct file_head *h, struct MHD_Response *resp, int not_modified);
/* H's values and EXTRA (what else decides the response) as one byte string in BUF: two
 * responses with equal strings carry the same headers. Returns its length, 0 if LEN is too
 * short. */
size_t http_file_head_sig(const struct file_head *h, const char *extra, char *buf, size_t len);
/* The X-Debit-* headers of H alone (http_file_head_add adds them with the file's others). */
void http_file_head_add_debit(const struct file_head *h, struct MHD_Response *resp);
/* Name of the interface that holds address SS ("lo", "veth0") in IFNAME (LEN bytes); ""
 * if none, or SS is unspecified (http_headers.c). */
void http_address_interface(const struct sockaddr_storage *ss, char *ifname, size_t len);

#endif
