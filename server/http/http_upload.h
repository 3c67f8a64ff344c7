/* http_upload: a POST/PUT body counted and discarded (REQ_UPLOAD). */
#ifndef DEBITD_HTTP_UPLOAD_H
#define DEBITD_HTTP_UPLOAD_H

#include <microhttpd.h>
#include <stddef.h>

#include "http_req.h"
#include "server.h"

/* One call of an upload of R: UPLOAD_DATA (*UPLOAD_DATA_SIZE bytes, set to 0 when consumed)
 * counted; answered once the body has ended (or refused before it when over its limit). */
enum MHD_Result http_upload(struct listener *l, struct MHD_Connection *conn, struct req *r,
                            const char *upload_data, size_t *upload_data_size);

#endif
