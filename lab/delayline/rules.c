#include "rules.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"

/* Run argv (PATH lookup), capture up to outlen-1 bytes of stdout+stderr. Returns the exit
 * status (0..255), or -1 if it could not run (out says why). */
static int run_cmd(char *const argv[], char *out, size_t outlen)
{
    int pfd[2];
    if (outlen) out[0] = '\0';
    if (pipe2(pfd, O_CLOEXEC) < 0) { snprintf(out, outlen, "pipe: %s", strerror(errno)); return -1; }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(out, outlen, "fork: %s", strerror(errno));
        close(pfd[0]); close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[0], argv);
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    size_t used = 0;
    char sink[512];
    for (;;) {
        ssize_t n;
        if (used + 1 < outlen) n = read(pfd[0], out + used, outlen - 1 - used);
        else n = read(pfd[0], sink, sizeof sink);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (used + 1 < outlen) used += (size_t)n;
    }
    if (outlen) out[used] = '\0';
    close(pfd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) { snprintf(out, outlen, "waitpid: %s", strerror(errno)); return -1; }
    }
    /* iptables ends its messages with a newline; keep err buffers on one line. */
    for (char *p = out; outlen && *p; p++) if (*p == '\n') *p = (p[1] ? ' ' : '\0');
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int rule_cmd(const struct rules *r, const char *bin, char op, enum rules_dir dir,
                    char *out, size_t outlen)
{
    char qnum[16], comment[48], opt[3] = { '-', op, '\0' };
    snprintf(qnum, sizeof qnum, "%u", r->queue_num);
    snprintf(comment, sizeof comment, "debit-delayline:q%u", r->queue_num);
    char *argv[] = {
        (char *)bin, "-w", "5", "-t", "mangle", opt,
        dir == RULES_DIR_IN ? "PREROUTING" : "POSTROUTING",
        dir == RULES_DIR_IN ? "-i" : "-o", (char *)r->dev,
        "-m", "comment", "--comment", comment,
        "-j", "NFQUEUE", "--queue-num", qnum, "--queue-bypass", NULL,
    };
    return run_cmd(argv, out, outlen);
}

int rules_install(struct rules *r, char *warn, size_t warnlen, char *err, size_t errlen)
{
    char out[512];
    if (warn && warnlen) warn[0] = '\0';
    for (int fam = 0; fam < 2; fam++) {
        const char *bin = fam ? r->ip6tables : r->iptables;
        if (!bin) continue;
        for (int d = RULES_DIR_IN; d <= RULES_DIR_OUT; d <<= 1) {
            if (!(r->dir & d)) continue;
            int rc = rule_cmd(r, bin, 'A', (enum rules_dir)d, out, sizeof out);
            if (rc == 0) { r->installed |= d << (fam * 2); continue; }
            if (fam == 1) {
                if (warn) snprintf(warn, warnlen, "%s: IPv6 packets will not be delayed: %s", bin, out);
                break;
            }
            char ignored[256];
            rules_remove(r, ignored, sizeof ignored);
            err_set(err, errlen, "%s -t mangle -A %s ... -j NFQUEUE failed (exit %d): %s", bin,
                     d == RULES_DIR_IN ? "PREROUTING" : "POSTROUTING", rc, out);
            return -1;
        }
    }
    return 0;
}

int rules_remove(struct rules *r, char *err, size_t errlen)
{
    char out[512];
    int ret = 0;
    if (err && errlen) err[0] = '\0';
    for (int fam = 0; fam < 2; fam++) {
        const char *bin = fam ? r->ip6tables : r->iptables;
        for (int d = RULES_DIR_IN; d <= RULES_DIR_OUT; d <<= 1) {
            int bit = d << (fam * 2);
            if (!(r->installed & bit)) continue;
            int rc = rule_cmd(r, bin, 'D', (enum rules_dir)d, out, sizeof out);
            if (rc == 0) { r->installed &= ~bit; continue; }
            ret = -1;
            err_set(err, errlen, "%s -t mangle -D %s failed (exit %d): %s", bin,
                              d == RULES_DIR_IN ? "PREROUTING" : "POSTROUTING", rc, out);
        }
    }
    return ret;
}

/* Delete tagged rules found in `BIN -t mangle -S`; each line is "-A CHAIN ...", replayed
 * with -D. The line is split on spaces; iptables prints the comment quoted only when it
 * has spaces, and ours has none. */
static int cleanup_one(const char *bin, unsigned queue_num, char *err, size_t errlen)
{
    char listing[16384], tag[48];
    snprintf(tag, sizeof tag, "debit-delayline:q%u", queue_num);
    char *list_argv[] = { (char *)bin, "-w", "5", "-t", "mangle", "-S", NULL };
    /* run_cmd turned the listing's newlines into spaces: split it again on " -A ". */
    int rc = run_cmd(list_argv, listing, sizeof listing);
    if (rc != 0) { err_set(err, errlen, "%s -t mangle -S failed: %s", bin, listing); return -1; }
    int removed = 0;
    char *p = listing;
    while ((p = strstr(p, "-A ")) != NULL) {
        char *end = strstr(p + 3, " -A ");
        char *next = end ? end + 1 : p + strlen(p);
        size_t len = (size_t)(next - p);
        char rule[1024];
        if (len >= sizeof rule) { p = next; continue; }
        memcpy(rule, p, len);
        rule[len] = '\0';
        p = next;
        /* The tag must end there (q7 is not q70); iptables may quote the comment. */
        char *hit = strstr(rule, tag);
        if (!hit) continue;
        char after = hit[strlen(tag)];
        if (after != '"' && after != ' ' && after != '\0') continue;
        char *argv[64];
        int n = 0;
        argv[n++] = (char *)bin; argv[n++] = "-w"; argv[n++] = "5";
        argv[n++] = "-t"; argv[n++] = "mangle";
        char *save = NULL;
        for (char *tok = strtok_r(rule, " ", &save); tok && n < 62; tok = strtok_r(NULL, " ", &save)) {
            if (n == 5 && strcmp(tok, "-A") == 0) tok = "-D";
            size_t tl = strlen(tok);
            if (tl >= 2 && tok[0] == '"' && tok[tl - 1] == '"') { tok[tl - 1] = '\0'; tok++; }
            argv[n++] = tok;
        }
        argv[n] = NULL;
        char out[512];
        if (run_cmd(argv, out, sizeof out) == 0) removed++;
        else { err_set(err, errlen, "%s: could not delete a leftover rule: %s", bin, out); return -1; }
    }
    return removed;
}

int rules_cleanup(const char *iptables, const char *ip6tables, unsigned queue_num, char *err, size_t errlen)
{
    int total = 0;
    const char *bins[2] = { iptables, ip6tables };
    for (int i = 0; i < 2; i++) {
        if (!bins[i]) continue;
        int n = cleanup_one(bins[i], queue_num, err, errlen);
        if (n < 0) {
            if (i == 1) continue; /* no IPv6 tables here: nothing of ours there either */
            return -1;
        }
        total += n;
    }
    return total;
}
