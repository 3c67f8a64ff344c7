/* plan_text: see plan_text.h. */
#include "plan_text.h"

#include <net/if.h>

#include "escape.h"
#include "lossrate.h"
#include "offload.h"
#include "plan.h"
#include "store_choice.h"

static const char *if_warning(const char *dev)
{
    return if_nametoindex(dev) ? "" : " (warning: no such interface here)";
}

/* A path's delay and loss for the plan: "+10 ms and 1% loss per direction on eth0". */
static void print_path(FILE *out, uint64_t delay_us, uint32_t loss_ppm, const char *dev)
{
    char loss[16];
    lossrate_format(loss_ppm, loss, sizeof loss);
    if (delay_us)
        fprintf(out, "+%g ms", delay_us / 1000.0);
    if (loss_ppm)
        fprintf(out, "%s%s loss per direction", delay_us ? " and " : "", loss);
    fprintf(out, " on %s%s\n", dev, if_warning(dev));
}

/* one line PREFIX + entry, escaped, per entry of L */
static void print_list(FILE *out, const char *prefix, const struct curl_slist *l)
{
    for (; l; l = l->next) {
        fputs(prefix, out);
        escape_fputs(l->data, out);
        fputc('\n', out);
    }
}

/* -t: how each connection is made, one line per setting given (none: nothing printed);
 * values escaped, as everything debit prints that the user or a server chose */
static void print_connection(FILE *out, const struct dl_options *o)
{
    if (o->ip_version)
        fprintf(out, "connection: IPv%d only\n", o->ip_version);
    if (o->interface)
        fprintf(out, "connection: from interface %s\n", o->interface);
    if (o->local_address)
        fprintf(out, "connection: from address %s\n", o->local_address);
    if (o->connect_timeout_s > 0)
        fprintf(out, "connection: connect timeout %g s\n", o->connect_timeout_s);
    if (o->rcvbuf)
        fprintf(out, "connection: receive buffer %llu bytes (SO_RCVBUF)\n", (unsigned long long)o->rcvbuf);
    print_list(out, "connection: resolve ", o->resolve);
    print_list(out, "connection: connect-to ", o->connect_to);
    if (o->insecure)
        fprintf(out, "connection: TLS certificate not checked (-k)\n");
    if (o->cacert)
        fprintf(out, "connection: TLS trusts the CAs of %s\n", o->cacert);
    if (o->user_agent) {
        fprintf(out, "header: User-Agent: ");
        escape_fputs(o->user_agent, out);
        fprintf(out, "\n");
    }
    print_list(out, "header: ", o->headers);
    if (o->headers)
        fprintf(out, "connection: header lines %s\n", o->location_trusted ? "sent on after a redirect to another host (--location-trusted)"
                                                                    : "not sent after a redirect to another host");
}

/* Where the runs would be kept: "store: sqlite PATH (default)", "store: none (--db)",
 * and when the default folder cannot be written, why (the run would not keep them). */
static void print_store(FILE *out, const struct settings *s)
{
    struct store_choice c;
    char err[1024];
    if (store_choice_make(s, 0, &c, err, sizeof err) != 0) /* -t said so before the plan */
        return;
    fprintf(out, "store: %s", store_choice_kind(&c));
    if (c.spec.kind != STORE_NONE) {
        fputc(' ', out);
        escape_fputs(c.shown, out);
    }
    fprintf(out, " (%s", store_choice_source(&c));
    if (c.problem[0]) {
        fputs("; cannot be used: ", out);
        escape_fputs(c.problem, out);
        fputs(": runs would not be kept", out);
    }
    fputs(")\n", out);
}

void plan_text_print(FILE *out, const struct settings *s, const struct scenario *scn)
{
    fprintf(out, "debit: configuration OK%s%s\n", scn ? ": " : "", scn ? scn->path : "");
    for (size_t i = 0; i < s->nservers; i++)
        if (s->servers[i].upload)
            fprintf(out, "server %s: %s (upload %llu bytes)\n", s->servers[i].name, s->servers[i].url,
                   (unsigned long long)s->servers[i].upload);
        else
            fprintf(out, "server %s: %s\n", s->servers[i].name, s->servers[i].url);
    fprintf(out, "runs: %u per server%s, order %s, pause %g s", s->runs, scn ? " and cell" : "", plan_order_name(s->order),
           s->pause_s);
    if (s->dl.max_bytes)
        fprintf(out, ", max-bytes %llu", (unsigned long long)s->dl.max_bytes);
    if (s->dl.stall_s > 0)
        fprintf(out, ", stall %g s below %g B/s", s->dl.stall_s, s->dl.stall_rate_Bps);
    if (s->dl.max_time_s > 0)
        fprintf(out, ", max-time %g s", s->dl.max_time_s);
    else
        fprintf(out, ", no max-time");
    if (s->dl.parallel > 1)
        fprintf(out, ", parallel %u%s", s->dl.parallel, s->dl.split ? " split" : "");
    if (s->dl.upload)
        fprintf(out, ", upload %llu bytes by %s", (unsigned long long)s->dl.upload, s->dl.upload_put ? "PUT" : "POST");
    if (s->dl.duration_s > 0)
        fprintf(out, ", duration %g s", s->dl.duration_s);
    if (s->dl.interval_s > 0)
        fprintf(out, ", interval %g s", s->dl.interval_s);
    if (s->dl.min_bytes != DL_MIN_BYTES)
        fprintf(out, ", min-bytes %llu", (unsigned long long)s->dl.min_bytes);
    if (s->dl.bottleneck_bps > 0)
        fprintf(out, ", bottleneck %g Mb/s", s->dl.bottleneck_bps / 1e6);
    fprintf(out, "\n");
    size_t cells = 1;
    if (scn) {
        size_t nl = scn->nlat ? scn->nlat : 1, nv = scn->nvar ? scn->nvar : 1;
        cells = nl * nv;
        for (size_t i = 0; i < scn->nlat; i++) {
            const struct scenario_latency *l = &scn->lat[i];
            fprintf(out, "latency %s: ", l->name);
            if (l->delay_us || l->loss_ppm)
                print_path(out, l->delay_us, l->loss_ppm, l->device);
            else
                fprintf(out, "nothing added\n");
        }
        for (size_t i = 0; i < scn->nvar; i++) {
            const struct scenario_variant *v = &scn->var[i];
            char w[128] = "nothing changed";
            if (v->device)
                offload_wish_format(&v->wish, w, sizeof w);
            fprintf(out, "variant %s: %s%s%s%s\n", v->name, w, v->device ? " on " : "", v->device ? v->device : "",
                   v->device ? if_warning(v->device) : "");
        }
    }
    for (size_t i = 0; i < s->noffloads; i++) {
        char w[128];
        offload_wish_format(&s->offloads[i].wish, w, sizeof w);
        fprintf(out, "offload: %s on %s%s\n", w, s->offloads[i].ifname, if_warning(s->offloads[i].ifname));
    }
    if (s->delay_dev) {
        fprintf(out, "delay: ");
        print_path(out, s->delay_us, s->loss_ppm, s->delay_dev);
    }
    if (s->write_out)
        fprintf(out, "write-out: %s\n", s->write_out);
    print_store(out, s);
    print_connection(out, &s->dl);
    fprintf(out, "%s: %zu (%zu cell%s x %zu server%s x %u runs)\n", s->dl.upload ? "uploads" : "downloads",
           cells * s->nservers * s->runs, cells, cells == 1 ? "" : "s", s->nservers, s->nservers == 1 ? "" : "s",
           s->runs);
}

