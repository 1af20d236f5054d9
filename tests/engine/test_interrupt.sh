#!/bin/sh
# Interrupted and crippled runs (issue 16) through the local driver: SIGINT, SIGTERM and
# SIGHUP (the terminal or ssh session gone) stop the whole run within a second or two
# (exit 130 / 143 / 129), under nohup SIGHUP changes nothing; they keep the finished
# cases, write the report of what ran and a status file; kill -9 of the driver keeps the
# finished cases and `gradsync report DIR` reads them; an unwritable report.json or case
# file still puts every figure on the terminal and names where the results are, and an
# unwritable trace names itself and fails its case, figures kept; a run directory removed
# mid-run is made again for the cases still to come; a case file is fsync'ed before its
# rename; a run whose output's reader is gone goes on to its report. Under a launcher,
# ranks catch the signal and stop the job through the bootstrap, and rank 0 while it still
# waits for them. Timing is asserted loosely (8 s, on a loaded 2-core host; a run that
# does not stop takes minutes).
set -u
. "$(dirname "$0")/../lib.sh"
test_begin
drv=
trap '[ -n "$drv" ] && kill -9 $drv 2>/dev/null; rm -rf "$T"' EXIT
cat >"$T/run.ini" <<INI
[experiment]
name = intr
[collective]
sizes = 4MiB
iterations = 200
[transport]
transport = tcp
[launch]
local_ranks = 2
timeout = 30s
[report]
formats = table,json
[matrix]
transport.streams = 1, 2, 3, 4
INI
# start OUT [INI [WRAPPER]]: the driver in the background (under WRAPPER, nohup say), its
# run directory in $dir once case 0 is done.
# A case takes about a second (200 iterations): a loaded host (load 14 in a CI run) took so
# long between seeing case 0 and signalling that 40 iterations a case had all but finished.
start() {
	mkdir -p "$T/$1"
	${3:-} "$G" run "${2:-$T/run.ini}" --out "$T/$1" >"$T/$1.out" 2>"$T/$1.err" &
	drv=$!
	dir=
	for i in $(seq 600); do
		dir=$(ls -d "$T/$1"/intr-* 2>/dev/null | head -n 1)
		[ -n "$dir" ] && [ -e "$dir/cases/0000.json" ] && return 0
		sleep 0.05
	done
	fail "$1: case 0 never finished: $(tail -n 3 "$T/$1.err")"
	return 1
}
# finish WANT DESC: wait for the driver start() began; its exit status in $st, a failure
# unless it is WANT
finish() {
	wait $drv
	st=$?
	drv=
	[ $st = "$1" ] || fail "$2: exit $st, expected $1"
}
elapsed() { python3 -c "import time,sys; print(f'{time.time() - float(sys.argv[1]):.2f}')" "$1"; }

for sig in INT TERM HUP; do
	want=$(case $sig in INT) echo 130 ;; TERM) echo 143 ;; HUP) echo 129 ;; esac)
	start $sig || continue
	t0=$(date +%s.%N)
	kill -$sig $drv
	finish $want "SIG$sig"
	took=$(elapsed $t0)
	python3 -c "import sys; sys.exit(float(sys.argv[1]) > 8)" "$took" ||
		fail "SIG$sig: the run took ${took}s to stop"
	grep -q "^interrupted" "$dir/status" || fail "SIG$sig: status: $(cat "$dir/status")"
	python3 - "$dir" <<'PY' || fail "SIG$sig: report.json"
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
assert r["status"] == "interrupted", r["status"]
st = [c["status"] for c in r["cases"]]
# stopped before the end: fewer cases, or the last one cut short
assert st[0] == "ok" and st[-1] in ("ok", "interrupted"), st
assert len(st) < 4 or st[-1] == "interrupted", st
assert r["cases"][0]["collective"][0]["busbw_GBps"] > 0
PY
	pgrep -P $$ >/dev/null 2>&1 && ps -o pid,args --ppid $$ | grep -q "gradsync run" &&
		fail "SIG$sig: a rank outlived the driver"
	echo "SIG$sig: exit $st after ${took}s; $(cat "$dir/status")"
done

# SIGINT in the middle of a case's sweep: the sizes it measured stay in report.json with
# every setting of the case (they were lost with the ranks, and the empty config made the
# fairness check list every key as differing)
# run.ini as one case sweeping seven sizes
sed -e 's/^sizes = .*/sizes = 1MiB..64MiB x2/' -e 's/^iterations = .*/iterations = 40/' \
	-e '/^\[matrix\]/,$d' "$T/run.ini" >"$T/sweep.ini"
mkdir -p "$T/mid"
"$G" run "$T/sweep.ini" --out "$T/mid" >"$T/mid.out" 2>"$T/mid.err" &
drv=$!
for i in $(seq 600); do
	[ "$(grep -c '^ *[0-9]*MiB ' "$T/mid.err")" -ge 2 ] && break
	sleep 0.05
done
kill -INT $drv
finish 130 "SIGINT mid-sweep"
python3 - "$(ls -d "$T"/mid/intr-*)" <<'PY' || fail "SIGINT mid-sweep: report.json"
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
c = r["cases"][0]
assert c["status"] == "interrupted", c["status"]
rows = c["collective"]
assert 2 <= len(rows) < 7 and all(x["busbw_GBps"] > 0 for x in rows), len(rows)
assert "the case stopped after %d of 7 sizes" % len(rows) in c["error"], c["error"]
assert c["config"]["collective.iterations"] == "40", c["config"].get("collective.iterations")
print("SIGINT mid-sweep: %d of 7 sizes kept (%s)" % (len(rows), c["error"]))
PY

# nohup: the user asked for the run to outlive the terminal; SIGHUP must not stop it
# (a blocked signal is queued even when ignored, so the driver's set must leave it out)
if start nohup "$T/run.ini" nohup; then
	kill -HUP $drv
	finish 0 "nohup, SIGHUP (the run goes on)"
	grep -q "^done" "$dir/status" || fail "nohup, SIGHUP: status: $(cat "$dir/status")"
	echo "nohup, SIGHUP: exit $st; $(cat "$dir/status")"
fi

# kill -9 of the driver: the finished cases stay and `gradsync report` reads them
if start kill9; then
	kill -9 $drv
	wait $drv 2>/dev/null
	drv=
	sleep 0.5
	[ -e "$dir/cases/0000.json" ] || fail "kill -9: case 0 is gone"
	grep -q "^running: pid" "$dir/status" || fail "kill -9: status: $(cat "$dir/status")"
	"$G" report "$dir" >"$T/rep.out" 2>"$T/rep.err" || fail "kill -9: gradsync report DIR failed"
	grep -q "no report.json: the run did not finish (status: running" "$T/rep.err" ||
		{ fail "kill -9: report does not say the run did not finish"; cat "$T/rep.err"; }
	grep -q "^  *[0-9]*  *streams=1 *ok" "$T/rep.out" || { fail "kill -9: case 0 not shown"; cat "$T/rep.out"; }
	# and --replay runs its experiment.ini, report.json or not
	"$G" -q run --replay "$dir" --case 1 --out "$T/rep9" >/dev/null 2>"$T/rep9.err" ||
		fail "kill -9: --replay DIR without report.json: $(cat "$T/rep9.err")"
	echo "kill -9: $(ls "$dir/cases" | wc -l) finished cases kept, gradsync report reads them, --replay reruns them"
fi

# report.json cannot be written (a directory squats its name): the table still shows
if start noreport; then
	mkdir "$dir/report.json"
	mkdir "$dir/cases/0002.json" # and case 2's file cannot be written either
	finish 1 "unwritable report"
	grep -q "write $dir/report.json: .*every finished case's results are in $dir/cases/" "$T/noreport.err" ||
		{ fail "unwritable report: the error does not say where the results are"; tail -n 5 "$T/noreport.err"; }
	grep -q "write $dir/cases/0002.json: .*this case's results follow" "$T/noreport.err" ||
		{ fail "unwritable case file: no error naming it"; tail -n 5 "$T/noreport.err"; }
	# case 2's figures come from its rank 0, the others from the driver's table
	grep -q "^  *[0-9]*  *streams=1 *ok" "$T/noreport.out" && grep -q "^  *[0-9]*  *streams=3 *ok" "$T/noreport.out" &&
		grep -q "^  *[0-9]*  *streams=4 *ok" "$T/noreport.out" ||
		{ fail "unwritable report: the terminal lacks figures"; cat "$T/noreport.out"; }
	grep -q "^failed" "$dir/status" || fail "unwritable report: status: $(cat "$dir/status")"
	echo "unwritable report.json and case file: every case on the terminal; $(cat "$dir/status")"
fi
# A workload case's trace-NNNN.json cannot be written (a directory squats its name):
# the line names the file and errno, the case reads failed with its figures kept, exit
# 1 (it said "write trace of case 0 failed" as a warning, exit 0, the file missing)
cat >"$T/tr.ini" <<INI
[experiment]
name = intr
[workload]
model = resnet18
compute = sleep
iterations = 40
warmup = 0
[transport]
transport = shm
[launch]
local_ranks = 2
[report]
formats = table,json
INI
mkdir -p "$T/trace"
"$G" run "$T/tr.ini" --out "$T/trace" >"$T/trace.out" 2>"$T/trace.err" &
drv=$!
dir=
for i in $(seq 600); do
	dir=$(ls -d "$T"/trace/intr-* 2>/dev/null | head -n 1)
	[ -n "$dir" ] && break
	sleep 0.05
done
mkdir "$dir/trace-0000.json"
finish 1 "unwritable trace"
grep -q "error: write $dir/trace-0000.json: Is a directory" "$T/trace.err" ||
	{ fail "unwritable trace: no line naming it"; grep -v '^ ' "$T/trace.err" | tail -n 5; }
python3 - "$dir" <<'PY' || fail "unwritable trace: report.json"
import json, sys
c = json.load(open(sys.argv[1] + "/report.json"))["cases"][0]
assert c["status"] == "failed", c["status"]
assert "trace-0000.json: Is a directory" in c["error"], c["error"]
assert c["workload"], c.get("workload")
PY
echo "unwritable trace: exit $st; $(cat "$dir/status")"
# A case file is on the disk before its name: its data is fsync'ed before the rename
# (the README says so; it was renamed unsynced, and a node that lost power could come
# back with an empty cases/0000.json, the finished case gone)
if command -v strace >/dev/null 2>&1; then
	sed -e '/^\[matrix\]/,$d' -e 's/^iterations = .*/iterations = 3/' "$T/run.ini" >"$T/sync.ini"
	mkdir -p "$T/sync"
	# LeakSanitizer cannot work under ptrace: an ASan build checks no leaks here
	nolsan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	ASAN_OPTIONS=$nolsan strace -f -y -o "$T/sync.trace" -e trace=fsync,fdatasync,rename \
		"$G" run "$T/sync.ini" --out "$T/sync" >/dev/null 2>&1 || fail "fsync: the run failed"
	if python3 - "$T/sync.trace" <<'PY'; then
import re, sys
synced = renamed = False
for line in open(sys.argv[1]):
    if re.search(r"f(data)?sync\(\d+<[^>]*/cases/0000\.json\.tmp[^>]*>\)\s+= 0", line):
        synced = True
    if re.search(r'rename\("[^"]*/cases/0000\.json\.tmp"', line):
        if not synced:
            sys.exit(1)
        renamed = True
    # then its directory, so that the new name survives a power cut too
    if renamed and re.search(r"fsync\(\d+<[^>]*/cases>\)\s+= 0", line):
        sys.exit(0)
sys.exit(1)
PY
		echo "fsync: cases/0000.json synced before its rename, cases/ after it"
	else
		fail "fsync: cases/0000.json was not fsync'ed before its rename, or cases/ after it"
	fi
else
	echo "fsync: strace not installed, not checked"
fi
# The run directory removed mid-run (rm -rf by hand or a cleanup job): it is made again,
# one line says so naming it, the cases after keep their results in report.json, the
# lost one reads failed, exit 1 (every later write failed: the final table called
# every case failed and sent the user to a cases/ that no longer existed)
if start removed; then
	rm -rf "$dir" 2>/dev/null || rm -rf "$dir"
	finish 1 "run directory removed"
	grep -q "error: run directory $dir was removed during the run: made it again" "$T/removed.err" ||
		{ fail "run directory removed: no line naming it"; grep -v '^ ' "$T/removed.err" | tail -n 5; }
	python3 - "$dir" <<'PY' || fail "run directory removed: report.json"
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
st = [c["status"] for c in r["cases"]]
assert r["status"] == "failed", r["status"]
assert st[0] == "failed" and st[1:] == ["ok"] * 3, st
assert all(c["collective"][0]["busbw_GBps"] > 0 for c in r["cases"][1:])
PY
	grep -q "^failed" "$dir/status" || fail "run directory removed: status: $(cat "$dir/status" 2>&1)"
	echo "run directory removed: made again, $(ls "$dir/cases" | wc -l) later cases kept; $(cat "$dir/status")"
fi
# The output's reader gone (`gradsync run x.ini 2>&1 | head`, ssh without a tty whose
# connection dropped): the run goes on to its report, status done, and exits 1 saying
# the output was lost (SIGPIPE killed the driver and rank 0 in the first case, status
# "running" for good, no report)
mkdir -p "$T/pipe"
{ "$G" run "$T/run.ini" --out "$T/pipe"; echo $? >"$T/pipe.st"; } 2>&1 | head -n 1 >/dev/null
dir=$(ls -d "$T"/pipe/intr-* | head -n 1)
[ "$(cat "$T/pipe.st")" = 1 ] || fail "reader gone: exit $(cat "$T/pipe.st"), expected 1 (output lost)"
grep -q "^done" "$dir/status" || fail "reader gone: status: $(cat "$dir/status")"
python3 - "$dir" <<'PY' || fail "reader gone: report.json"
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
assert r["status"] == "done" and [c["status"] for c in r["cases"]] == ["ok"] * 4, r["status"]
PY
echo "reader gone: exit $(cat "$T/pipe.st"); $(cat "$dir/status"), $(ls "$dir/cases" | wc -l) cases"
# A full disk (the temporary files of a case and of report.html lead to /dev/full):
# each failed write names its file and ENOSPC (they used to say "Input/output error",
# report.html's only of the directory), the case's figures reach the terminal, the
# other files are complete, exit 1.
sed 's/^formats = table,json/formats = table,json,html/' "$T/run.ini" >"$T/full.ini"
if start full "$T/full.ini"; then
	ln -s /dev/full "$dir/report.html.tmp"
	ln -s /dev/full "$dir/cases/0003.json.tmp"
	finish 1 "full disk"
	grep -q "write $dir/cases/0003.json: No space left on device; this case's results follow" "$T/full.err" ||
		{ fail "full disk: the case file's error does not say ENOSPC"; tail -n 5 "$T/full.err"; }
	grep -q "write $dir/report.html: No space left on device" "$T/full.err" ||
		{ fail "full disk: report.html's error does not name it with ENOSPC"; tail -n 5 "$T/full.err"; }
	[ -e "$dir/report.html" ] && fail "full disk: a report.html was left"
	grep -q "^  *[0-9]*  *streams=4 *ok" "$T/full.out" || { fail "full disk: case 4 not on the terminal"; cat "$T/full.out"; }
	python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$dir/report.json" ||
		fail "full disk: report.json unreadable"
	echo "full disk: $(grep -c 'No space left on device' "$T/full.err") writes named with ENOSPC; $(cat "$dir/status")"
fi
# Under a launcher (srun and mpirun forward Ctrl-C to every rank): each rank stops the
# job through the bootstrap, rank 0 writes the report of what ran, exit 130.
. "$(dirname "$0")/../lib_net.sh"
sed 's/^iterations = 200/iterations = 100000/' "$T/run.ini" >"$T/long.ini"
for who in all one; do
	port=$(free_port $((22000 + $$ % 9000)))
	rpids=
	for r in 0 1; do
		GRADSYNC_TOKEN=intr "$G" run "$T/long.ini" --out "$T/l$who" --rank $r --world-size 2 \
			--rendezvous 127.0.0.1:$port >"$T/l$who.$r.out" 2>"$T/l$who.$r.err" &
		rpids="$rpids $!"
	done
	sleep 3
	t0=$(python3 -c 'import time; print(time.time())')
	if [ $who = all ]; then kill -INT $rpids; else kill -TERM $(echo $rpids | cut -d' ' -f2); fi
	# bounded: a rank that ignores the signal (a background shell ignores SIGINT) dies
	(sleep 20; kill -9 $rpids 2>/dev/null) &
	guard=$!
	sts=
	for p in $rpids; do wait $p; sts="$sts $?"; done
	kill $guard 2>/dev/null
	took=$(elapsed $t0)
	want=$([ $who = all ] && echo " 130 130" || echo " 1 143")
	[ "$sts" = "$want" ] || fail "launcher, signal to $who: exits$sts, expected$want"
	python3 -c "import sys; sys.exit(float(sys.argv[1]) > 8)" "$took" ||
		fail "launcher, signal to $who: ${took}s to stop"
	d=$(ls -d "$T/l$who"/intr-* | head -n 1)
	python3 - "$d" "$who" <<'PY' || { fail "launcher, signal to $who: report.json"; cat "$T/l$who.0.err"; }
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
c = r["cases"]
assert len(c) == 1 and "stopped by SIG" in c[0].get("error", ""), c
assert r["status"] == ("interrupted" if sys.argv[2] == "all" else "failed"), r["status"]
PY
	echo "launcher, signal to $who: exits$sts after ${took}s; $(cat "$d/status")"
done

# Rank 0 under a launcher still waiting for its ranks (a node that never came up) and
# stopped: it ends at once, exit 130, with the report of the case it was waiting to run
# (interrupted) and status interrupted (SIGINT was ignored here and SIGTERM killed it
# outright: no report, status "running" for good)
port=$(free_port $((port + 1)))
GRADSYNC_TOKEN=intr "$G" run "$T/run.ini" --out "$T/lwait" --rank 0 --world-size 2 \
	--rendezvous 127.0.0.1:$port >"$T/lwait.out" 2>"$T/lwait.err" &
r0=$!
wait_listen $port || fail "launcher, waiting: rank 0 never listened"
t0=$(python3 -c 'import time; print(time.time())')
kill -INT $r0
(sleep 20; kill -9 $r0 2>/dev/null) &
guard=$!
wait $r0
st=$?
kill $guard 2>/dev/null
took=$(elapsed $t0)
[ $st = 130 ] || fail "launcher, waiting: exit $st, expected 130"
python3 -c "import sys; sys.exit(float(sys.argv[1]) > 5)" "$took" ||
	fail "launcher, waiting: ${took}s to stop"
d=$(ls -d "$T"/lwait/intr-* | head -n 1)
grep -q "^interrupted" "$d/status" || fail "launcher, waiting: status: $(cat "$d/status")"
python3 - "$d" <<'PY' || { fail "launcher, waiting: report.json"; tail -n 3 "$T/lwait.err"; }
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
assert r["status"] == "interrupted", r["status"]
assert [c["status"] for c in r["cases"]] == ["interrupted"], r["cases"]
PY
echo "launcher, waiting for ranks: exit $st after ${took}s; $(cat "$d/status")"

[ $fails = 0 ] && echo "interrupt: all passed"
exit $((fails > 0))
