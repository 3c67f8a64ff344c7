#!/usr/bin/env python3
"""Validate a plot written by `debit --plot` (used by the lab and scenario e2e tests).

  lab_plotcheck.py png FILE [WIDTH HEIGHT]
      A complete, decodable PNG: signature, every chunk's CRC, IHDR first, IDAT data that
      inflates to exactly the size IHDR announces (non-interlaced), IEND last. Prints
      "png WIDTHxHEIGHT".
  lab_plotcheck.py svg FILE --key 'L1|L2|...' [--lines N] [--text T]...
      Parses as XML with an <svg> root of the SVG namespace. --key: the time panels' shared
      key (the last plot of gnuplot's multiplot) lists exactly these entries, each with a
      line style (colour, dash pattern) of its own. --lines: that many data lines in the
      time panels, each drawn in one of the key's styles. --text: a text the picture must
      contain (titles, scenario names). Prints what it found.
Exit 0 when valid, 1 with the reason on stderr otherwise. Standard library only.
"""
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

SVG_NS = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print(f"lab_plotcheck: {msg}", file=sys.stderr)
    sys.exit(1)


def check_png(path, want_w=None, want_h=None):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: no PNG signature")
    pos, chunks, idat = 8, [], b""
    while pos < len(data):
        if pos + 12 > len(data):
            fail(f"{path}: truncated chunk header at byte {pos}")
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        ctype = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if len(body) != length or pos + 12 + length > len(data):
            fail(f"{path}: chunk {ctype!r} truncated")
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(ctype + body) & 0xFFFFFFFF != crc:
            fail(f"{path}: bad CRC in chunk {ctype!r}")
        chunks.append(ctype)
        if ctype == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif ctype == b"IDAT":
            idat += body
        pos += 12 + length
    if not chunks or chunks[0] != b"IHDR":
        fail(f"{path}: IHDR is not the first chunk")
    if chunks[-1] != b"IEND":
        fail(f"{path}: IEND is not the last chunk")
    if not idat:
        fail(f"{path}: no image data (IDAT)")
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(colour)
    if channels is None:
        fail(f"{path}: colour type {colour}")
    raw = zlib.decompress(idat)
    if interlace == 0:
        row = 1 + (w * channels * depth + 7) // 8
        if len(raw) != row * h:
            fail(f"{path}: image data is {len(raw)} bytes, IHDR wants {row * h}")
    if want_w is not None and (w, h) != (int(want_w), int(want_h)):
        fail(f"{path}: {w}x{h}, expected {want_w}x{want_h}")
    print(f"png {w}x{h}")


def plots(root):
    """gnuplot's SVG: each plot element is <g id="gnuplot_plot_<N><letter>">, the letter
    counting the plots of a multiplot (a, b, ...). Returns {letter: [(texts, styles)]}."""
    out = {}
    for g in root.iter(SVG_NS + "g"):
        m = re.fullmatch(r"gnuplot_plot_(\d+)([a-z]+)", g.get("id", ""))
        if not m:
            continue
        texts = [t.text.strip() for t in g.iter(SVG_NS + "text") if t.text and t.text.strip()]
        styles = []
        for p in g.iter(SVG_NS + "path"):
            if p.get("stroke"):
                styles.append((re.sub(r"\s+", "", p.get("stroke")),
                               re.sub(r"\s+", "", p.get("stroke-dasharray", "solid"))))
        out.setdefault(m.group(2), []).append((texts, styles))
    return out


def check_svg(path, args):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail(f"{path}: not well-formed XML: {e}")
    if root.tag != SVG_NS + "svg":
        fail(f"{path}: root element is {root.tag}, not svg")
    key, lines, texts = None, None, []
    i = 0
    while i < len(args):
        if args[i] == "--key":
            key = args[i + 1].split("|")
        elif args[i] == "--lines":
            lines = int(args[i + 1])
        elif args[i] == "--text":
            texts.append(args[i + 1])
        else:
            fail(f"unknown option {args[i]}")
        i += 2
    alltext = " ".join(t.text or "" for t in root.iter(SVG_NS + "text"))
    for t in texts:
        if t not in alltext:
            fail(f"{path}: text '{t}' not found")
    p = plots(root)
    letters = sorted(p, key=lambda s: (len(s), s))
    if key is not None:
        if len(letters) < 3:
            fail(f"{path}: {len(letters)} plots, expected bars, time panel(s) and a key")
        entries = {}
        for tx, st in p[letters[-1]]:
            if len(tx) != 1 or len(st) != 1:
                fail(f"{path}: key entry with texts {tx} and styles {st}")
            entries[tx[0]] = st[0]
        if sorted(entries) != sorted(key):
            fail(f"{path}: key lists {sorted(entries)}, expected {sorted(key)}")
        if len(set(entries.values())) != len(entries):
            fail(f"{path}: key entries share a line style: {entries}")
        print("key: " + "; ".join(f"{k} = {v[0]} {v[1]}" for k, v in entries.items()))
        if lines is not None:
            styles = set(entries.values())
            drawn = [st for letter in letters[1:-1] for _, sts in p[letter] for st in sts]
            if len(drawn) != lines:
                fail(f"{path}: {len(drawn)} lines in the time panels, expected {lines}")
            odd = [st for st in drawn if st not in styles]
            if odd:
                fail(f"{path}: lines drawn in styles not in the key: {odd}")
            print(f"time panels: {len(letters) - 2}, lines: {len(drawn)}, styles used: {len(set(drawn))}")
    print("svg ok")


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    kind, path = sys.argv[1], sys.argv[2]
    try:
        if kind == "png":
            check_png(path, *sys.argv[3:5])
        elif kind == "svg":
            check_svg(path, sys.argv[3:])
        else:
            fail(f"unknown kind {kind}")
    except OSError as e:
        fail(str(e))


if __name__ == "__main__":
    main()
