/* delay_int: the state shared by netctl/delay.c (API, delay line) and netctl/delay_netem.c
 * (netem through libnl-route-3). Not part of the public API. */
#ifndef DEBIT_DELAY_INT_H
#define DEBIT_DELAY_INT_H

#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <sys/types.h>

#include "delay.h"
#include "delay_nl.h"

struct delay {
    char dev[IF_NAMESIZE];
    uint64_t rtt_us;
    uint32_t loss_ppm;             /* per direction; 0: none */
    uint64_t seed;                 /* delay line's drop decisions */
    int seed_known;                /* set by the caller, or read from the ready line */
    int seed_given;                /* set by the caller: passed as --seed */
    enum delay_dir dir;
    enum delay_mechanism want;
    enum delay_mechanism used;
    uint64_t rate_hint;            /* bit/s */
    unsigned queue_num;
    int no_ipv6;                   /* delay line: leave IPv6 alone (--no-ipv6) */
    char delayline_path[PATH_MAX]; /* as set by the caller, or "" */
    volatile sig_atomic_t applied;
    volatile sig_atomic_t removing;

    /* netem: the undo requests, sent in this order by delay_remove(). */
    int ifindex;
    struct delay_nlmsg undo_ingress;  /* delete DEV's ingress qdisc (first: no blackhole) */
    struct delay_nlmsg undo_ifb;      /* delete the IFB device */
    struct delay_nlmsg undo_root;     /* put DEV's previous root qdisc back, or delete ours */
    char root_saved_kind[32];         /* "" when the kernel default was there */

    /* delay line */
    pid_t pid;
    int out_fd;                       /* its stdout+stderr */
    char exe[PATH_MAX];               /* resolved program */
    char qnum_arg[16];
    char loss_arg[16];
    char seed_arg[24];
    char *cleanup_argv[7];            /* exe --cleanup --quiet --queue-num N [--no-ipv6], built at apply */
};

/* netem mechanism (delay_netem.c). apply: 0, or -1 with err filled and nothing left
 * installed. remove: async-signal-safe; 0 or -1 (err may be NULL). */
int delay_netem_apply(struct delay *d, char *err, size_t errlen);
int delay_netem_remove(struct delay *d, char *err, size_t errlen);

#endif
