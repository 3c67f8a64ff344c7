/* http_www: debitd's front page and its speed test (the HTML, CSS and JavaScript of
 * server/http/www/, embedded in the binary by tools/embed at build time). */
#ifndef DEBITD_HTTP_WWW_H
#define DEBITD_HTTP_WWW_H

#include <microhttpd.h>
#include <stddef.h>

struct listener; /* server.h: not included, the generated www_assets.c is built without its path */

/* Where the page's files are served: /speedtest/NAME. */
#define WWW_PREFIX "/speedtest/"

struct www_asset {
    const char *name; /* "speed.js" */
    const char *type; /* its Content-Type */
    const unsigned char *data; /* LEN bytes and a NUL */
    size_t len;
};

/* The generated table (build/gen/www_assets.c). */
extern const struct www_asset www_assets[];
extern const size_t www_n_assets;

/* The asset called NAME, or NULL. */
const struct www_asset *www_find(const char *name);

/* GET /: the front page, the speed test and the root's listing (http_www.c). */
enum MHD_Result http_front_page(struct listener *l, struct MHD_Connection *conn);
/* GET /speedtest/NAME: a file of the front page (http_www.c); 404 for an unknown NAME. */
enum MHD_Result http_www_asset(struct listener *l, struct MHD_Connection *conn, const char *name);

#endif
