/* drop: see drop.h. */
#include "drop.h"

#include <time.h>
#include <unistd.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t next(struct drop *d)
{
    uint64_t *s = d->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

void drop_init(struct drop *d, uint32_t ppm, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        d->s[i] = splitmix64(&x); /* never all zero: splitmix64 is a bijection of a counter */
    d->ppm = ppm > 1000000u ? 1000000u : ppm;
    d->decided = d->dropped = 0;
}

int drop_decide(struct drop *d)
{
    d->decided++;
    if (d->ppm == 0)
        return 0;
    /* A uniform draw in [0, 10^6) by multiply-and-shift (Lemire): no modulo bias worth
     * the name, and 10^6 - 1 < ppm = 10^6 drops every packet. */
    uint32_t u = (uint32_t)(((unsigned __int128)next(d) * 1000000u) >> 64);
    if (u >= d->ppm)
        return 0;
    d->dropped++;
    return 1;
}

uint64_t drop_seed_default(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    x ^= (uint64_t)getpid() << 40;
    return splitmix64(&x);
}
