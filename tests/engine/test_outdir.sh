#!/bin/sh
# An output directory that stops answering (a hard-mounted NFS whose server went away:
# open, write, fsync and rename block for ever) fails the run within [report]
# write_timeout, with one line naming the file and the call that did not return, instead
# of hanging it. Without NFS: strace holds every fsync for 8 s (the check at the start),
# or a FIFO stands where a result's temporary file goes (its open waits for a reader).
# - at the start: exit 1 before any case, naming the run directory and the fsync;
# - report.json at the end (rank 0 under a launcher): exit 1, the table on the terminal,
#   the case files kept, the status write that follows refused at once;
# - a case's file: its table on the terminal, the job stopped (each case to come would
#   wait as long to lose its file too), the other rank told;
# - the read back of the case files at the end (strace holds an open): the cases marked
#   unread, not failed, one line naming the directory, exit 1.
# The backstop is `timeout`; the bound asserted is write_timeout (1s) plus a margin for a
# loaded 2-core host.
set -u
. "$(dirname "$0")/../lib_net.sh"
rank_test_begin
elapsed() { python3 -c "import time,sys; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$1"; }
# within SECONDS LIMIT: true when SECONDS <= LIMIT
within() { python3 -c "import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))" "$1" "$2"; }
# held_run NAME PATTERN LIMIT STRACE_ARGS...: `run od.ini --out $T/NAME` under strace
# with STRACE_ARGS (the calls it holds), its output in $T/NAME.out and .err: in $said the
# seconds until its log held PATTERN ("" when not within LIMIT s), its exit in $st, the
# whole run's seconds in $took (the start in $t0).
held_run() {
	name=$1 pat=$2 limit=$3
	shift 3
	mkdir -p "$T/$name"
	t0=$(date +%s.%N)
	# LeakSanitizer cannot work under ptrace: an ASan build checks no leaks here
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 90 strace -o /dev/null \
		-f "$@" "$G" run "$T/od.ini" --out "$T/$name" >"$T/$name.out" 2>"$T/$name.err" &
	pids=$!
	said=
	for i in $(seq $((limit * 20))); do
		grep -q "$pat" "$T/$name.err" && { said=$(elapsed "$t0"); break; }
		sleep 0.05
	done
	wait $pids
	st=$?
	pids=
	took=$(elapsed "$t0")
}
# the file system the run directory is on, as /proc/self/mountinfo names it
fs_line='is its file system ([^ ]* at /[^)]*) reachable?'

cat >"$T/od.ini" <<INI
[experiment]
name = od
[collective]
sizes = 4KiB, 64KiB
iterations = 5
[transport]
transport = tcp
[launch]
local_ranks = 2
timeout = 20s
[report]
formats = table,json,md
write_timeout = 1s
INI

# 1. The check at the start: every fsync held 8 s. The line comes after the 1 s bound
# (its time taken when it shows in the log), no case runs; the process ends when strace
# lets the held thread go (as a real one would end when its I/O returns).
if command -v strace >/dev/null 2>&1; then
	held_run pre "does not answer" 15 -e trace=fsync -e inject=fsync:delay_enter=8000000
	[ $st = 1 ] || fail "start: exit $st, expected 1"
	[ -n "$said" ] && within "$said" 5 || fail "start: the error took ${said:-over 15}s (bound 1s)"
	within "$took" 30 || fail "start: the run took ${took}s"
	d=$(ls -d "$T"/pre/od-* | head -n 1)
	grep -q "error: run directory $d does not answer: fsync of $d/\.gradsync-probe\.[0-9]*\.tmp did not return within 1s: $fs_line; no case has run$" "$T/pre.err" ||
		{ fail "start: no line naming the directory and the fsync"; cat "$T/pre.err"; }
	[ "$(grep -c 'error' "$T/pre.err")" = 1 ] || { fail "start: more than one line"; cat "$T/pre.err"; }
	grep -q "case 1/" "$T/pre.err" "$T/pre.out" && fail "start: a case ran"
	[ -z "$(ls -A "$d/cases")" ] || fail "start: case files: $(ls "$d/cases")"
	echo "start: exit $st, the error after ${said}s, the run ${took}s (strace held the fsync 8s)"
else
	echo "start: strace not installed, not checked"
fi

# hand RUN FILE: rank 0 of a 2-rank launcher job on $T/RUN started; once its run
# directory $d exists (made and probed, no case run yet: rank 1 is not there), a FIFO
# stands at $d/FILE; then rank 1 runs to its end. Rank 0's exit in $st0, the time from
# rank 1's start to rank 0's end in $took, rank 1's exit in $st1.
hand() {
	port=$(free_port $((port + 1)))
	mkdir -p "$T/$1"
	timeout 60 "$G" run "$T/od.ini" --out "$T/$1" --rank 0 --world-size 2 \
		--rendezvous 127.0.0.1:$port --token od >"$T/$1.0.out" 2>"$T/$1.0.err" &
	pids=$!
	d=
	for i in $(seq 400); do
		d=$(ls -d "$T/$1"/od-* 2>/dev/null | head -n 1)
		[ -n "$d" ] && [ -e "$d/status" ] && break
		sleep 0.05
	done
	if [ -z "$d" ] || ! mkfifo "$d/$2"; then
		fail "$1: rank 0 made no run directory: $(tail -n 3 "$T/$1.0.err")"
		d=$T/$1/none
	fi
	t0=$(date +%s.%N)
	timeout 60 "$G" run "$T/od.ini" --out "$T/$1" --rank 1 --world-size 2 \
		--rendezvous 127.0.0.1:$port --token od >"$T/$1.1.out" 2>"$T/$1.1.err"
	st1=$?
	wait $pids
	st0=$?
	pids=
	took=$(elapsed "$t0")
}
port=$((21000 + $$ % 9000))

# 2. report.json at the end: its open waits; rank 0 gives up after 1 s, names the file,
# the call and where the results are, prints the table; the status write after it is
# refused at once (the open has not returned), not another second.
hand end report.json.tmp
[ $st0 = 1 ] || fail "report.json: rank 0 exit $st0, expected 1"
[ $st1 = 0 ] || fail "report.json: rank 1 exit $st1, expected 0"
within "$took" 12 || fail "report.json: rank 0 took ${took}s"
grep -q "error: write $d/report.json: open of $d/report.json.tmp did not return within 1s: $fs_line; the case files written before are in $d/cases/ (gradsync report $d reads them once it answers), a case that could not write its own printed its table as it ended; the table follows" "$T/end.0.err" ||
	{ fail "report.json: no line naming it, the open and where the results are"; cat "$T/end.0.err"; }
grep -q "warning: write $d/status: not attempted: the open of $d/report.json.tmp has not returned for [0-9]*s: $fs_line" "$T/end.0.err" ||
	{ fail "report.json: the status write was not refused naming the open"; cat "$T/end.0.err"; }
# the per-size table's row: size, count, iterations, then the times
grep -q "^ *64KiB  *16384  *5  *[0-9.][0-9.]* " "$T/end.0.out" ||
	{ fail "report.json: the table lacks the figures"; cat "$T/end.0.out"; }
python3 - "$d" <<'PY' || fail "report.json: cases/0000.json"
import json, sys
c = json.load(open(sys.argv[1] + "/cases/0000.json"))
assert c["status"] == "ok" and c["collective"][1]["busbw_GBps"] > 0, c["status"]
PY
[ -e "$d/report.md" ] && fail "report.json: report.md written after report.json failed"
echo "report.json: rank 0 exit $st0 ${took}s after rank 1 started; table on the terminal"

# 3. A case's file: case 1 of two (a [matrix]); its rows-so-far file after the first size
# waits, then its file at the end is refused at once; its table reaches the terminal;
# rank 0 stops the job (rank 1 is told) instead of running on.
cat >>"$T/od.ini" <<INI
[matrix]
transport.streams = 1, 2
INI
hand case cases/0001.json.tmp
[ $st0 = 1 ] || fail "case file: rank 0 exit $st0, expected 1"
[ $st1 = 0 ] && fail "case file: rank 1 exit 0, the job was not stopped"
within "$took" 15 || fail "case file: rank 0 took ${took}s"
grep -q "error: write $d/cases/0001.json: open of $d/cases/0001.json.tmp did not return within 1s: $fs_line; the case goes on, its file is written as it ends" "$T/case.0.err" ||
	{ fail "case file: no line naming the rows' file and the open"; cat "$T/case.0.err"; }
grep -q "error: write $d/cases/0001.json: not attempted: the open of $d/cases/0001.json.tmp has not returned for [0-9]*s: $fs_line; this case's results follow" "$T/case.0.err" ||
	{ fail "case file: no line for the case's file"; cat "$T/case.0.err"; }
grep -q "^ *[0-9]*  *streams=2  *ok" "$T/case.0.out" && grep -q "^ *64KiB  *16384  *5  *[0-9.][0-9.]* " "$T/case.0.out" ||
	{ fail "case file: the case's table is not on the terminal"; cat "$T/case.0.out"; }
grep -q "cases/0001.json.tmp" "$T/case.1.err" || { fail "case file: rank 1 not told why"; cat "$T/case.1.err"; }
echo "case file: rank 0 exit $st0, rank 1 exit $st1, ${took}s; the case's table on the terminal"

# 4. The directory stops answering after the cases wrote their files (local driver, two
# cases): the driver's read back of cases/0000.json waits (strace holds its open 8 s; the
# run directory's name is known only once made: every name of the next 40 s is held).
# The cases ran: they read "unread", not "failed", one line names the directory, the call
# and the bound, exit 1; once it answers, gradsync report DIR shows them whole.
if command -v strace >/dev/null 2>&1; then
	held=
	now=$(date +%s)
	for k in $(seq -2 40); do
		held="$held -P $T/late/od-$(date -u -d @$((now + k)) +%Y%m%d-%H%M%S)/cases/0000.json"
	done
	# shellcheck disable=SC2086 # $held is many words
	held_run late "stopped answering" 60 $held -e trace=openat \
		-e inject=openat:delay_enter=8000000
	d=$(ls -d "$T"/late/od-* | head -n 1)
	[ $st = 1 ] || fail "late: exit $st, expected 1"
	# from the last case's file written (the driver reads the files back then) to the line
	gap=$(python3 -c "import os,sys; print(round(float(sys.argv[1]) + float(sys.argv[2] or 1e9) - os.path.getmtime(sys.argv[3]), 1))" \
		"$t0" "$said" "$d/cases/0001.json")
	within "$gap" 5 || fail "late: the line came ${gap}s after the last case's file (bound 1s)"
	grep -q "error: run directory $d stopped answering as the results were read back: open of $d/cases/0000.json did not return within 1s: $fs_line; a case not read back is marked unread, not failed (gradsync report $d shows what was written once the directory answers)$" "$T/late.err" ||
		{ fail "late: no line naming the directory, the call and the bound"; cat "$T/late.err"; }
	grep -q "failed" "$T/late.out" && { fail "late: the report says failed"; cat "$T/late.out"; }
	grep -q "^ *1  *streams=1  *unread " "$T/late.out" && grep -q "^ *2  *streams=2  *unread " "$T/late.out" ||
		{ fail "late: the cases are not marked unread"; cat "$T/late.out"; }
	notes=$(tr '\n' ' ' <"$T/late.out" | tr -s ' ')
	for c in 0000 0001; do
		echo "$notes" | grep -q "unread: its results file $d/cases/$c.json was not read back, the run directory stopped answering: .*; its ranks exited 0; gradsync report $d shows what was written once the directory answers" ||
			{ fail "late: case $c's note"; cat "$T/late.out"; }
	done
	# answering again: the cases' own files say they ran to their end
	"$G" report "$d" >"$T/late2.out" 2>&1 || fail "late: gradsync report $d: exit $?"
	grep -q "^ *1  *streams=1  *ok " "$T/late2.out" && grep -q "^ *2  *streams=2  *ok " "$T/late2.out" ||
		{ fail "late: gradsync report $d lacks the cases"; cat "$T/late2.out"; }
	echo "late: exit $st, the line ${gap}s after the last case's file (bound 1s), cases unread, then whole"
else
	echo "late: strace not installed, not checked"
fi

[ $fails = 0 ] && echo "outdir: all passed"
exit $((fails > 0))
