/* http_pages: the small generated pages: a folder's index and a transfer's record. */
#ifndef DEBITD_HTTP_PAGES_H
#define DEBITD_HTTP_PAGES_H

#include <microhttpd.h>

#include "server.h"

/* GET FOLDER/: the folder's listing as an HTML page; 404 for a folder not configured. */
enum MHD_Result http_index(struct listener *l, struct MHD_Connection *conn, const char *folder);
struct html_buf;
/* The listing of FOLDER (its subfolders, then its files with sizes and .sha256 links) as a
 * <pre> block appended to B (http_pages.c). */
void http_index_list(struct html_buf *b, const struct config *c, const char *folder);
/* GET /transfer/ID: the transfer record ID as JSON; 404 when it is unknown or gone. */
enum MHD_Result http_transfer(struct listener *l, struct MHD_Connection *conn, const char *id);

#endif
