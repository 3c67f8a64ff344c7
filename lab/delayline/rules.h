/* rules: the iptables rules that steer a device's packets into the delay line's queue.
 * nftables' own `queue` statement is often compiled out (CONFIG_NFT_QUEUE), the iptables
 * NFQUEUE target is not; `--queue-bypass` makes the rule fail open, so traffic keeps flowing
 * (undelayed) if the program dies without removing it. Every rule carries the comment
 * "debit-delayline:qN" so that leftovers can be found and removed (rules_cleanup). */
#ifndef DEBIT_DELAYLINE_RULES_H
#define DEBIT_DELAYLINE_RULES_H

#include <stddef.h>

enum rules_dir {
    RULES_DIR_IN = 1,    /* mangle PREROUTING -i DEV */
    RULES_DIR_OUT = 2,   /* mangle POSTROUTING -o DEV */
    RULES_DIR_BOTH = 3,
};

struct rules {
    char dev[32];
    unsigned queue_num;
    enum rules_dir dir;
    const char *iptables;   /* IPv4 command, e.g. "iptables" (not owned) */
    const char *ip6tables;  /* IPv6 command, or NULL to leave IPv6 alone (not owned) */
    int installed;          /* bitmask: 1 v4 in, 2 v4 out, 4 v6 in, 8 v6 out */
};

/* Append the rules (-A). On failure the ones already added are removed again. The IPv6
 * rules are best effort: when ip6tables fails, a warning goes into warn (may be NULL).
 * Returns 0, or -1 with err filled (iptables' own message included). */
int rules_install(struct rules *r, char *warn, size_t warnlen, char *err, size_t errlen);
/* Delete the rules this struct installed. Returns 0, or -1 if one could not be removed. */
int rules_remove(struct rules *r, char *err, size_t errlen);
/* Delete every rule tagged for queue_num in the mangle table (leftovers of a killed run),
 * IPv4 and IPv6. Returns the number of rules removed, or -1 with err filled. */
int rules_cleanup(const char *iptables, const char *ip6tables, unsigned queue_num, char *err, size_t errlen);

#endif
