/* notify: tells the service manager where debitd is in its life cycle (systemd's
 * Type=notify protocol, sd_notify(3)): READY once every listener accepts, RELOADING while a
 * configuration is re-read, STOPPING when shutting down. Outside systemd (no NOTIFY_SOCKET
 * in the environment) every call is a no-op, so debitd runs the same from a shell. */
#ifndef DEBITD_NOTIFY_H
#define DEBITD_NOTIFY_H

#include <stddef.h>

enum notify_state {
    NOTIFY_READY,     /* READY=1: systemctl start returns, After= units start */
    NOTIFY_RELOADING, /* RELOADING=1: a reload began; send NOTIFY_READY when it is done */
    NOTIFY_STOPPING,  /* STOPPING=1: shutting down */
};

/* Send STATE with STATUS (a one-line text systemctl status shows; NULL = none).
 * Returns 1 sent, 0 no service manager listens (NOTIFY_SOCKET unset), -1 with err. */
int notify_send(enum notify_state state, const char *status, char *err, size_t errlen);

#endif
