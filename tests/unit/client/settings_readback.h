/* Read one setting of a struct settings back as text, for table-driven tests that
 * compare it with the expected text. One function per setting. */
#ifndef DEBIT_TEST_SETTINGS_READBACK_H
#define DEBIT_TEST_SETTINGS_READBACK_H

#include <stdio.h>

#include "settings.h"

typedef void (*readback_fn)(const struct settings *s, char *buf, size_t len);

/* One reader per setting: rb_NAME(s, buf, len) writes the value as text. */
#define RB(name, fmt, ...)                                                                \
    static inline void rb_##name(const struct settings *s, char *b, size_t l)             \
    {                                                                                     \
        snprintf(b, l, fmt, __VA_ARGS__);                                                 \
    }

RB(runs, "%u", s->runs)
RB(order, "%s", plan_order_name(s->order))
RB(seed, "%llu/%d", (unsigned long long)s->seed, s->seed_given)
RB(pause, "%g", s->pause_s)
RB(stall, "%g", s->dl.stall_s)
RB(stall_rate, "%g", s->dl.stall_rate_Bps)
RB(max_time, "%g", s->dl.max_time_s)
RB(timeout, "%g", s->dl.connect_timeout_s)
RB(max_bytes, "%llu", (unsigned long long)s->dl.max_bytes)
RB(rcvbuf, "%llu", (unsigned long long)s->dl.rcvbuf)
RB(bottleneck, "%g", s->dl.bottleneck_bps)
RB(ip, "%d", s->dl.ip_version)
RB(resolve, "%s", s->dl.resolve ? s->dl.resolve->data : "-")
RB(connect_to, "%s", s->dl.connect_to ? s->dl.connect_to->data : "-")
RB(interface, "%s", s->dl.interface ? s->dl.interface : "-")
RB(local, "%s", s->dl.local_address ? s->dl.local_address : "-")
RB(ua, "%s", s->dl.user_agent ? s->dl.user_agent : "-")
RB(format, "%d", (int)s->format)
RB(output, "%s", s->output ? s->output : "-")
RB(jsonl, "%s", s->jsonl ? s->jsonl : "-")
RB(plot, "%s", s->plot ? s->plot : "-")
RB(progress, "%d", s->progress)
RB(quiet, "%d", s->quiet)
static inline void rb_offload(const struct settings *s, char *b, size_t l)
{
    char w[64] = "-";
    if (s->noffloads)
        offload_wish_format(&s->offloads[0].wish, w, sizeof w);
    snprintf(b, l, "%zu %s %s", s->noffloads, s->noffloads ? s->offloads[0].ifname : "-", w);
}
RB(delay, "%llu", (unsigned long long)s->delay_us)
RB(delay_dev, "%s", s->delay_dev ? s->delay_dev : "-")
RB(server, "%zu %s %s", s->nservers, s->nservers ? s->servers[0].name : "-",              s->nservers ? s->servers[0].url : "-")
RB(seed_value, "%llu", (unsigned long long)s->seed)

/* Issue 12: streams, upload, time-bounded runs, the test-file check. */
RB(parallel, "%u", s->dl.parallel)
RB(split, "%d", s->dl.split)
RB(upload, "%llu", (unsigned long long)s->dl.upload)
RB(upload_method, "%s", s->dl.upload_put ? "PUT" : "POST")
RB(duration, "%g", s->dl.duration_s)
RB(interval, "%g", s->dl.interval_s)
RB(min_bytes, "%llu", (unsigned long long)s->dl.min_bytes)
RB(server_upload, "%llu", s->nservers ? (unsigned long long)s->servers[s->nservers - 1].upload : 0ULL)

#endif
