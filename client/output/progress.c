/* progress: see progress.h. */
#include "progress.h"

#include <math.h>
#include <stdio.h>

#include "escape.h"
#include "units.h"

/* The line for p into buf, without the "\r" and erase that draw it in place. */
static void format_line(const struct progress *pr, const struct dl_progress *p, char *buf, size_t len)
{
    char rate[32], pct[16] = "", eta[32] = "";
    units_format_mbps(p->rate_mbps, rate, sizeof rate);
    if (p->expected > 0) {
        double f = (double)p->bytes / (double)p->expected;
        snprintf(pct, sizeof pct, " %3.0f%%", f * 100);
        if (p->rate_mbps > 0 && p->bytes < (uint64_t)p->expected) {
            double left = (double)((uint64_t)p->expected - p->bytes) * 8 / (p->rate_mbps * 1e6);
            if (left < 3600)
                snprintf(eta, sizeof eta, "  ETA %.0fs", ceil(left));
        }
    } else {
        snprintf(pct, sizeof pct, " %6.1f MiB", (double)p->bytes / 1048576.0);
    }
    /* Names from the command line or a scenario file: escaped as every text that is not
     * debit's own (escape.h), here where a CR would break the line drawn in place. */
    char cell[128], server[128];
    escape_text(cell, sizeof cell, pr->cell);
    escape_text(server, sizeof server, pr->server);
    snprintf(buf, len, "[run %zu/%zu]%s%s %s%s %s Mb/s%s", pr->step, pr->total, pr->cell ? " " : "", cell, server,
             pct, rate, eta);
}

void progress_draw(const struct dl_progress *p, void *ud)
{
    struct progress *pr = ud;
    if (!pr || !pr->enabled)
        return;
    char line[512];
    format_line(pr, p, line, sizeof line);
    fprintf(pr->out, "\r\033[K%s", line);
    fflush(pr->out);
    pr->drawn = 1;
}

void progress_clear(struct progress *pr)
{
    if (pr && pr->drawn) {
        fputs("\r\033[K", pr->out);
        fflush(pr->out);
        pr->drawn = 0;
    }
}
