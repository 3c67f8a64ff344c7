/* isp_map: an operator's offline map from address prefixes to network names
 * (speedtest.isp_map, docs/server.md "Speed-test protocols"), so that getIP's isp=true and
 * Cloudflare's cf-meta-asn/-country/-city say something of a client without asking a third
 * party (LibreSpeed asks ipinfo.io, Cloudflare its own geo database). One line per prefix:
 *
 *     prefix,isp name,asn,country[,city]
 *
 * "198.51.100.0/24,Example Net,AS64500,FR,Paris"; a bare address is a /32 or /128; asn may
 * be "", "64500" or "AS64500"; country and city may be ""; a field may be double-quoted
 * (a name with a comma, "" for a quote inside). Blank lines and lines starting with '#' are
 * skipped. The longest matching prefix wins. Unit-tested in
 * tests/unit/server/content/test_isp_map.c. */
#ifndef DEBITD_ISP_MAP_H
#define DEBITD_ISP_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct isp_map;

/* What the map says of a network. Strings are the map's (valid while it lives). */
struct isp_entry {
    const char *isp;     /* never empty */
    uint32_t asn;        /* 0: not known */
    const char *country; /* "" when not known */
    const char *city;    /* "" when not known */
};

/* Read PATH whole. NULL with "PATH:LINE: reason" (or "PATH: reason") in err when a line is
 * not a valid entry, a prefix is given twice, or the file cannot be read. */
struct isp_map *isp_map_load(const char *path, char *err, size_t errlen);
/* The same from TEXT (NAME names it in errors). */
struct isp_map *isp_map_parse(const char *text, size_t len, const char *name, char *err, size_t errlen);
void isp_map_free(struct isp_map *m);
/* How many prefixes M holds. */
size_t isp_map_count(const struct isp_map *m);

/* The entry of the longest prefix of M that holds the numeric address IP ("192.0.2.1",
 * "2001:db8::1"; an IPv4-mapped IPv6 address is looked up as IPv4), or NULL (M NULL, IP not
 * an address, no prefix holds it). */
const struct isp_entry *isp_map_lookup(const struct isp_map *m, const char *ip);

#endif
