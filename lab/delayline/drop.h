/* drop: the delay line's loss decision (`debit-delayline --loss 5% --seed N`). Each
 * queued packet is dropped with probability ppm / 10^6, independently of the others
 * (netem's plain `loss random`, without its correlation or Gilbert-Elliott models), from
 * a seeded PRNG — xoshiro256** (Blackman & Vigna), its state filled by splitmix64 from the
 * 64-bit seed — so that one seed gives one drop sequence: a run can be replayed. Pure
 * computation, no I/O, unit-tested on its own. */
#ifndef DEBIT_DELAYLINE_DROP_H
#define DEBIT_DELAYLINE_DROP_H

#include <stdint.h>

struct drop {
    uint64_t s[4];
    uint32_t ppm;        /* 0: drop nothing; 10^6: drop everything */
    uint64_t decided;    /* packets decided on */
    uint64_t dropped;    /* of which dropped */
};

/* Set up d for a rate of ppm (0..10^6, clamped) and a seed (any value, 0 included). */
void drop_init(struct drop *d, uint32_t ppm, uint64_t seed);

/* Decide for the next packet: 1 drop it, 0 let it through. Counts both. */
int drop_decide(struct drop *d);

/* A seed from the clock and the process id, for runs that give none. */
uint64_t drop_seed_default(void);

#endif
