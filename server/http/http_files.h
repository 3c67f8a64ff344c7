/* http_files: a configured file's routes (its body, FILE.sha256) and its ETag. */
#ifndef DEBITD_HTTP_FILES_H
#define DEBITD_HTTP_FILES_H

#include <microhttpd.h>
#include <stddef.h>

#include "http_req.h"
#include "server.h"

/* GET or HEAD (HEAD) of file F: preconditions, ranges, quota, then the body with its
 * transfer record (R becomes REQ_FILE). */
enum MHD_Result http_file(struct listener *l, struct MHD_Connection *conn, struct req *r,
                          const struct file_cfg *f, int head);
/* FILE.sha256: answered at once when the digest is known; otherwise the connection is
 * suspended and handed to the hashing thread, and answered when libmicrohttpd calls the
 * handler again after the resume (r->kind is then REQ_DIGEST). */
enum MHD_Result http_file_sha256(struct listener *l, struct MHD_Connection *conn, struct req *r,
                                 const struct file_cfg *f);
/* The strong ETag of a file (quoted), from seed, region and size: stable across restarts. */
void http_etag(const struct server *s, const struct file_cfg *f, char *buf, size_t len);

#endif
