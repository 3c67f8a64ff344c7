/* http_telemetry: LibreSpeed's telemetry (librespeed/speedtest 04cdce6 results/telemetry.php
 * and results/json.php; speedtest-go's results/telemetry): the web client, when its
 * telemetry_level is not "disabled", POSTs its result as a form (FormData: multipart, or
 * urlencoded when FormData fails) with ispinfo, dl, ul, ping, jitter, log, extra. The form
 * is read by libmicrohttpd's post processor; the result is kept in the telemetry ring
 * (telemetry.h) with the client's address, User-Agent and Accept-Language, and answered
 * "id N", which the client shows as its result's link. results/json.php?id=N gives it back
 * as the PHP does, to the address that sent it (privacy.public_transfers: to anyone). */
#include "http_telemetry.h"

#include <stdlib.h>
#include <string.h>

#include "http_conn.h"
#include "http_peer.h"
#include "http_speedtest.h"

#include "speedtest.h"
#include "sys.h"
#include "telemetry.h"
#include "units.h"

/* The form's fields (telemetry_report's order: ip, ua and lang are the request's). */
static const char *const form_names[] = {NULL, "ispinfo", "extra", NULL, NULL, "dl", "ul", "ping", "jitter", "log"};

struct telemetry_form {
    struct MHD_PostProcessor *pp;
    char *f[TELEMETRY_N_FIELDS];
    size_t n[TELEMETRY_N_FIELDS];
    int failed;    /* out of memory */
    int malformed; /* the post processor refused the body: 400 at its end */
};

void http_telemetry_form_free(struct telemetry_form *f)
{
    if (!f)
        return;
    if (f->pp)
        MHD_destroy_post_processor(f->pp);
    for (int i = 0; i < TELEMETRY_N_FIELDS; i++)
        free(f->f[i]);
    free(f);
}

/* libmicrohttpd's post-processor callback: a piece of a field's value at OFF (the body as a whole
 * is capped by TELEMETRY_MAX_BODY, so the fields are too). Other fields are ignored, as
 * PHP's $_POST keeps them unread. */
static enum MHD_Result form_field(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                                  const char *content_type, const char *transfer_encoding, const char *data,
                                  uint64_t off, size_t size)
{
    (void)kind, (void)filename, (void)content_type, (void)transfer_encoding;
    struct telemetry_form *f = cls;
    for (int i = 0; i < TELEMETRY_N_FIELDS; i++) {
        if (!form_names[i] || !key || strcmp(key, form_names[i]) != 0)
            continue;
        if (off == 0) /* a value's first piece: a repeated name keeps the last, as PHP's $_POST */
            f->n[i] = 0;
        char *p = realloc(f->f[i], f->n[i] + size + 1);
        if (!p) {
            f->failed = 1;
            return MHD_NO;
        }
        memcpy(p + f->n[i], data, size);
        f->n[i] += size;
        p[f->n[i]] = 0;
        f->f[i] = p;
    }
    return MHD_YES;
}

/* telemetry.php answers without CORS; the client's multi-server mode adds cors=true */
static enum MHD_Result text(struct listener *l, struct MHD_Connection *conn, struct req *r, unsigned status,
                            const char *body, const char *name, const char *value)
{
    return http_speedtest_answer(l, conn, r, SPEEDTEST_TELEMETRY, status, body, strlen(body),
                                 "text/plain; charset=utf-8", name, value);
}

/* The first call: telemetry off (speedtest-go's answer), a body announced too large (413,
 * before it is sent), not a form (415); else the form is read. */
static enum MHD_Result post_begin(struct listener *l, struct MHD_Connection *conn, struct req *r)
{
    r->speed = SPEEDTEST_TELEMETRY;
    if (l->srv->snap->cfg->speedtest.telemetry == CONFIG_TELEMETRY_OFF)
        return text(l, conn, r, 200, "Telemetry is disabled", MHD_HTTP_HEADER_CONNECTION, "close");
    uint64_t cl = 0;
    const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (v && units_parse_uint(v, 0, UINT64_MAX, &cl) == UNITS_OK && cl > TELEMETRY_MAX_BODY)
        return text(l, conn, r, 413, "413 Content Too Large: a telemetry report is at most 1 MiB\n",
                    MHD_HTTP_HEADER_CONNECTION, "close");
    struct telemetry_form *f = calloc(1, sizeof *f);
    if (!f)
        return MHD_NO;
    f->pp = MHD_create_post_processor(conn, 16384, form_field, f);
    if (!f->pp) { /* no form Content-Type: PHP's $_POST would be empty */
        free(f);
        return text(l, conn, r, 415,
                    "415 Unsupported Media Type: expected multipart/form-data or application/x-www-form-urlencoded\n",
                    MHD_HTTP_HEADER_CONNECTION, "close");
    }
    r->form = f;
    r->kind = REQ_TELEMETRY;
    return MHD_YES;
}

/* The form's end: the result kept, "id N" (telemetry.php's answer). */
static enum MHD_Result post_end(struct listener *l, struct MHD_Connection *conn, struct req *r)
{
    struct telemetry_form *f = r->form;
    struct http_client scratch;
    const struct http_client *who = http_conn_client(conn, &scratch);
    const char *ip = who->addr;
    if (strncmp(ip, "::ffff:", 7) == 0 && strchr(ip, '.')) /* getClientIp()'s */
        ip += 7;
    struct telemetry_report rep = {
        .ip = ip, .ispinfo = f->f[1], .extra = f->f[2],
        .ua = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_USER_AGENT),
        .lang = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_LANGUAGE),
        .dl = f->f[5], .ul = f->f[6], .ping = f->f[7], .jitter = f->f[8], .log = f->f[9],
    };
    if (f->malformed)
        return text(l, conn, r, 400, "400 Bad Request: the form cannot be read\n", NULL, NULL);
    /* kept as JSON text: a field that is not UTF-8 cannot be given back */
    const char *const field[TELEMETRY_N_FIELDS] = {rep.ip, rep.ispinfo, rep.extra, rep.ua,   rep.lang,
                                                   rep.dl, rep.ul,      rep.ping,  rep.jitter, rep.log};
    for (int i = 0; i < TELEMETRY_N_FIELDS; i++) {
        json_t *t = field[i] ? json_string(field[i]) : NULL;
        if (field[i] && !t)
            return text(l, conn, r, 400, "400 Bad Request: a field is not UTF-8 text\n", NULL, NULL);
        json_decref(t);
    }
    struct peer owner;
    int have_owner = http_peer(conn, &owner) == 0;
    int redact = l->srv->snap->cfg->speedtest.telemetry == CONFIG_TELEMETRY_REDACTED;
    uint64_t id = f->failed ? 0 : telemetry_add(l->srv->telemetry, &rep, have_owner ? &owner : NULL,
                                                 sys_wall_s(), redact);
    if (!id)
        return text(l, conn, r, 503, "503 Service Unavailable: the result could not be kept\n",
                    MHD_HTTP_HEADER_RETRY_AFTER, "1");
    r->telemetry = telemetry_get(l->srv->telemetry, id, NULL); /* for the access log */
    char body[32];
    snprintf(body, sizeof body, "id %llu", (unsigned long long)id);
    return text(l, conn, r, 200, body, NULL, NULL);
}

enum MHD_Result http_telemetry_post(struct listener *l, struct MHD_Connection *conn, struct req *r,
                                    const char *upload_data, size_t *upload_data_size)
{
    if (r->kind != REQ_TELEMETRY)
        return post_begin(l, conn, r);
    if (!*upload_data_size)
        return post_end(l, conn, r);
    r->up_bytes += *upload_data_size;
    /* a chunked body past the cap: cut (no answer can be queued in the middle of it) */
    if (r->up_bytes > TELEMETRY_MAX_BODY)
        return MHD_NO;
    struct telemetry_form *f = r->form;
    if (!f->malformed && MHD_post_process(f->pp, upload_data, *upload_data_size) != MHD_YES)
        f->malformed = !f->failed;
    *upload_data_size = 0;
    return f->failed ? MHD_NO : MHD_YES; /* malformed: read to its end, then 400 */
}

enum MHD_Result http_telemetry_results(struct listener *l, struct MHD_Connection *conn, struct req *r)
{
    r->speed = SPEEDTEST_RESULTS;
    const char *q = r->log_target ? strchr(r->log_target, '?') : NULL;
    struct speedtest_query sq;
    speedtest_query_parse(q ? q + 1 : "", &sq);
    struct peer reader;
    int anyone = l->srv->snap->cfg->public_transfers;
    json_t *row = NULL;
    if (anyone || http_peer(conn, &reader) == 0)
        row = telemetry_get(l->srv->telemetry, sq.id, anyone ? NULL : &reader);
    /* json.php: "{}" for an unknown ID; here also for another address's */
    char *body = row ? http_php_json(telemetry_public_json(row)) : strdup("{}");
    json_decref(row);
    if (!body)
        return MHD_NO;
    enum MHD_Result res = http_speedtest_answer(l, conn, r, SPEEDTEST_RESULTS, 200, body, strlen(body),
                                                "application/json; charset=utf-8", NULL, NULL);
    free(body);
    return res;
}
