/* metrics: bytes per file and listener, and the text rendering of every metric (see metrics.h). */
#include "metrics.h"

#include <stdatomic.h>
#include <stdlib.h>

struct metrics {
    size_t n_listeners, n_files;
    _Atomic uint64_t *bytes; /* [listener * n_files + file] */
    _Atomic uint64_t *verdicts; /* [listener * N_VERDICTS + enum verdict_kind] */
};

#define N_VERDICTS (VERDICT_UNKNOWN + 1)

struct metrics *metrics_new(size_t n_listeners, size_t n_files)
{
    struct metrics *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->n_listeners = n_listeners;
    m->n_files = n_files;
    size_t n = n_listeners * n_files;
    if ((n && !(m->bytes = calloc(n, sizeof *m->bytes))) ||
        (n_listeners && !(m->verdicts = calloc(n_listeners * N_VERDICTS, sizeof *m->verdicts)))) {
        metrics_free(m);
        return NULL;
    }
    return m;
}

void metrics_free(struct metrics *m)
{
    if (!m)
        return;
    free(m->bytes);
    free(m->verdicts);
    free(m);
}

void metrics_carry(struct metrics *to, const struct metrics *from, const size_t *file_from)
{
    for (size_t l = 0; l < to->n_listeners && l < from->n_listeners; l++)
        for (size_t k = 0; k < N_VERDICTS; k++)
            to->verdicts[l * N_VERDICTS + k] = from->verdicts[l * N_VERDICTS + k];
    for (size_t l = 0; l < to->n_listeners && l < from->n_listeners; l++)
        for (size_t f = 0; f < to->n_files; f++)
            if (file_from[f] < from->n_files)
                to->bytes[l * to->n_files + f] = from->bytes[l * from->n_files + file_from[f]];
}

void metrics_file_bytes(struct metrics *m, size_t listener, size_t file, uint64_t bytes)
{
    if (m && listener < m->n_listeners && file < m->n_files)
        m->bytes[listener * m->n_files + file] += bytes;
}

void metrics_verdict(struct metrics *m, size_t listener, enum verdict_kind kind)
{
    if (m && listener < m->n_listeners && (unsigned)kind < N_VERDICTS)
        m->verdicts[listener * N_VERDICTS + kind]++;
}

/* A label value as the exposition format wants it: \ " and newline escaped. */
static void label(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        if (*s == '\\' || *s == '"')
            fprintf(out, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", out);
        else
            fputc(*s, out);
    }
    fputc('"', out);
}

/* NAME{K1="V1",K2="V2",...} VALUE: KV holds N key/value pairs. */
static void sample(FILE *out, const char *name, const char *const *kv, size_t n, unsigned long long value)
{
    fputs(name, out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%c%s=", i ? ',' : '{', kv[2 * i]);
        label(out, kv[2 * i + 1]);
    }
    fprintf(out, "%s %llu\n", n ? "}" : "", value);
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
    fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void simple(FILE *out, const char *name, const char *type, const char *help, uint64_t v)
{
    family(out, name, type, help);
    fprintf(out, "%s %llu\n", name, (unsigned long long)v);
}

/* debitd_speedtest_*{protocol,endpoint}: one sample per row the view names */
static void speedtest_families(const struct counters *c, const struct metrics_view *v, FILE *out)
{
    static const struct {
        const char *name, *help;
    } st[] = {
        {"debitd_speedtest_requests_total", "Speed-test requests answered, by protocol and endpoint."},
        {"debitd_speedtest_bytes_total",
         "Speed-test body bytes sent (garbage, down, getip) or received (empty, up), by protocol and endpoint."},
        {"debitd_speedtest_refused_total",
         "Speed-test requests refused (speedtest.per_ip, speedtest.max_bytes, quota), by protocol and endpoint."},
    };
    size_t ns = v->n_speedtest < COUNTERS_SPEEDTEST_ROWS ? v->n_speedtest : COUNTERS_SPEEDTEST_ROWS;
    for (size_t k = 0; k < sizeof st / sizeof st[0]; k++) {
        const _Atomic uint64_t *n = k == 0 ? c->speedtest_tests : k == 1 ? c->speedtest_bytes : c->speedtest_refused;
        family(out, st[k].name, "counter", st[k].help);
        for (size_t i = 0; i < ns; i++)
            sample(out, st[k].name,
                   (const char *const[]){"protocol", v->speedtest_labels[2 * i], "endpoint",
                                         v->speedtest_labels[2 * i + 1]},
                   2, n[i]);
    }
}

/* what is running: version, uptime, configuration generation and reloads */
static void render_about(const struct metrics *m, const struct counters *c, const struct metrics_view *v, FILE *out)
{
    (void)c;
    (void)m;
    family(out, "debitd_build_info", "gauge", "Version of debitd, always 1.");
    sample(out, "debitd_build_info", (const char *const[]){"version", v->version}, 1, 1);
    family(out, "debitd_uptime_seconds", "gauge", "Seconds since debitd started.");
    fprintf(out, "debitd_uptime_seconds %.3f\n", v->uptime_s);
    simple(out, "debitd_config_generation", "gauge",
           "Configuration in force: 1 as started, +1 per reload applied (SIGHUP).", v->config_generation);
    family(out, "debitd_config_reloads_total", "counter", "Reloads (SIGHUP) by result: ok (applied) or refused.");
    sample(out, "debitd_config_reloads_total", (const char *const[]){"result", "ok"}, 1, v->reloads_ok);
    sample(out, "debitd_config_reloads_total", (const char *const[]){"result", "refused"}, 1, v->reloads_refused);
}

/* what was sent: bytes per file and listener, responses, durations, verdicts */
static void render_traffic(const struct metrics *m, const struct counters *c, const struct metrics_view *v, FILE *out)
{
    family(out, "debitd_sent_bytes_total", "counter",
           "Bytes of test-file bodies sent, by file and listener (for an aborted transfer: what the peer acknowledged).");
    size_t nl = m->n_listeners < v->n_listeners ? m->n_listeners : v->n_listeners;
    size_t nf = m->n_files < v->n_files ? m->n_files : v->n_files;
    for (size_t l = 0; l < nl; l++)
        for (size_t f = 0; f < nf; f++)
            sample(out, "debitd_sent_bytes_total", (const char *const[]){"file", v->files[f], "listener", v->listeners[l]},
                   2, m->bytes[l * m->n_files + f]);

    family(out, "debitd_responses_total", "counter", "HTTP responses sent, by status class.");
    for (unsigned k = 1; k <= 5; k++)
        fprintf(out, "debitd_responses_total{code=\"%uxx\"} %llu\n", k, (unsigned long long)counters_responses(c, k));

    family(out, "debitd_transfer_duration_seconds", "histogram",
           "Duration of test-file and speed-test downloads, from the response to the end of the request.");
    uint64_t cum = 0;
    for (size_t b = 0; b < COUNTERS_N_BUCKETS; b++) {
        cum += c->transfer_buckets[b];
        fprintf(out, "debitd_transfer_duration_seconds_bucket{le=\"%g\"} %llu\n", counters_bucket_le[b],
                (unsigned long long)cum);
    }
    cum += c->transfer_buckets[COUNTERS_N_BUCKETS];
    fprintf(out, "debitd_transfer_duration_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
    fprintf(out, "debitd_transfer_duration_seconds_sum %.9f\n", (double)c->transfer_ns / 1e9);
    /* the count is the +Inf bucket, as the format requires, even while a transfer is counted */
    fprintf(out, "debitd_transfer_duration_seconds_count %llu\n", (unsigned long long)cum);

    family(out, "debitd_transfers_total", "counter",
           "Test-file transfers ended, by listener and what limited each (debitd's own verdict, docs/verdict.md).");
    for (size_t l = 0; l < nl; l++)
        for (int k = 0; k < N_VERDICTS; k++)
            sample(out, "debitd_transfers_total",
                   (const char *const[]){"listener", v->listeners[l], "limited_by", verdict_name((enum verdict_kind)k)}, 2,
                   m->verdicts[l * N_VERDICTS + k]);
}

/* connections, uploads and the speed-test protocols */
static void render_activity(const struct metrics *m, const struct counters *c, const struct metrics_view *v, FILE *out)
{
    (void)m;
    simple(out, "debitd_connections_total", "counter", "TCP connections accepted.", c->connections);
    simple(out, "debitd_active_connections", "gauge", "TCP connections open now.", c->active);
    simple(out, "debitd_uploads_total", "counter", "Upload requests received.", c->uploads);
    simple(out, "debitd_upload_bytes_total", "counter", "Request body bytes received by the upload sink.",
           c->upload_bytes);
    family(out, "debitd_ndt7_tests_total", "counter", "ndt7 tests ended, by direction and outcome.");
    static const char *const dir[] = {"download", "upload"}, *const res[] = {"aborted", "done"};
    for (size_t d = 0; d < 2; d++)
        for (size_t k = 0; k < 2; k++)
            sample(out, "debitd_ndt7_tests_total", (const char *const[]){"direction", dir[d], "result", res[k]}, 2,
                   c->ndt7_tests[d][k]);
    family(out, "debitd_ndt7_bytes_total", "counter", "ndt7 payload bytes: sent by downloads, received by uploads.");
    for (size_t d = 0; d < 2; d++)
        sample(out, "debitd_ndt7_bytes_total", (const char *const[]){"direction", dir[d]}, 1, c->ndt7_bytes[d]);

    speedtest_families(c, v, out);
}

/* what the guards refused, and the per-address quota's table */
static void render_limits(const struct metrics *m, const struct counters *c, const struct metrics_view *v, FILE *out)
{
    (void)m;
    family(out, "debitd_refusals_total", "counter", "Connections closed or refused, by reason.");
    for (size_t r = 0; r < v->n_refusals; r++)
        sample(out, "debitd_refusals_total", (const char *const[]){"reason", v->refusal_names[r]}, 1, v->refusals[r]);

    simple(out, "debitd_quota_refused_total", "counter",
           "Requests refused with 429 by the per-address quota (limits.per_ip_bytes).", c->quota_refused);
    simple(out, "debitd_quota_entries", "gauge",
           "Addresses the per-address quota tracks now (some may have aged out, not yet dropped).", v->quota_entries);
    simple(out, "debitd_quota_table_size", "gauge",
           "Addresses the per-address quota tracks at most (limits.per_ip_table).", v->quota_capacity);
    simple(out, "debitd_quota_overflow_total", "counter",
           "New addresses that found the quota table full and took over its least-used entry, with its use.",
           v->quota_overflow);
}

/* each listener's interface offloads, TCP profile and acceptor */
static void render_listeners(const struct metrics *m, const struct counters *c, const struct metrics_view *v, FILE *out)
{
    (void)c;
    (void)m;
    family(out, "debitd_offload_enabled", "gauge",
           "Live offload state of each interface the listeners serve through (1 on, 0 off).");
    for (size_t i = 0; i < v->n_offload; i++)
        sample(out, "debitd_offload_enabled",
               (const char *const[]){"interface", v->offload[i].interface, "feature", v->offload[i].feature}, 2,
               v->offload[i].on ? 1 : 0);

    family(out, "debitd_tcp_profile_info", "gauge", "TCP profile of each listener, always 1.");
    for (size_t i = 0; i < v->n_tcp; i++) {
        const struct metrics_tcp *t = &v->tcp[i];
        sample(out, "debitd_tcp_profile_info",
               (const char *const[]){"listener", t->listener, "cc", t->cc, "pacing", t->pacing, "sndbuf", t->sndbuf,
                                     "notsent_lowat", t->notsent_lowat},
               5, 1);
    }

    /* the acceptor's view, per listener: what was accepted, and why connections waited */
    family(out, "debitd_accepted_connections_total", "counter",
           "Connections a listener accepted, by result: handed to a worker, or refused by the accept policy "
           "(limits.per_ip).");
    for (size_t i = 0; i < v->n_accept; i++) {
        const struct metrics_accept *a = &v->accept[i];
        sample(out, "debitd_accepted_connections_total",
               (const char *const[]){"listener", a->listener, "result", "handed"}, 2, a->handed);
        sample(out, "debitd_accepted_connections_total",
               (const char *const[]){"listener", a->listener, "result", "refused"}, 2, a->refused);
    }
    family(out, "debitd_listener_connections", "gauge", "Connections of a listener open now (handed, not yet closed).");
    for (size_t i = 0; i < v->n_accept; i++)
        sample(out, "debitd_listener_connections", (const char *const[]){"listener", v->accept[i].listener}, 1,
               v->accept[i].open);
    family(out, "debitd_accept_paused_total", "counter",
           "Times a listener stopped accepting with limits.connections open (new ones wait in the backlog).");
    for (size_t i = 0; i < v->n_accept; i++)
        sample(out, "debitd_accept_paused_total", (const char *const[]){"listener", v->accept[i].listener}, 1,
               v->accept[i].paused);
    family(out, "debitd_accept_errors_total", "counter",
           "accept() failures of a listener other than nothing to accept (EMFILE, ENFILE, ENOBUFS, ...).");
    for (size_t i = 0; i < v->n_accept; i++)
        sample(out, "debitd_accept_errors_total", (const char *const[]){"listener", v->accept[i].listener}, 1,
               v->accept[i].errors);
}

/* debitd's cgroup CPU budget */
static void render_cpu(const struct metrics *m, const struct counters *c, const struct metrics_view *v, FILE *out)
{
    (void)c;
    (void)m;
    family(out, "debitd_cpu_quota_ratio", "gauge",
           "CPU quota of debitd's cgroup in CPUs (0.05 = 5% of one CPU); no sample without a quota.");
    if (v->cpu_quota_ratio > 0)
        fprintf(out, "debitd_cpu_quota_ratio %.6g\n", v->cpu_quota_ratio);
    family(out, "debitd_cpu_throttled_seconds_total", "counter",
           "Time debitd's cgroup was throttled by its CPU quota (cpu.stat); no sample without a cpu controller.");
    if (v->have_cpu_stat)
        fprintf(out, "debitd_cpu_throttled_seconds_total %.6f\n", v->cpu_throttled_s);
    family(out, "debitd_cpu_throttled_periods_total", "counter",
           "Enforcement periods in which debitd's cgroup was throttled (cpu.stat nr_throttled).");
    if (v->have_cpu_stat)
        fprintf(out, "debitd_cpu_throttled_periods_total %llu\n", (unsigned long long)v->cpu_nr_throttled);
}

int metrics_render(const struct metrics *m, const struct counters *c, const struct metrics_view *v, FILE *out)
{
    render_about(m, c, v, out);
    render_traffic(m, c, v, out);
    render_activity(m, c, v, out);
    render_limits(m, c, v, out);
    render_listeners(m, c, v, out);
    render_cpu(m, c, v, out);
    return ferror(out) ? -1 : 0;
}
