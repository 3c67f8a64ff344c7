/* units: one table-driven parser and formatter for sizes, rates and durations.
 *
 * Sizes (bytes): B; binary KiB MiB GiB TiB and the French Kio Mio Gio Tio (powers of 2);
 * decimal kB MB GB TB (powers of 10); bare K M G T are binary, as in dd and curl.
 * Rates (bit/s): k M G T are powers of 10, as the seed's "Mb/s": 500M, 500Mbit, 500Mb/s,
 * 500Mbps, 0.5Gbit/s; byte rates with a capital B: 100MB/s = 800 Mbit/s.
 * Durations: us, ms, s, min, h, d; a bare number is seconds (as curl's --max-time).
 * Numbers may carry a decimal fraction ("1.5GiB"); nothing may trail the unit. */
#ifndef DEBIT_UNITS_H
#define DEBIT_UNITS_H

#include <stddef.h>
#include <stdint.h>

enum units_err {
    UNITS_OK = 0,
    UNITS_EMPTY,      /* nothing to parse */
    UNITS_NOT_NUMBER, /* does not start with a digit */
    UNITS_BAD_SUFFIX, /* unknown or misplaced unit */
    UNITS_OVERFLOW,   /* does not fit in 64 bits */
    UNITS_RANGE,      /* outside the caller's [min, max] */
    UNITS_TOO_FINE,   /* more decimals than the unit holds (percentages: 0.0001 %) */
    UNITS_NEGATIVE,   /* a minus sign before the number: every quantity here is 0 or more */
};

/* Static, human-readable text for an error code. */
const char *units_strerror(enum units_err e);

/* Parse a size into bytes. A fractional result is rounded down. */
enum units_err units_parse_size(const char *s, uint64_t *bytes);
/* Parse a rate into bits per second. */
enum units_err units_parse_rate(const char *s, uint64_t *bits_per_s);
/* Parse a duration into microseconds. */
enum units_err units_parse_duration(const char *s, uint64_t *usec);
/* Parse a plain unsigned integer (decimal, nothing trailing) within [min, max]. */
enum units_err units_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Parse a percentage ("5%", "0.5%", "0.0001%"; "0" or "0.0" alone needs no sign) into
 * parts per million, exactly (decimal digits, no strtod: no rounding, no locale), at most
 * max_ppm (100 % = 1000000). sign_required 0 also takes a bare number as a percentage
 * ("2.5" = 2.5 %). UNITS_BAD_SUFFIX for a missing or other unit, UNITS_TOO_FINE for digits
 * beyond 0.0001 %, UNITS_RANGE above max_ppm. */
enum units_err units_parse_percent(const char *s, int sign_required, uint64_t max_ppm, uint64_t *ppm);

/* Format bytes with the largest binary unit that keeps the number >= 1 ("1 GiB",
 * "1.5 MiB", "512 B"). Returns the snprintf result. */
int units_format_size(uint64_t bytes, char *buf, size_t len);
/* Format a rate in Mb/s (10^6 bit/s) as the seed's tables do, without the unit: whole
 * numbers from 99.5 up ("722"), else 3 significant digits ("42.2", "9.50"), at least 2
 * decimals below 10 ("0.12"); "-" when not finite (no successful run). The one Mb/s
 * formatter of every client output (tables, plot labels, progress line). */
void units_format_mbps(double mbps, char *buf, size_t len);
/* Format a rate the way tc and the X-Debit-Tcp header spell it ("500Mbit"). Exact when
 * the rate is a multiple of the unit, else in bit. */
int units_format_rate_tc(uint64_t bits_per_s, char *buf, size_t len);

#endif
