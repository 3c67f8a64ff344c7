/* debit-delayline: add a constant delay to a network device's packets on kernels without
 * sch_netem. Installs iptables NFQUEUE rules (mangle PREROUTING -i DEV for incoming,
 * POSTROUTING -o DEV for outgoing, both with --queue-bypass so traffic flows undelayed if
 * this program dies), drops each packet with the --loss probability (drop.h), holds the
 * others for the delay, releases in arrival order, removes its rules on
 * SIGINT/SIGTERM/SIGHUP and on every error path. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cliopt.h"
#include "drop.h"
#include "hold.h"
#include "log.h"
#include "lossrate.h"
#include "queue.h"
#include "rules.h"
#include "wire.h"

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) { stop_flag = sig; }

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: debit-delayline --dev DEV --delay DURATION [OPTIONS]\n"
        "       debit-delayline --cleanup [--queue-num N]\n"
        "Hold every packet crossing DEV for DURATION (NFQUEUE), like `netem delay` where the\n"
        "kernel has no sch_netem. Runs until SIGINT/SIGTERM, then removes its iptables rules.\n"
        "\n"
        "  -d, --dev DEV          network device (required)\n"
        "  -D, --delay DURATION   one-way hold per packet: 10ms, 500us, 0.03s (required;\n"
        "                         0 with --loss: loss only)\n"
        "      --loss RATE        drop each packet with this probability, 0%%..100%% (e.g.\n"
        "                         1%%, 0.5%%), independently, in each direction of\n"
        "                         --direction (netem's loss); GSO/GRO packets are then\n"
        "                         queued as segments, so the rate is per wire packet\n"
        "      --packet-cost NS   spend NS nanoseconds of CPU per packet read (decimals\n"
        "                         allowed; a GSO packet counts once), spun on this\n"
        "                         program's own CPU clock: under a CPU quota on its\n"
        "                         cgroup, a slow host's packets-per-second ceiling\n"
        "                         (--delay may then be 0; use with --no-realtime)\n"
        "      --byte-cost NS     and NS nanoseconds per byte of each packet's length\n"
        "      --segments         queue GSO/GRO packets as their wire segments (each pays\n"
        "                         --packet-cost): for a device that does not segment\n"
        "      --seed N           seed of the drop decisions (default: from the clock; the\n"
        "                         ready and stats lines print it, to replay a run)\n"
        "      --direction DIR    in | out | both (default both: the round trip grows by\n"
        "                         2 x DURATION; use in or out for +DURATION)\n"
        "  -Q, --queue-num N      NFQUEUE number, 0..65535 (default 7301)\n"
        "      --queue-maxlen N   packets the kernel may hold (default 65536)\n"
        "      --fail-open        accept (undelayed) what overflows the queue instead of\n"
        "                         dropping it, as netem drops past its limit\n"
        "      --iptables CMD     iptables command (default iptables; the netns must not mix\n"
        "                         iptables-nft and iptables-legacy)\n"
        "      --ip6tables CMD    ip6tables command (default ip6tables)\n"
        "      --no-ipv6          leave IPv6 alone\n"
        "      --exit-with-parent stop (cleanly) when the parent process dies\n"
        "      --no-realtime      stay at normal priority (default: SCHED_FIFO 10, so that\n"
        "                         releases are on time on a busy machine)\n"
        "      --cleanup          remove rules left by a killed instance of --queue-num, exit\n"
        "  -q, --quiet            only errors on stderr\n"
        "  -v, --verbose          debug messages\n"
        "  -h, --help, -V, --version\n"
        "\n"
        "stdout: one line \"" WIRE_DELAY_READY " ...\" once packets are being delayed, and\n"
        "one line \"debit-delayline: stats ...\" at exit. Exit: 0 ok, 1 runtime error, 2 usage.\n");
}

int main(int argc, char **argv)
{
    enum { O_DIR = 256, O_MAXLEN, O_FAILOPEN, O_IPT, O_IP6T, O_NOV6, O_PARENT, O_CLEANUP, O_NORT, O_LOSS, O_SEED, O_PCOST, O_BCOST, O_SEGS };
    static const struct option opts[] = {
        { "dev", required_argument, NULL, 'd' },
        { "delay", required_argument, NULL, 'D' },
        { "direction", required_argument, NULL, O_DIR },
        { "queue-num", required_argument, NULL, 'Q' },
        { "queue-maxlen", required_argument, NULL, O_MAXLEN },
        { "loss", required_argument, NULL, O_LOSS },
        { "seed", required_argument, NULL, O_SEED },
        { "packet-cost", required_argument, NULL, O_PCOST },
        { "byte-cost", required_argument, NULL, O_BCOST },
        { "segments", no_argument, NULL, O_SEGS },
        { "fail-open", no_argument, NULL, O_FAILOPEN },
        { "iptables", required_argument, NULL, O_IPT },
        { "ip6tables", required_argument, NULL, O_IP6T },
        { "no-ipv6", no_argument, NULL, O_NOV6 },
        { "exit-with-parent", no_argument, NULL, O_PARENT },
        { "cleanup", no_argument, NULL, O_CLEANUP },
        { "no-realtime", no_argument, NULL, O_NORT },
        { "quiet", no_argument, NULL, 'q' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    const char *dev = NULL, *delay_arg = NULL, *ipt = "iptables", *ip6t = "ip6tables";
    enum rules_dir dir = RULES_DIR_BOTH;
    uint64_t qnum = 7301, maxlen = 65536, delay_us = 0, seed = 0;
    uint32_t loss_ppm = 0;
    int seed_given = 0;
    double pcost = 0, bcost = 0;
    int segments = 0;
    int fail_open = 0, with_parent = 0, cleanup = 0, realtime = 1, c;
    char err[1024] = "", warn[1024] = "";

    log_set_prog("debit-delayline");
    while ((c = getopt_long(argc, argv, "d:D:Q:qvhV", opts, NULL)) != -1) {
        switch (c) {
        case 'd': dev = optarg; break;
        case 'D': delay_arg = optarg; break;
        case O_DIR:
            if (!strcmp(optarg, "in")) dir = RULES_DIR_IN;
            else if (!strcmp(optarg, "out")) dir = RULES_DIR_OUT;
            else if (!strcmp(optarg, "both")) dir = RULES_DIR_BOTH;
            else { fprintf(stderr, "debit-delayline: --direction: '%s' is not in, out or both\n", optarg); return 2; }
            break;
        case 'Q':
            if (cliopt_uint("--queue-num", optarg, 0, 65535, "0..65535", &qnum, err, sizeof err) < 0) {
                fprintf(stderr, "debit-delayline: %s\n", err);
                return 2;
            }
            break;
        case O_MAXLEN:
            if (cliopt_uint("--queue-maxlen", optarg, 16, 1u << 24, "16..16777216", &maxlen, err, sizeof err) < 0) {
                fprintf(stderr, "debit-delayline: %s\n", err);
                return 2;
            }
            break;
        case O_LOSS:
            if (lossrate_parse(optarg, &loss_ppm, err, sizeof err) < 0) {
                fprintf(stderr, "debit-delayline: --loss: %s\n", err);
                return 2;
            }
            break;
        case O_SEED:
            if (cliopt_uint("--seed", optarg, 0, UINT64_MAX, NULL, &seed, err, sizeof err) < 0) {
                fprintf(stderr, "debit-delayline: %s\n", err);
                return 2;
            }
            seed_given = 1;
            break;
        case O_PCOST:
        case O_BCOST: {
            char *end;
            double v = strtod(optarg, &end);
            double max = c == O_PCOST ? 1e6 : 1e3;
            if (end == optarg || *end || !(v >= 0 && v <= max)) {
                fprintf(stderr, "debit-delayline: --%s: '%s' is not a number of nanoseconds 0..%.0f\n",
                        c == O_PCOST ? "packet-cost" : "byte-cost", optarg, max);
                return 2;
            }
            if (c == O_PCOST) pcost = v; else bcost = v;
            break;
        }
        case O_SEGS: segments = 1; break;
        case O_FAILOPEN: fail_open = 1; break;
        case O_IPT: ipt = optarg; break;
        case O_IP6T: ip6t = optarg; break;
        case O_NOV6: ip6t = NULL; break;
        case O_PARENT: with_parent = 1; break;
        case O_CLEANUP: cleanup = 1; break;
        case O_NORT: realtime = 0; break;
        case 'q': log_set_level(LOG_LEVEL_ERROR); break;
        case 'v': log_set_level(LOG_LEVEL_DEBUG); break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("debit-delayline %s\n", DEBIT_VERSION); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "debit-delayline: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }

    if (cleanup) {
        int n = rules_cleanup(ipt, ip6t, (unsigned)qnum, err, sizeof err);
        if (n < 0) { log_error("%s", err); return 1; }
        printf("debit-delayline: removed %d leftover rule(s) for queue %u\n", n, (unsigned)qnum);
        return 0;
    }
    if (!dev || !*dev) { fprintf(stderr, "debit-delayline: --dev is required (see --help)\n"); return 2; }
    if (strlen(dev) >= 16 || strpbrk(dev, " /")) {
        fprintf(stderr, "debit-delayline: --dev: '%s' is not a valid interface name\n", dev);
        return 2;
    }
    if (!delay_arg) { fprintf(stderr, "debit-delayline: --delay is required (see --help)\n"); return 2; }
    int bad = cliopt_duration("--delay", delay_arg, NULL, &delay_us, err, sizeof err);
    if (!bad && delay_us == 0 && loss_ppm == 0 && pcost == 0 && bcost == 0)
        bad = cliopt_error(err, sizeof err, "--delay", delay_arg,
                           "must be between 1us and 10s (0 only with --loss, --packet-cost or --byte-cost)");
    if (!bad && delay_us > 10000000)
        bad = cliopt_error(err, sizeof err, "--delay", delay_arg, "must be between 1us and 10s");
    if (bad) {
        fprintf(stderr, "debit-delayline: %s\n", err);
        return 2;
    }

    if (if_nametoindex(dev) == 0) {
        /* iptables would accept any name (the rule waits for such a device): say it now. */
        log_error("%s: no such network interface in this namespace", dev);
        return 1;
    }

    /* Signals are blocked except inside ppoll(), so a stop request cannot slip between
     * the check and the wait. */
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, NULL);
    struct sigaction sa = { .sa_handler = on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (with_parent) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() == 1) stop_flag = SIGTERM; /* parent already gone */
    }
    /* Default timer slack (50 us) would make every release that much late. */
    prctl(PR_SET_TIMERSLACK, 1UL);
    /* A busy sender and receiver on the same cores would otherwise delay our wake-ups by
     * a scheduler tick or so; the delay line runs briefly per wake-up, so a modest
     * real-time priority costs the rest of the machine little. Best effort. */
    if (realtime) {
        struct sched_param sp = { .sched_priority = 10 };
        if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
            log_warn("SCHED_FIFO: %s; release times may be late under load", strerror(errno));
    }

    struct queue_opts qo = {
        .queue_num = (unsigned)qnum,
        .delay_ns = delay_us * 1000,
        .maxlen = (uint32_t)maxlen,
        .rcvbuf = 32u << 20,
        .fail_open = fail_open,
        .loss_ppm = loss_ppm,
        .seed = seed_given ? seed : drop_seed_default(),
        .segments = segments,
        .packet_cost_ns = pcost,
        .byte_cost_ns = bcost,
    };
    struct queue *q = queue_open(&qo, err, sizeof err);
    if (!q) { log_error("%s", err); return 1; }

    struct rules rules = { .queue_num = (unsigned)qnum, .dir = dir, .iptables = ipt, .ip6tables = ip6t };
    snprintf(rules.dev, sizeof rules.dev, "%s", dev);
    if (rules_install(&rules, warn, sizeof warn, err, sizeof err) < 0) {
        log_error("%s", err);
        queue_close(q);
        return 1;
    }
    if (warn[0]) log_warn("%s", warn);

    const char *dname = dir == RULES_DIR_IN ? "in" : dir == RULES_DIR_OUT ? "out" : "both";
    char loss[16];
    lossrate_format(loss_ppm, loss, sizeof loss);
    printf(WIRE_DELAY_READY " dev=%s delay_us=%llu direction=%s queue=%u loss=%s seed=%llu pid=%ld"
           " packet_cost_ns=%g byte_cost_ns=%g segments=%d\n",
           dev, (unsigned long long)delay_us, dname, (unsigned)qnum, loss, (unsigned long long)qo.seed,
           (long)getpid(), pcost, bcost, segments);
    fflush(stdout);
    log_info("holding packets on %s (%s) for %llu us, dropping %s, queue %u", dev, dname,
             (unsigned long long)delay_us, loss, (unsigned)qnum);

    int rc = 0;
    if (!stop_flag && queue_run(q, &stop_flag, err, sizeof err) < 0) {
        log_error("%s", err);
        rc = 1;
    }
    /* Rules first, so that nothing new is queued, then accept what is held. */
    if (rules_remove(&rules, err, sizeof err) < 0) {
        log_error("%s (remove it with: debit-delayline --cleanup --queue-num %u)", err, (unsigned)qnum);
        rc = 1;
    }
    uint64_t qd = 0, ud = 0;
    queue_kernel_drops((unsigned)qnum, &qd, &ud);
    const struct hold_stats st = *queue_stats(q);
    uint64_t immediate = queue_immediate(q), stamped = queue_stamped(q), burned = queue_burned_ns(q);
    const struct drop dr = *queue_drops(q);
    queue_close(q);
    /* packets= counts what was released; dropped= what --loss dropped (seen = both). */
    printf("debit-delayline: stats packets=%llu bytes=%llu batches=%llu max_held=%u "
           "late_avg_us=%.1f late_max_us=%.1f stamped=%llu immediate=%llu kernel_dropped=%llu "
           "seen=%llu dropped=%llu loss=%s seed=%llu burned_ms=%.1f\n",
           (unsigned long long)st.packets, (unsigned long long)st.bytes,
           (unsigned long long)st.batches, st.max_held,
           st.packets ? (double)st.late_sum_ns / (double)st.packets / 1000.0 : 0.0,
           (double)st.late_max_ns / 1000.0, (unsigned long long)stamped, (unsigned long long)immediate,
           (unsigned long long)(qd + ud), (unsigned long long)dr.decided, (unsigned long long)dr.dropped, loss,
           (unsigned long long)qo.seed, (double)burned / 1e6);
    fflush(stdout);
    if (stop_flag) log_info("stopped by signal %d", (int)stop_flag);
    return rc;
}
