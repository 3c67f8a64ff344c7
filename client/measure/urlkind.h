/* urlkind: what a URL names for debit: a test file, or an endpoint of a speed-test
 * protocol that debit measures like one (LibreSpeed's garbage.php?ckSize=N, Cloudflare's
 * __down?bytes=N; their upload sinks empty.php and __up). Pure: the run's JSON "kind" and
 * the default server names come from it (docs/client.md "Speed-test servers"). */
#ifndef DEBIT_URLKIND_H
#define DEBIT_URLKIND_H

enum url_kind { URL_KIND_FILE = 0, URL_KIND_LIBRESPEED, URL_KIND_CLOUDFLARE, URL_KIND_NDT7 };

/* The kind of URL (NULL: a file): ws:// and wss:// are ndt7 (ndt7.h); else its path's
 * last segment decides: garbage, empty (with or without .php) are LibreSpeed's, __down
 * and __up Cloudflare's. */
enum url_kind urlkind_of(const char *url);
/* "file", "librespeed", "cloudflare", "ndt7". */
const char *urlkind_name(enum url_kind k);

#endif
