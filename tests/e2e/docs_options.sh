#!/usr/bin/env bash
# Docs true of the code, for options: every option that docs/client.md, man/debit.1 and
# README.md document for debit exists in `debit --help`, and every option of --help is in
# docs/client.md's option table and man/debit.1's OPTIONS; the same for debitd with
# docs/server.md, man/debitd.8 and README.md against `debitd --help`. And README.md is at
# most 300 lines, none over 400 characters (issue 31: a newcomer's page).
#
# What counts as documenting an option: a row of docs/client.md's "## Options" table (its
# first column), docs/server.md's "Options:" paragraph, a tag line (after .TP) of a man
# page's OPTIONS section, and every command line of the program in any of the files
# (a `debit ...` span in backticks, a code-block line starting with `debit` or `$ debit`,
# up to a pipe, `;`, `&&` or a # comment). An option of --help is one in the first column
# of an indented line starting with '-'.
. "$(dirname "$0")/../lib/common.sh"
need_cmd python3
"$DEBIT_BUILD/debit" --help >"$T_TMP/debit.help" && "$DEBIT_BUILD/debitd" --help >"$T_TMP/debitd.help" ||
  { t_fail "--help of both programs" "exit status not 0"; t_done; }
python3 - "$DEBIT_TOP" "$T_TMP" <<'PY'
import re, sys
top, tmp = sys.argv[1], sys.argv[2]
# An option: -x or --long-name, not inside a word, path or value ("-c/--config" is two).
OPT = re.compile(r'(?<![\w\-.=])(--[a-z][a-z0-9-]*[a-z0-9]|-[a-zA-Z0-9])(?![\w-])')
n = 0
failed = 0

def tap(ok, name, detail=""):
    global n, failed
    n += 1
    print(("ok" if ok else "not ok") + f" {n} - {name}")
    if not ok:
        failed += 1
        print(f"#   {detail}")

def read(path):
    with open(f"{top}/{path}") as f:
        t = f.read()
    if path.startswith("man/"):
        t = t.replace("\\-", "-").replace("\\fI", "").replace("\\fR", "").replace("\\fB", "")
    return t

def help_opts(prog):
    opts = set()
    for line in open(f"{tmp}/{prog}.help"):
        if re.match(r'^\s+-', line):
            opts |= set(OPT.findall(re.split(r'\s{2,}', line.strip(), maxsplit=1)[0]))
    return opts

def commands(text, prog):
    """Options used in command lines of prog: `prog ...` spans, code lines `[$ ]prog ...`."""
    found = set()
    spans = re.findall(r'`' + prog + r'( [^`]*)`', text)
    spans += re.findall(r'^(?:\$ )?' + prog + r'( .*)$', text, re.M)
    for s in spans:
        s = re.split(r'\s[|;#]|&&', s)[0]
        found |= set(OPT.findall(s))
    return found

def man_tags(text):
    m = re.search(r'^\.SH OPTIONS\n(.*?)^\.SH ', text, re.M | re.S)
    tags = set()
    if m:
        for tag in re.findall(r'^\.TP\n(.*)$', m.group(1), re.M):
            tags |= set(OPT.findall(tag))
    return tags

def table_opts(text, heading):
    m = re.search(r'^' + re.escape(heading) + r'\n(.*?)(?=^## )', text, re.M | re.S)
    opts = set()
    for row in re.findall(r'^\| ([^|]*(?:\\\|[^|]*)*) \|', m.group(1) if m else "", re.M):
        opts |= set(OPT.findall(row))
    return opts

def para_opts(text, start):
    m = re.search(r'^' + re.escape(start) + r'(.*?)\n\n', text, re.M | re.S)
    return set(OPT.findall(m.group(1))) if m else set()

def fmt(s):
    return " ".join(sorted(s)) or "(none)"

for prog, doc, man, listed in (
    ("debit", "docs/client.md", "man/debit.1", lambda t: table_opts(t, "## Options")),
    ("debitd", "docs/server.md", "man/debitd.8", lambda t: para_opts(t, "Options:")),
):
    h = help_opts(prog)
    tap(len(h) > 5, f"{prog} --help lists its options ({len(h)})", fmt(h))
    d, m, readme = read(doc), read(man), read("README.md")
    doc_list, man_list = listed(d), man_tags(m)
    for src, opts in ((f"{doc} (its option list)", doc_list), (f"{man} (OPTIONS)", man_list),
                      (f"{doc} (command lines)", commands(d, prog)), (f"{man} (command lines)", commands(m, prog)),
                      ("README.md (command lines)", commands(readme, prog))):
        tap(opts <= h, f"{prog}: every option of {src} is in --help", "not in --help: " + fmt(opts - h))
    tap(h <= doc_list, f"{prog}: every option of --help is in {doc}'s option list", "undocumented: " + fmt(h - doc_list))
    tap(h <= man_list, f"{prog}: every option of --help is in {man} OPTIONS", "undocumented: " + fmt(h - man_list))
# The README is a newcomer's page (issue 31): short, and every line readable on a screen.
lines = read("README.md").split("\n")
if lines and lines[-1] == "":
    lines.pop()
tap(len(lines) <= 300, f"README.md has at most 300 lines ({len(lines)})", f"{len(lines)} lines")
long = [f"line {i + 1}: {len(l)} characters" for i, l in enumerate(lines) if len(l) > 400]
tap(not long, "README.md has no line over 400 characters", "; ".join(long))
print(f"1..{n}")
sys.exit(1 if failed else 0)
PY
