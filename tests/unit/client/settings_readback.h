/* Read one setting of a struct settings back as text, for table-driven tests that
 * compare it with the expected text. One function per setting. */
#ifndef DEBIT_TEST_SETTINGS_READBACK_H
#define DEBIT_TEST_SETTINGS_READBACK_H

#include <stdio.h>

#include "settings.h"

typedef void (*readback_fn)(const struct settings *s, char *buf, size_t len);

static inline void rb_runs(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%u", s->runs);
}
static inline void rb_order(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%s", plan_order_name(s->order));
}
static inline void rb_seed(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%llu/%d", (unsigned long long)s->seed, s->seed_given);
}
static inline void rb_pause(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%g", s->pause_s);
}
static inline void rb_stall(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%g", s->dl.stall_s);
}
static inline void rb_stall_rate(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%g", s->dl.stall_rate_Bps);
}
static inline void rb_max_time(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%g", s->dl.max_time_s);
}
static inline void rb_timeout(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%g", s->dl.connect_timeout_s);
}
static inline void rb_max_bytes(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%llu", (unsigned long long)s->dl.max_bytes);
}
static inline void rb_rcvbuf(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%llu", (unsigned long long)s->dl.rcvbuf);
}
static inline void rb_ip(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%d", s->dl.ip_version);
}
static inline void rb_resolve(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%s", s->dl.resolve ? s->dl.resolve->data : "-");
}
static inline void rb_connect_to(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%s", s->dl.connect_to ? s->dl.connect_to->data : "-");
}
static inline void rb_interface(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%s", s->dl.interface ? s->dl.interface : "-");
}
static inline void rb_local(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%s", s->dl.local_address ? s->dl.local_address : "-");
}
static inline void rb_ua(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%s", s->dl.user_agent ? s->dl.user_agent : "-");
}
static inline void rb_format(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%d", (int)s->format);
}
static inline void rb_output(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%s", s->output ? s->output : "-");
}
static inline void rb_jsonl(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%s", s->jsonl ? s->jsonl : "-");
}
static inline void rb_plot(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%s", s->plot ? s->plot : "-");
}
static inline void rb_progress(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%d", s->progress);
}
static inline void rb_quiet(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%d", s->quiet);
}
static inline void rb_offload(const struct settings *s, char *b, size_t l)
{
    char w[64] = "-";
    if (s->noffloads)
        offload_wish_format(&s->offloads[0].wish, w, sizeof w);
    snprintf(b, l, "%zu %s %s", s->noffloads, s->noffloads ? s->offloads[0].ifname : "-", w);
}
static inline void rb_delay(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%llu", (unsigned long long)s->delay_us);
}
static inline void rb_delay_dev(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%s", s->delay_dev ? s->delay_dev : "-");
}
static inline void rb_server(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%zu %s %s", s->nservers, s->nservers ? s->servers[0].name : "-",
             s->nservers ? s->servers[0].url : "-");
}
static inline void rb_seed_value(const struct settings *s, char *b, size_t l)
{
    snprintf(b, l, "%llu", (unsigned long long)s->seed);
}

#endif
