/* http_handler: the router and libmicrohttpd's request callbacks (kept apart from the rest,
 * like curl's tool_cb_*.c). The cls of every callback is the struct listener the connection
 * arrived on. */
#ifndef DEBITD_HTTP_HANDLER_H
#define DEBITD_HTTP_HANDLER_H

#include <microhttpd.h>
#include <stdarg.h>
#include <stddef.h>

/* MHD_AccessHandlerCallback: route the request (called once per piece of its body). */
enum MHD_Result http_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                            const char *version, const char *upload_data, size_t *upload_data_size,
                            void **req_cls);
/* MHD_RequestCompletedCallback: settle the request's record, quota, log line, and free it. */
void http_completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe);
/* MHD_NotifyConnectionCallback: make the connection's struct conn at its start, free it at its close. */
void http_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                     enum MHD_ConnectionNotificationCode toe);
/* MHD_OPTION_EXTERNAL_LOGGER: libmicrohttpd's messages into debitd's log. */
void http_mhd_log(void *cls, const char *fmt, va_list ap);

#endif
