/* counters: see counters.h. */
#include "counters.h"

const double counters_bucket_le[COUNTERS_N_BUCKETS] = COUNTERS_DURATION_BUCKETS;
_Static_assert(sizeof(double[COUNTERS_N_BUCKETS]) == sizeof((double[])COUNTERS_DURATION_BUCKETS),
               "COUNTERS_N_BUCKETS is the number of COUNTERS_DURATION_BUCKETS");

void counters_response(struct counters *c, unsigned status)
{
    if (c && status >= 100 && status < 600)
        c->responses[status / 100 - 1]++;
}

uint64_t counters_responses(const struct counters *c, unsigned class_digit)
{
    return class_digit >= 1 && class_digit <= 5 ? c->responses[class_digit - 1] : 0;
}

void counters_transfer(struct counters *c, uint64_t bytes, double seconds)
{
    if (!c)
        return;
    c->bytes_sent += bytes;
    if (seconds < 0)
        seconds = 0;
    size_t b = 0;
    while (b < COUNTERS_N_BUCKETS && seconds > counters_bucket_le[b])
        b++;
    c->transfer_buckets[b]++;
    c->transfer_ns += (uint64_t)(seconds * 1e9);
}

uint64_t counters_transfers(const struct counters *c)
{
    uint64_t n = 0;
    for (size_t b = 0; b <= COUNTERS_N_BUCKETS; b++)
        n += c->transfer_buckets[b];
    return n;
}

void counters_speedtest(struct counters *c, size_t row, uint64_t bytes)
{
    if (!c || row >= COUNTERS_SPEEDTEST_ROWS)
        return;
    c->speedtest_tests[row]++;
    c->speedtest_bytes[row] += bytes;
}

void counters_speedtest_refused(struct counters *c, size_t row)
{
    if (c && row < COUNTERS_SPEEDTEST_ROWS)
        c->speedtest_refused[row]++;
}

void counters_ndt7(struct counters *c, int upload, uint64_t bytes, int done)
{
    c->ndt7_tests[!!upload][!!done]++;
    c->ndt7_bytes[!!upload] += bytes;
}
