/* debit-netctl: the network-control library (netctl/) as a program, for callers that are
 * not C, chiefly lab/lab.sh: it adds delay with the very code debit uses (netctl/delay.h:
 * netem through libnl, or the NFQUEUE delay line), holds it while it runs and removes it
 * when told to stop, and answers whether this kernel has netem.
 *
 *   debit-netctl delay --dev DEV --delay DUR [options]   apply, print the ready line, hold
 *                                                       until SIGTERM/SIGINT/SIGHUP, remove
 *   debit-netctl probe                                  netem here? exit 0 yes, 1 no, 2 ?
 *
 * The ready line starts with WIRE_DELAY_READY (common/wire.h), as debit-delayline's does,
 * so that one bounded wait on one string serves every delay program. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cliopt.h"
#include "delay.h"
#include "err.h"
#include "lossrate.h"
#include "units.h"
#include "wire.h"

#define PROG "debit-netctl"

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: " PROG " delay --dev DEV --delay DURATION [--loss RATE] [OPTIONS]\n"
        "       " PROG " probe\n"
        "Network changes for a measurement, done by the code debit uses (netctl/).\n"
        "\n"
        "delay: add DURATION of round-trip delay on DEV, print one line\n"
        "  \"" WIRE_DELAY_READY " mechanism=M dev=DEV direction=D rtt_us=N out_us=N in_us=N loss=P%% seed=S pid=N\"\n"
        "  on stdout once it is in force, hold it until SIGTERM, SIGINT or SIGHUP, then remove\n"
        "  it and put back what was there. Exit 0 when removed cleanly, 1 when applying or\n"
        "  removing failed, 2 on a usage error.\n"
        "  -d, --dev DEV            network device (required)\n"
        "  -D, --delay DURATION     round-trip delay: 10ms, 500us, 0.03s (1us..10s, required;\n"
        "                           0 with --loss: loss only)\n"
        "      --loss RATE          packet loss per direction of --direction, 0%%..100%% (1%%,\n"
        "                           0.5%%): netem loss, or the delay line's drops\n"
        "      --seed N             delay line: seed of its drop decisions (default from the\n"
        "                           clock; seed= in the ready line, \"-\" with netem)\n"
        "      --direction DIR      both (default: half each way) | out | in (all on one way)\n"
        "      --mechanism M        auto (default: netem if the kernel has it) | netem | delayline\n"
        "      --queue-num N        NFQUEUE number of the delay line, 0..65535 (default 7301)\n"
        "      --rate-hint RATE     highest rate expected through DEV (default 10gbit); sizes\n"
        "                           netem's queue limit\n"
        "      --delayline PATH     the debit-delayline program (default: next to this one,\n"
        "                           else PATH)\n"
        "      --no-ipv6            delay line: leave IPv6 alone (no ip6tables rules)\n"
        "\n"
        "probe: say whether this kernel has sch_netem (tried in a scratch network namespace).\n"
        "  Exit 0 and \"netem: yes\", 1 and \"netem: no ...\", 2 when it cannot tell (not root).\n"
        "\n"
        "  -h, --help, -V, --version\n");
}

static int usage_error(const char *msg)
{
    fprintf(stderr, PROG ": %s\n", msg);
    return 2;
}

static int cmd_probe(int argc, char **argv)
{
    if (argc > 1) {
        char m[256];
        snprintf(m, sizeof m, "probe: unexpected argument '%s' (see --help)", argv[1]);
        return usage_error(m);
    }
    char err[256] = "";
    int have = delay_netem_available(err, sizeof err);
    if (have < 0) {
        fprintf(stderr, PROG ": %s\n", err); /* "netem probe: ..." */
        return 2;
    }
    if (have)
        printf("netem: yes (this kernel has sch_netem)\n");
    else
        printf("netem: no (this kernel has no sch_netem: delay goes through debit-delayline)\n");
    return have ? 0 : 1;
}

/* Pass on what the delay line says after its ready line (its stats at exit). Returns
 * 0 at EOF (it ended), 1 otherwise. */
static int relay(int fd)
{
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 1;
    if (n <= 0)
        return 0;
    fwrite(buf, 1, (size_t)n, stdout);
    fflush(stdout);
    return 1;
}

/* Hold the delay until a stop signal arrives (or the delay line ends on its own: then
 * it no longer holds, which is a failure). Returns the signal number, or 0 for the
 * latter. */
static int hold(struct delay *d, int sfd)
{
    for (;;) {
        int out = delay_output_fd(d);
        struct pollfd p[2] = { { .fd = sfd, .events = POLLIN }, { .fd = out, .events = POLLIN } };
        int rc = poll(p, out >= 0 ? 2 : 1, -1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return 0;
        if (p[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
                return (int)si.ssi_signo;
        }
        if (out >= 0 && (p[1].revents & (POLLIN | POLLHUP)) && !relay(out))
            return 0;
    }
}

static int cmd_delay(int argc, char **argv)
{
    enum { O_DIR = 256, O_MECH, O_QNUM, O_RATE, O_PATH, O_NOV6, O_LOSS, O_SEED };
    static const struct option opts[] = {
        { "dev", required_argument, NULL, 'd' },
        { "delay", required_argument, NULL, 'D' },
        { "direction", required_argument, NULL, O_DIR },
        { "mechanism", required_argument, NULL, O_MECH },
        { "queue-num", required_argument, NULL, O_QNUM },
        { "rate-hint", required_argument, NULL, O_RATE },
        { "delayline", required_argument, NULL, O_PATH },
        { "no-ipv6", no_argument, NULL, O_NOV6 },
        { "loss", required_argument, NULL, O_LOSS },
        { "seed", required_argument, NULL, O_SEED },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *dev = NULL, *delay_arg = NULL, *path = NULL;
    enum delay_dir dir = DELAY_DIR_BOTH;
    enum delay_mechanism mech = DELAY_MECH_AUTO;
    uint64_t qnum = 7301, rate = 0, rtt_us = 0, seed = 0;
    uint32_t loss = 0;
    int ipv6 = 1, seed_given = 0, c;
    char err[1024] = "";

    optind = 1;
    opterr = 0; /* our own messages, naming the option */
    while ((c = getopt_long(argc, argv, "+:d:D:h", opts, NULL)) != -1) {
        switch (c) {
        case 'd': dev = optarg; break;
        case 'D': delay_arg = optarg; break;
        case O_DIR:
            if (delay_dir_parse(optarg, &dir) < 0) {
                cliopt_error(err, sizeof err, "--direction", optarg, "not both, out or in");
                return usage_error(err);
            }
            break;
        case O_MECH:
            if (delay_mechanism_parse(optarg, &mech) < 0) {
                cliopt_error(err, sizeof err, "--mechanism", optarg, "not auto, netem or delayline");
                return usage_error(err);
            }
            break;
        case O_QNUM:
            if (cliopt_uint("--queue-num", optarg, 0, 65535, "0..65535", &qnum, err, sizeof err) < 0)
                return usage_error(err);
            break;
        case O_RATE: {
            enum units_err ue = units_parse_rate(optarg, &rate);
            if (ue != UNITS_OK) {
                cliopt_error(err, sizeof err, "--rate-hint", optarg, units_strerror(ue));
                return usage_error(err);
            }
            break;
        }
        case O_PATH: path = optarg; break;
        case O_NOV6: ipv6 = 0; break;
        case O_LOSS:
            if (lossrate_parse(optarg, &loss, err, sizeof err) < 0) {
                err_prefix(err, sizeof err, "--loss");
                return usage_error(err);
            }
            break;
        case O_SEED:
            if (cliopt_uint("--seed", optarg, 0, UINT64_MAX, NULL, &seed, err, sizeof err) < 0)
                return usage_error(err);
            seed_given = 1;
            break;
        case 'h': usage(stdout); return 0;
        case ':':
            snprintf(err, sizeof err, "delay: %s needs a value (see --help)", argv[optind - 1]);
            return usage_error(err);
        default:
            snprintf(err, sizeof err, "delay: unknown option '%s' (see --help)", argv[optind - 1]);
            return usage_error(err);
        }
    }
    if (optind < argc) {
        snprintf(err, sizeof err, "delay: unexpected argument '%s' (see --help)", argv[optind]);
        return usage_error(err);
    }
    if (!dev)
        return usage_error("delay: --dev is required (see --help)");
    if (!delay_arg)
        return usage_error("delay: --delay is required (see --help)");
    if (cliopt_duration("--delay", delay_arg, "10ms, 500us, 0.03s", &rtt_us, err, sizeof err) < 0)
        return usage_error(err);

    if ((rtt_us == 0 && loss == 0) || rtt_us > DELAY_MAX_US) {
        cliopt_error(err, sizeof err, "--delay", delay_arg,
                     rtt_us ? "must be between 1 us and 10 s" : "must be between 1 us and 10 s (0 only with --loss)");
        return usage_error(err);
    }
    /* The delay is in range: what delay_new() can still refuse is the device name. */
    struct delay *d = delay_new(dev, rtt_us, err, sizeof err);
    if (!d) {
        err_prefix(err, sizeof err, "--dev");
        return usage_error(err);
    }
    const char *bad = NULL;
    if (delay_set_direction(d, dir, err, sizeof err) < 0) bad = "--direction";
    else if (delay_set_mechanism(d, mech, err, sizeof err) < 0) bad = "--mechanism";
    else if (delay_set_queue_num(d, (unsigned)qnum, err, sizeof err) < 0) bad = "--queue-num";
    else if (rate && delay_set_rate_hint(d, rate, err, sizeof err) < 0) bad = "--rate-hint";
    else if (path && delay_set_delayline_path(d, path, err, sizeof err) < 0) bad = "--delayline";
    else if (delay_set_ipv6(d, ipv6, err, sizeof err) < 0) bad = "--no-ipv6";
    else if (delay_set_loss(d, loss, err, sizeof err) < 0) bad = "--loss";
    if (seed_given) delay_set_seed(d, seed);
    if (bad) {
        delay_free(d);
        err_prefix(err, sizeof err, "%s", bad);
        return usage_error(err);
    }

    /* Stop signals are taken through a signalfd from here on: one arriving while the
     * delay is being applied waits, and is acted on once apply has finished. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGHUP);
    /* A background job of a script starts with SIGINT ignored, and an ignored signal
     * never reaches a signalfd: take the default back (blocked, it cannot kill us). */
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    sigprocmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    int sfd = signalfd(-1, &stop, SFD_CLOEXEC);
    if (sfd < 0) {
        fprintf(stderr, PROG ": signalfd: %s\n", strerror(errno));
        delay_free(d);
        return 1;
    }
    if (delay_apply(d, err, sizeof err) < 0) {
        fprintf(stderr, PROG ": %s\n", err);
        delay_free(d);
        close(sfd);
        return 1;
    }
    uint64_t out_us, in_us;
    delay_split(d, &out_us, &in_us);
    char loss_s[16], seed_s[24] = "-";
    uint64_t used_seed;
    lossrate_format(loss, loss_s, sizeof loss_s);
    if (delay_seed(d, &used_seed) == 1) snprintf(seed_s, sizeof seed_s, "%llu", (unsigned long long)used_seed);
    printf(WIRE_DELAY_READY " mechanism=%s dev=%s direction=%s rtt_us=%llu out_us=%llu in_us=%llu loss=%s seed=%s pid=%ld\n",
           delay_mechanism_name(delay_mechanism_used(d)), dev, delay_dir_name(dir),
           (unsigned long long)rtt_us, (unsigned long long)out_us, (unsigned long long)in_us, loss_s, seed_s,
           (long)getpid());
    fflush(stdout);

    int sig = hold(d, sfd);
    int rc = 0;
    if (!sig) {
        fprintf(stderr, PROG ": the delay line on %s ended by itself: the delay is no longer in force\n", dev);
        rc = 1;
    }
    if (delay_remove(d, err, sizeof err) < 0) {
        fprintf(stderr, PROG ": removing the delay on %s: %s\n", dev, err);
        rc = 1;
    }
    int out = delay_output_fd(d);
    while (out >= 0 && relay(out)) {}  /* the delay line's last words (stats), up to EOF */
    if (sig && rc == 0)
        fprintf(stderr, PROG ": delay on %s removed (signal %d)\n", dev, sig);
    delay_free(d);
    close(sfd);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    int c;
    /* "+": stop at the command word; its own options are parsed by the command. */
    while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
        switch (c) {
        case 'h': usage(stdout); return 0;
        case 'V': printf(PROG " %s\n", DEBIT_VERSION); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc)
        return usage_error("a command is required: delay or probe (see --help)");
    const char *cmd = argv[optind];
    argc -= optind;
    argv += optind;
    if (!strcmp(cmd, "delay"))
        return cmd_delay(argc, argv);
    if (!strcmp(cmd, "probe"))
        return cmd_probe(argc, argv);
    char m[256];
    snprintf(m, sizeof m, "unknown command '%s' (delay or probe; see --help)", cmd);
    return usage_error(m);
}
