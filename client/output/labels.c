/* labels: see labels.h. */
#include "labels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"
#include "wire.h"

int labels_same(const char *a, const char *b)
{
    return (!a || !b) ? a == b : strcmp(a, b) == 0;
}

static const char *label_of(const struct server_summary *g, enum labels_axis axis)
{
    switch (axis) {
    case LABELS_SCENARIO: return g->scenario;
    case LABELS_VARIANT: return g->variant;
    case LABELS_SERVER: break;
    }
    return g->server;
}

size_t labels_distinct(const struct summary *s, enum labels_axis axis, const char **vals, size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k < s->n && n < max; k++) {
        const char *v = label_of(&s->rows[k], axis);
        size_t i = 0;
        while (i < n && !labels_same(vals[i], v))
            i++;
        if (i == n)
            vals[n++] = v;
    }
    return n;
}

size_t labels_index(const char *const *vals, size_t n, const char *v)
{
    for (size_t i = 0; i < n; i++)
        if (labels_same(vals[i], v))
            return i;
    return 0;
}

const struct server_summary *labels_find(const struct summary *s, const char *scenario, const char *variant,
                                         const char *server)
{
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *g = &s->rows[k];
        if (labels_same(g->scenario, scenario) && labels_same(g->variant, variant) && labels_same(g->server, server))
            return g;
    }
    return NULL;
}

static const char *config_header(const struct run_result *r, const char *name)
{
    return r->server_config ? json_string_value(json_object_get(r->server_config, name)) : NULL;
}

/* The value of "KEY=VALUE" in a header of space- or ';'-separated fields, into out. */
static int header_field(const char *h, const char *key, char *out, size_t len)
{
    size_t kl = strlen(key);
    for (const char *p = h; p && *p; p++) {
        if ((p == h || p[-1] == ' ' || p[-1] == ';') && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            p += kl + 1;
            size_t n = strcspn(p, " ;");
            snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), p);
            return 1;
        }
    }
    return 0;
}

static void title_add(char *buf, size_t len, int *first, const char *what)
{
    size_t n = strlen(buf);
    if (n + 1 < len)
        snprintf(buf + n, len - n, "%s%s", *first ? " (" : ", ", what);
    *first = 0;
}

const char *labels_server_title(const struct result_set *rs, const struct report_meta *m, const char *server,
                                char *buf, size_t len)
{
    const char *off = NULL, *cpu = NULL, *tcp = NULL;
    for (size_t i = 0; rs && i < rs->n && !off && !cpu && !tcp; i++)
        if (labels_same(rs->runs[i]->server, server)) {
            off = config_header(rs->runs[i], WIRE_HDR_OFFLOAD);
            cpu = config_header(rs->runs[i], WIRE_HDR_CPU);
            tcp = config_header(rs->runs[i], WIRE_HDR_TCP);
        }
    const char *host = NULL;
    for (size_t i = 0; m && i < m->nserver_notes; i++)
        if (labels_same(m->server_notes[i].server, server))
            host = m->server_notes[i].host;
    int first = 1;
    char t[64], g[64], what[160];
    snprintf(buf, len, "%s", server ? server : "");
    if (off && header_field(off, "tso", t, sizeof t) && header_field(off, "gso", g, sizeof g)) {
        if (strcmp(t, g) == 0)
            snprintf(what, sizeof what, "TSO/GSO %s", t);
        else
            snprintf(what, sizeof what, "TSO %s, GSO %s", t, g);
        title_add(buf, len, &first, what);
    }
    int cpu_reported = 0;
    if (cpu && header_field(cpu, "quota", t, sizeof t) && strchr(t, '%')) {
        snprintf(what, sizeof what, "cpu %s", t);
        title_add(buf, len, &first, what);
        cpu_reported = 1;
    }
    if (tcp && header_field(tcp, "sndbuf", t, sizeof t) && strcmp(t, "auto") != 0) {
        char *end;
        unsigned long long b = strtoull(t, &end, 10);
        char sz[32];
        if (*end == 0 && b > 0)
            units_format_size(b, sz, sizeof sz);
        snprintf(what, sizeof what, "sndbuf %s", *end == 0 && b > 0 ? sz : t);
        title_add(buf, len, &first, what);
    }
    /* The lab's host settings, one by one: its cpu is skipped when the server said it. */
    char h[256];
    snprintf(h, sizeof h, "%s", host ? host : "");
    char *save = NULL;
    for (char *p = strtok_r(h, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        while (*p == ' ')
            p++;
        if (*p && !(cpu_reported && strncmp(p, "cpu ", 4) == 0))
            title_add(buf, len, &first, p);
    }
    if (!first && strlen(buf) + 1 < len)
        strcat(buf, ")");
    return buf;
}
