/* notify: see notify.h. libsystemd's sd_notify does the protocol (an AF_UNIX datagram to
 * $NOTIFY_SOCKET, abstract or path, with credentials): nothing of it is written here. */
#include "notify.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "err.h"
#include "sys.h"

int notify_send(enum notify_state state, const char *status, char *err, size_t errlen)
{
    const char *what = "READY=1";
    char buf[96];
    if (state == NOTIFY_STOPPING) {
        what = "STOPPING=1";
    } else if (state == NOTIFY_RELOADING) {
        /* systemd >= 253 (Type=notify-reload) wants the CLOCK_MONOTONIC time of the
         * reload's start with it; older versions ignore the field. */
        snprintf(buf, sizeof buf, "RELOADING=1\nMONOTONIC_USEC=%llu", (unsigned long long)(sys_mono_ns() / 1000));
        what = buf;
    }
    int r = status ? sd_notifyf(0, "%s\nSTATUS=%s", what, status) : sd_notify(0, what);
    if (r < 0)
        return err_set(err, errlen, "sd_notify %s: %s", state == NOTIFY_READY ? "READY=1"
                       : state == NOTIFY_STOPPING ? "STOPPING=1" : "RELOADING=1", strerror(-r));
    return r > 0 ? 1 : 0;
}
