#!/usr/bin/env bash
# Issue 31: no output option ever replaces what is not a regular file. `debit -o /dev/null`
# as root once renamed its temporary report over /dev/null, leaving a regular file there.
# A character device (made here with mknod: 1,3 is the null device), a FIFO and a
# symlink are each given to -o, --plot (and so its -rtt sibling) and --jsonl; afterwards
# the device is still a device, the FIFO a FIFO that got the report, the link a link
# whose target got it.
. "$(dirname "$0")/../lib/common.sh"
. "$DEBIT_TOP/tests/e2e/client_lib.bash"
need_cmd python3 gnuplot
need_root "mknod of a character device"
fake_up
url="$FAKE/norange/1100000"
d=$T_TMP/out
mkdir "$d"
mknod "$d/null" c 1 3 || skip_all "mknod refused here (a device-less mount?)"
echo probe >"$d/null" 2>/dev/null || skip_all "the mknod'd device cannot be written here (nodev mount)"

kind() { stat -c %F "$1"; }
# -o, --plot and --jsonl all on the device node
"$DEBIT" -q -n 1 --format json -o "$d/null" --plot "$d/null.png" --jsonl "$d/null" "$url" 2>"$T_TMP/dev.err"
rc=$?
check_eq "-o/--jsonl to a character device: the run succeeds" "0" "$rc"
check_eq "-o to a character device: still a character device" "character special file" "$(kind "$d/null")"
check_eq "no temporary file left beside the device" "" "$(ls "$d" | grep -v '^null' )"
# --plot FILE.png where FILE.png and FILE-rtt.png are device nodes
mknod "$d/p.png" c 1 3 && mknod "$d/p-rtt.png" c 1 3
"$DEBIT" -q -n 1 --plot "$d/p.png" -o "$d/r.json" "$url" 2>"$T_TMP/plot.err"
check_eq "--plot to a character device: exit 0" "0" "$?"
check_eq "--plot: the device stays a device" "character special file" "$(kind "$d/p.png")"
check_eq "--plot's -rtt sibling: the device stays a device" "character special file" "$(kind "$d/p-rtt.png")"

# a FIFO: written directly (a reader gets the report), still a FIFO afterwards
mkfifo "$d/fifo"
timeout 60 cat "$d/fifo" >"$T_TMP/fifo.got" &
reader=$!
t_track $reader
"$DEBIT" -q -n 1 --format json -o "$d/fifo" "$url" 2>"$T_TMP/fifo.err"
check_eq "-o to a FIFO: exit 0" "0" "$?"
wait $reader
check_eq "-o to a FIFO: still a FIFO" "fifo" "$(kind "$d/fifo")"
check_eq "-o to a FIFO: the reader got the JSON report" "1" "$(jq '.runs | length' "$T_TMP/fifo.got" 2>&1)"

# a symlink to a regular file: the target replaced, the link kept
echo old >"$d/target.json"
ln -s target.json "$d/link.json"
"$DEBIT" -q -n 1 --format json -o "$d/link.json" "$url" 2>"$T_TMP/link.err"
check_eq "-o to a symlink: exit 0" "0" "$?"
check_eq "-o to a symlink: still a symlink" "symbolic link" "$(kind "$d/link.json")"
check_eq "-o to a symlink: its target got the report" "1" "$(jq '.runs | length' "$d/target.json" 2>&1)"
# a symlink to the device: the device is written, nothing replaced
ln -s null "$d/null-link"
"$DEBIT" -q -n 1 -o "$d/null-link" "$url" 2>>"$T_TMP/link.err"
check_eq "-o to a symlink to a device: both stay as they were" "symbolic link character special file" \
  "$(kind "$d/null-link") $(kind "$d/null")"
# -t checks the same way, and a regular file is still replaced atomically
check_eq "-t -o a FIFO without a reader: OK at once (not opened)" "0" \
  "$(timeout 10 "$DEBIT" -t -o "$d/fifo" "$url" >/dev/null 2>&1; echo $?)"
t_done
