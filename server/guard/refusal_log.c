/* refusal_log: see refusal_log.h. */
#include "refusal_log.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "err.h"

static const char *const names[REFUSAL_N] = {"header_timeout", "body_min_rate", "limit", "incomplete_request",
                                              "tls_handshake", "malformed_request"};

const char *refusal_reason_name(enum refusal_reason reason)
{
    return reason < REFUSAL_N ? names[reason] : "?";
}

int refusal_log_init(struct refusal_log *rl, int64_t interval_ms, int64_t now_ms, char *err, size_t errlen)
{
    memset(rl, 0, sizeof *rl);
    rl->interval_ms = interval_ms;
    rl->start_ms = rl->lines_start_ms = now_ms;
    int e = pthread_mutex_init(&rl->lock, NULL);
    if (e)
        return err_set(err, errlen, "refusal log: mutex: %s", strerror(e));
    return 0;
}

void refusal_log_destroy(struct refusal_log *rl)
{
    pthread_mutex_destroy(&rl->lock);
}

void refusal_log_note(struct refusal_log *rl, enum refusal_reason reason, const char *addr)
{
    if (reason >= REFUSAL_N)
        return;
    atomic_fetch_add(&rl->total[reason], 1);
    pthread_mutex_lock(&rl->lock);
    rl->count[reason]++;
    if (addr && addr[0]) {
        unsigned i;
        for (i = 0; i < rl->n_addrs && strcmp(rl->addrs[i].addr, addr) != 0; i++)
            ;
        if (i == rl->n_addrs && i < REFUSAL_LOG_ADDRS) {
            snprintf(rl->addrs[i].addr, sizeof rl->addrs[i].addr, "%s", addr);
            rl->addrs[i].n = 0;
            memset(rl->addrs[i].by, 0, sizeof rl->addrs[i].by);
            rl->n_addrs++;
        }
        if (i < rl->n_addrs) {
            rl->addrs[i].n++;
            rl->addrs[i].by[reason]++;
        } else {
            rl->others++;
        }
    }
    pthread_mutex_unlock(&rl->lock);
}

int refusal_log_line(struct refusal_log *rl, int64_t now_ms, const char *msg)
{
    pthread_mutex_lock(&rl->lock);
    if (now_ms - rl->lines_start_ms >= rl->interval_ms) {
        rl->lines_start_ms = now_ms;
        rl->lines = 0;
    }
    int ok = rl->lines < REFUSAL_LOG_LINES;
    if (ok) {
        rl->lines++;
    } else {
        rl->lines_dropped++;
        snprintf(rl->last_dropped, sizeof rl->last_dropped, "%s", msg ? msg : "");
    }
    pthread_mutex_unlock(&rl->lock);
    return ok;
}

uint64_t refusal_log_total(struct refusal_log *rl, enum refusal_reason reason)
{
    return reason < REFUSAL_N ? atomic_load(&rl->total[reason]) : 0;
}

/* Append to BUF at *AT, never past LEN (a truncated line stays terminated). */
static void put(char *buf, size_t len, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    if (*at >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (n > 0)
        *at = *at + (size_t)n < len ? *at + (size_t)n : len - 1;
}

int refusal_log_flush(struct refusal_log *rl, int64_t now_ms, int force, char *buf, size_t len)
{
    if (len == 0)
        return 0;
    buf[0] = 0;
    pthread_mutex_lock(&rl->lock);
    uint64_t any = 0;
    for (int r = 0; r < REFUSAL_N; r++)
        any += rl->count[r];
    if (!any && !rl->lines_dropped) {
        rl->start_ms = now_ms; /* a quiet interval: the next line covers from its first event on */
        pthread_mutex_unlock(&rl->lock);
        return 0;
    }
    if (!force && now_ms - rl->start_ms < rl->interval_ms) {
        pthread_mutex_unlock(&rl->lock);
        return 0;
    }
    size_t at = 0;
    put(buf, len, &at, "%s in the last %.1f s:", any ? "refused or closed" : "warnings",
        (double)(now_ms - rl->start_ms) / 1000.0);
    const char *sep = " ";
    for (int r = 0; r < REFUSAL_N; r++)
        if (rl->count[r]) {
            put(buf, len, &at, "%s%s %llu", sep, names[r], (unsigned long long)rl->count[r]);
            sep = ", ";
        }
    if (rl->n_addrs) {
        put(buf, len, &at, "; top addresses:");
        /* selection of the REFUSAL_LOG_TOP largest, in order; the table is small */
        int used[REFUSAL_LOG_ADDRS] = {0};
        unsigned shown = 0;
        uint64_t shown_n = 0, all_n = rl->others;
        for (unsigned i = 0; i < rl->n_addrs; i++)
            all_n += rl->addrs[i].n;
        for (; shown < REFUSAL_LOG_TOP && shown < rl->n_addrs; shown++) {
            unsigned best = 0;
            for (unsigned i = 1; i < rl->n_addrs; i++)
                if (!used[i] && (used[best] || rl->addrs[i].n > rl->addrs[best].n))
                    best = i;
            used[best] = 1;
            shown_n += rl->addrs[best].n;
            put(buf, len, &at, "%s %s %llu (", shown ? "," : "", rl->addrs[best].addr,
                (unsigned long long)rl->addrs[best].n);
            const char *rsep = "";
            for (int r = 0; r < REFUSAL_N; r++)
                if (rl->addrs[best].by[r]) {
                    put(buf, len, &at, "%s%s %llu", rsep, names[r], (unsigned long long)rl->addrs[best].by[r]);
                    rsep = ", ";
                }
            put(buf, len, &at, ")");
        }
        unsigned rest = rl->n_addrs - shown;
        if (rest || rl->others)
            put(buf, len, &at, " (+%u%s address%s, %llu)", rest, rl->others ? " or more" : "",
                rest == 1 && !rl->others ? "" : "es", (unsigned long long)(all_n - shown_n));
    }
    if (rl->lines_dropped)
        put(buf, len, &at, "%s %llu more warning line%s not written (the last: %s)", any ? ";" : "",
            (unsigned long long)rl->lines_dropped, rl->lines_dropped == 1 ? "" : "s", rl->last_dropped);
    rl->lines_dropped = 0;
    memset(rl->count, 0, sizeof rl->count);
    rl->n_addrs = 0;
    rl->others = 0;
    rl->start_ms = now_ms;
    pthread_mutex_unlock(&rl->lock);
    return 1;
}

void refusal_addr_format(const struct sockaddr *sa, socklen_t len, char *buf, size_t buflen)
{
    snprintf(buf, buflen, "?");
    if (!sa)
        return;
    if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)buflen);
    } else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a))
            inet_ntop(AF_INET, &a->s6_addr[12], buf, (socklen_t)buflen);
        else
            inet_ntop(AF_INET6, a, buf, (socklen_t)buflen);
    }
}
