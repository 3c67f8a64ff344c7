/* lossrate: a packet-loss rate as people and netem write it, "5%", "0.5%", "0.0001%"
 * (a bare 0 means none), held as an integer in parts per million so that every program
 * (debit, debit-netctl, debit-delayline) parses, compares and prints it the same way and
 * no floating-point rounding creeps in between them. The % sign is required: "0.5" could
 * be read as 0.5 % or as 50 %, and a loss rate read wrong by 100x is worse than an error. */
#ifndef DEBIT_LOSSRATE_H
#define DEBIT_LOSSRATE_H

#include <stddef.h>
#include <stdint.h>

#define LOSSRATE_PPM_MAX 1000000u  /* 100 % */

/* Parse value ("N%", "N.NNNN%", "0") into *ppm (0..LOSSRATE_PPM_MAX). Returns 0, or -1 with
 * "'VALUE': why" in err (negative, above 100 %, no % sign, finer than 0.0001 %, garbage). */
int lossrate_parse(const char *value, uint32_t *ppm, char *err, size_t errlen);

/* Shortest text that parses back to ppm: "5%", "0.5%", "0.0001%", "0%". Returns the
 * snprintf result. */
int lossrate_format(uint32_t ppm, char *buf, size_t len);

/* The rate as a percentage (ppm / 10^4), for JSON. */
double lossrate_pct(uint32_t ppm);

#endif
