#!/usr/bin/env python3
"""The segment that carries each HTTP response's headers, as it left on loopback
(tests/e2e/server_nopush.sh): whether the headers went out alone or with body bytes.

  first_segment.py PORT COUNT MAX_S
      capture on lo (AF_PACKET, needs CAP_NET_RAW), print "ready" on stdout, then for each
      TCP segment sent from PORT whose payload starts with "HTTP/1." print one line
          hdr=H seg=S
      H the header block's length (up to the blank line), S the segment's payload length
      (S > H: body bytes in the same segment; S == H: the headers alone). Stops after
      COUNT such segments or MAX_S seconds. IPv4 and IPv6.
Bounded in count and time; loopback only."""
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def tcp_payload(pkt):
    """(src port, payload start, payload length) of an IPv4/IPv6 TCP packet, or None. PKT
    may be cut short (only its first bytes are read): the length comes from the IP header."""
    if not pkt:
        return None
    v = pkt[0] >> 4
    if v == 4:
        ihl = (pkt[0] & 0xF) * 4
        if len(pkt) < ihl + 20 or pkt[9] != 6:
            return None
        total = struct.unpack("!H", pkt[2:4])[0]
        tcp, tcp_len = pkt[ihl:total], total - ihl
    elif v == 6:
        if len(pkt) < 60 or pkt[6] != 6:  # no extension headers on loopback TCP
            return None
        plen = struct.unpack("!H", pkt[4:6])[0]
        tcp, tcp_len = pkt[40:40 + plen], plen
    else:
        return None
    sport = struct.unpack("!H", tcp[0:2])[0]
    doff = (tcp[12] >> 4) * 4
    return sport, tcp[doff:], tcp_len - doff


def main():
    port, count, max_s = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))
    # Every 64 KB segment shows twice on lo (leaving, arriving): a busy machine's capture
    # fell behind and dropped header segments with the default cap on SO_RCVBUF. As root the
    # cap does not apply (SO_RCVBUFFORCE), and only each packet's first bytes are copied.
    try:
        s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind(("lo", 0))
    print("ready", flush=True)
    end = time.monotonic() + max_s
    seen = 0
    while seen < count and time.monotonic() < end:
        s.settimeout(max(0.01, end - time.monotonic()))
        try:
            pkt, addr = s.recvfrom(4096)
        except socket.timeout:
            break
        if addr[2] != PACKET_OUTGOING:  # lo shows each packet leaving and arriving
            continue
        got = tcp_payload(pkt)
        if not got or got[0] != port or not got[1].startswith(b"HTTP/1."):
            continue
        data = got[1]
        h = data.find(b"\r\n\r\n")
        print("hdr=%d seg=%d" % (h + 4 if h >= 0 else -1, got[2]), flush=True)
        seen += 1


if __name__ == "__main__":
    main()
