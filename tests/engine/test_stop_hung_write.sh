#!/bin/sh
# A stop signal while rank 0's case file is being written to a directory that does not
# answer, end to end: a real `gradsync run` of 3 ranks whose case-file write hangs (a
# FIFO stands where cases/0000.json.tmp goes: its open waits for a reader, in the
# kernel, as an NFS call whose server went away; rank 0 sleeps a second in the test hook
# before its first AllReduce, so the FIFO is there first; [report] write_timeout is 60 s),
# then SIGTERM, once rank 0 is seen waiting in that open (its wchan):
# - to the local driver, which forwards it to its ranks;
# - to every rank of a job started by hand (the flags launcher), as srun or mpirun
#   forward it to each rank.
# Either way the driver and every rank exit 143 within 10 s (not the 60 s bound), rank 0
# says in one line which write it gave up (and under a launcher, in one more, that
# report.json is not written, instead of a line per file blaming the file system), no
# process of the run is left (pgrep on the test's own experiment file), and nothing
# half-written is taken for a result: no cases/0000.json, the report's case interrupted
# with no figures. The figures rank 0 had reach the terminal, as for any case file that
# could not be written. And the local driver's own first write after the stop (its status
# file, a FIFO at status.tmp this time) is given up on at the stop's grace, not at
# write_timeout: exit 143 within 5 s, one line naming that write.
set -u
. "$(dirname "$0")/../lib_net.sh"
rank_test_begin
# the write left pending is rank 0's on purpose: its job is the stuck call's to free
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
ini=$T/stopw.ini
cat >"$ini" <<INI
[experiment]
name = stopw
output_dir = $T/results
[collective]
sizes = 64KiB
iterations = 20
warmup = 0
[transport]
transport = tcp
[launch]
local_ranks = 3
timeout = 20s
[report]
formats = table,json
write_timeout = 60s
INI

# hang TAG: once the run directory exists (made before any rank ran a case), a FIFO at
# its cases/0000.json.tmp; then wait (10 s at most) until a process of the run sits in
# the FIFO's open: rank 0 writing the case. The run directory in $d.
hang() {
	d=
	for i in $(seq 200); do
		d=$(ls -d "$T/results"/stopw-* 2>/dev/null | head -n 1)
		[ -n "$d" ] && [ -e "$d/status" ] && break
		sleep 0.05
	done
	[ -n "$d" ] && mkfifo "$d/cases/0000.json.tmp" || { fail "$1: no run directory"; return 1; }
	for i in $(seq 200); do
		for p in $(pgrep -f "$ini"); do
			grep -qsx wait_for_partner /proc/$p/task/*/wchan && return 0
		done
		sleep 0.05
	done
	fail "$1: no rank waits in the open of $d/cases/0000.json.tmp"
	return 1
}
# reap TAG PID...: wait for each (10 s at most from $t0: a rank still there is a hang),
# exits in $sts, seconds since $t0 in $took; then no process of the run may be left
reap() {
	tag=$1
	shift
	reap_all "$tag" 10 "$@"
	took=$(elapsed "$t0")
	within "$took" 10 || fail "$tag: ${took}s to stop (write_timeout 60 s)"
	sleep 0.2
	left=$(pgrep -af "$ini")
	[ -z "$left" ] || { fail "$tag: processes left: $left"; pkill -9 -f "$ini"; }
}
# given_up TAG LOG: LOG has rank 0's one line naming the write given up, once
given_up() {
	[ "$(grep -cxF "gradsync[rank 0]: error: write $d/cases/0000.json: stopped by SIGTERM while the open of $d/cases/0000.json.tmp was pending; this case's results follow" "$2")" = 1 ] ||
		{ fail "$1: no one line naming the write given up"; cat "$2"; }
	# the figures it had, on the terminal: the row of the one size, every column filled
	grep -q "^ *base  *64KiB  *16384  *20  *[0-9.][0-9.]* " "$T/$1.out" ||
		{ fail "$1: the case's table is not on the terminal"; cat "$T/$1.out"; }
	# nothing half-written taken for a result
	[ -e "$d/cases/0000.json" ] && fail "$1: cases/0000.json exists"
}

# --- the local driver: SIGTERM to it, forwarded to its 3 ranks
GRADSYNC_TEST_DELAY=0:1000000@1 "$G" run "$ini" >"$T/local.out" 2>"$T/local.err" &
drv=$!
pids=$drv
hang local
t0=$(now)
kill -TERM $drv
reap local $drv
[ "$sts" = " 143" ] || fail "local: exit$sts, expected 143"
given_up local "$T/local.err"
grep -qxF "gradsync: warning: got SIGTERM, forwarding it to ranks 0-2" "$T/local.err" ||
	{ fail "local: the driver does not say it forwarded SIGTERM"; cat "$T/local.err"; }
# rank 0's only error: the ranks it saw leave were stopped by the same signal
[ "$(grep -c '^gradsync\[rank 0\]: error' "$T/local.err")" = 1 ] ||
	{ fail "local: rank 0 said more than the write it gave up"; cat "$T/local.err"; }
python3 - "$d" <<'PY' || fail "local: report.json"
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
c = r["cases"][0]
assert r["status"] == "interrupted", r["status"]
assert c["status"] == "interrupted" and c["collective"] == [], (c["status"], c["collective"])
assert c["error"] == ("interrupted by Terminated before its results file was written "
                      "(rank 0 writes it as the case ends)"), c["error"]
print("local: case 0 %s: %s" % (c["status"], c["error"]))
PY
grep -q "^interrupted: " "$d/status" || fail "local: status: $(cat "$d/status")"
echo "local driver: exit$sts after ${took}s, nothing left: $(grep 'rank 0' "$T/local.err" | head -n 1)"

# --- the local driver's own write after the stop: its status file's open hangs (a FIFO at
# status.tmp, made once the case runs). The driver took SIGTERM itself (sigtimedwait), so
# no later signal ends that wait: the write, begun after the stop, has only the stop's grace
# (FSB_STOP_WRITE_GRACE_NS, 2 s: a slow disk that answers still takes the report), not
# write_timeout's 60 s
rm -rf "$T/results"
GRADSYNC_TEST_DELAY=0:1000000@1 "$G" run "$ini" >"$T/own.out" 2>"$T/own.err" &
drv=$!
# the case runs once the driver has spawned its 3 ranks (stop signals blocked by then)
for i in $(seq 200); do
	[ "$(pgrep -c -P $drv)" = 3 ] && break
	sleep 0.05
done
d=$(ls -d "$T/results"/stopw-* 2>/dev/null | head -n 1)
[ -n "$d" ] && mkfifo "$d/status.tmp" || fail "own: no case running in a run directory"
t0=$(now)
kill -TERM $drv
reap own $drv
[ "$sts" = " 143" ] || fail "own: exit$sts, expected 143"
within "$took" 5 || fail "own: ${took}s to stop, want within a few seconds (write_timeout 60 s)"
# the write given up, named once, in one line; the report not attempted after it, said once
[ "$(grep -cxF "gradsync: warning: write $d/status: stopped by SIGTERM: the open of $d/status.tmp did not return within its grace (2s)" "$T/own.err")" = 1 ] ||
	{ fail "own: no one line naming the status write given up"; cat "$T/own.err"; }
[ "$(grep -c "status.tmp" "$T/own.err")" = 2 ] &&
	grep -qF "gradsync: error: $d/report.json not written: stopped by SIGTERM while the open of $d/status.tmp was pending; " "$T/own.err" ||
	{ fail "own: the report's line, once"; cat "$T/own.err"; }
grep -q "reachable?" "$T/own.err" && { fail "own: a line blames the file system"; cat "$T/own.err"; }
echo "local driver, its own write hung: exit$sts after ${took}s: $(grep 'status.tmp did not' "$T/own.err")"

# --- 3 ranks by hand, SIGTERM to each (a launcher forwarding it)
rm -rf "$T/results"
port=$(free_port $((25000 + $$ % 6000)))
export GRADSYNC_TOKEN=stop-hung-write
pids=
for r in 0 1 2; do
	GRADSYNC_TEST_DELAY=0:1000000@1 "$G" run "$ini" --rank $r --world-size 3 \
		--rendezvous 127.0.0.1:$port >"$T/hand$r.out" 2>"$T/hand$r.err" &
	pids="$pids $!"
done
cp /dev/null "$T/hand.out"
hang hand
t0=$(now)
# shellcheck disable=SC2086 # every rank's pid
kill -TERM $pids
# shellcheck disable=SC2086
reap hand $pids
[ "$sts" = " 143 143 143" ] || fail "hand: exits$sts, expected 143 143 143"
cp "$T/hand0.out" "$T/hand.out"
given_up hand "$T/hand0.err"
# report.json is not attempted, in one line, and no file is blamed on the file system
grep -qxF "gradsync[rank 0]: error: $d/report.json not written: stopped by SIGTERM while the open of $d/cases/0000.json.tmp was pending; the case files written before are in $d/cases/ (gradsync report $d reads them once the directory answers)" "$T/hand0.err" ||
	{ fail "hand: no line saying report.json is not written"; cat "$T/hand0.err"; }
grep -q "reachable?" "$T/hand0.err" && { fail "hand: a line blames the file system"; cat "$T/hand0.err"; }
[ -e "$d/report.json" ] && fail "hand: report.json written"
# every rank: its one line of the stop, the job's (run/stop.h), and nothing more
for r in 0 1 2; do
	grep -q "^gradsync\[rank $r\]: error: bootstrap: aborting the job: rank [012] stopped by SIGTERM on host " "$T/hand$r.err" ||
		{ fail "hand: rank $r does not say the job stopped"; cat "$T/hand$r.err"; }
	[ $r = 0 ] || [ "$(grep -c error "$T/hand$r.err")" = 1 ] ||
		{ fail "hand: rank $r says more than the stop"; cat "$T/hand$r.err"; }
done
# what the directory holds, read once it answers: no case
"$G" report "$d" >"$T/late.out" 2>&1 || fail "hand: gradsync report $d: exit $?"
grep -q "^1 run, 0 cases\.$" "$T/late.out" || { fail "hand: gradsync report lists a case"; cat "$T/late.out"; }
echo "by hand: exits$sts after ${took}s, nothing left, no report.json: $(grep -c error "$T/hand0.err") lines of rank 0"

[ $fails = 0 ] && echo "stop during a hung write: all passed"
exit $((fails > 0))
