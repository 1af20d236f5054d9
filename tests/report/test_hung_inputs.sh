#!/bin/sh
# Inputs on a file system that stops answering (a dead NFS mount, a FUSE mount whose
# daemon stopped: stat, open and mkdir wait there for ever) fail the command within its
# bound, one line naming the path, the call and the bound, instead of hanging it. Without
# such a mount: strace holds the calls on one path (-P) for a few seconds longer than the
# bound. The time asserted is when the line shows; the process itself ends only when
# strace lets the held call go (a real one ends when the exit's SIGKILL ends NFS's wait).
# - gradsync report --timeout 1s: a report.json's open, a run directory's stat, a case
#   file of a run without report.json, the listing of its cases/ (exit 2: an input that
#   cannot be read); --out's mkdir and the look for files it would overwrite (exit 1);
# - the bound where no option gives one (30 s, [report] write_timeout's default): an
#   experiment's include (gradsync check), run --replay DIR's experiment.ini, a sysfs
#   tree's directory (topo --sysfs-root) and attribute (doctor --sysfs-root: its checks'
#   walk), the profile gpu --write writes, at once (exit 1 for the last three);
# - a stop signal while such a call waits: SIGINT 1 s into a held include ends the wait
#   at once (well under 1 s), its line naming the call still pending, exit 130.
set -u
. "$(dirname "$0")/../lib_net.sh"
rank_test_begin
F=$PWD/tests/fixtures/reports
[ -x "$G" ] || { echo "no $G: build first"; exit 77; }
elapsed() { python3 -c "import time,sys; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$1"; }
within() { python3 -c "import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))" "$1" "$2"; }
fs_line='is its file system ([^ ]* at /[^)]*) reachable?'

"$G" report "$F/tcp_shm.json" --timeout 1ns >/dev/null 2>"$T/arg.err"
st=$?
[ $st = 2 ] || fail "--timeout 1ns: exit $st, expected 2"
grep -qx "gradsync report: --timeout '1ns': expected a duration 100ms..24h such as 30s" "$T/arg.err" ||
	{ fail "--timeout 1ns: message"; cat "$T/arg.err"; }
if ! command -v strace >/dev/null 2>&1; then
	echo "strace not installed (apt-get install strace): the hung calls are not checked"
	[ $fails = 0 ] && exit 77
	exit 1
fi

# held NAME CALLS PATH SECONDS CMD...: CMD started under strace, each of CALLS on PATH
# held SECONDS; its output in $T/NAME.out and .err. Sets pid.
held() {
	name=$1 calls=$2 path=$3 secs=$4
	shift 4
	# LeakSanitizer cannot work under ptrace: an ASan build checks no leaks here
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 120 strace -o "$T/$name.trace" \
		-f -P "$path" -e trace="$calls" -e inject="$calls:delay_enter=$((secs * 1000000))" \
		"$@" >"$T/$name.out" 2>"$T/$name.err" &
	pid=$!
	pids="$pids $pid"
}
# said NAME T0 LIMIT: the seconds from T0 until $T/NAME.err said a call did not return,
# "" when not within LIMIT s.
said() {
	for i in $(seq $(($3 * 20))); do
		grep -q "did not return" "$T/$1.err" && { elapsed "$2"; return; }
		sleep 0.05
	done
}
# check NAME EXIT BOUND LINE [T]: $pid (held) exits EXIT, its error line showed within
# BOUND (or at T, when said before) plus a margin for a loaded 2-core host, and is LINE
# (a grep pattern), the only line besides strace's own.
check() {
	t=${5-$(said "$1" "$t0" $(($3 + 15)))}
	wait "$pid"
	st=$?
	[ "$st" = "$2" ] || fail "$1: exit $st, expected $2"
	[ -n "$t" ] && within "$t" $(($3 + 4)) || fail "$1: the error took ${t:-over $(($3 + 15))}s (bound $3s)"
	grep -q "^$4\$" "$T/$1.err" || { fail "$1: no line naming the path, the call and the bound"; cat "$T/$1.err"; }
	[ "$(grep -cv '^strace: ' "$T/$1.err")" = 1 ] || { fail "$1: more than one line"; cat "$T/$1.err"; }
	echo "$1: exit $st, the error after ${t}s (bound $3s)"
}

# The default bound first, in the background: 30 s, held 34 s.
printf '[experiment]\nname = inc\ninclude = %s\n' "$T/inc.ini" >"$T/e.ini"
printf '[collective]\nsizes = 4KiB\n' >"$T/inc.ini"
"$G" check "$T/e.ini" >/dev/null || fail "check e.ini: exit $?"
mkdir -p "$T/rep"
printf '[experiment]\nname = rep\noutput_dir = %s\n' "$T/res" >"$T/rep/experiment.ini"
t30=$(date +%s.%N)
held inc openat "$T/inc.ini" 34 "$G" check "$T/e.ini"
pid_inc=$pid
held replay newfstatat,statx,stat "$T/rep/experiment.ini" 34 "$G" run --replay "$T/rep"
pid_replay=$pid
cp -a "$PWD/tests/fixtures/sysfs/dgx-h100" "$T/sys"
held topo openat "$T/sys/class/infiniband" 34 "$G" topo --sysfs-root "$T/sys"
pid_topo=$pid
held doctor openat "$T/sys/kernel/mm/transparent_hugepage/enabled" 34 "$G" doctor --sysfs-root "$T/sys"
pid_doctor=$pid
held gpu openat "$T/prof.txt" 34 "$G" gpu --profile h200 --write "$T/prof.txt"
pid_gpu=$pid

mkdir -p "$T/run" "$T/part/cases"
cp "$F/tcp_shm.json" "$T/run/report.json"
python3 - "$F/tcp_shm.json" "$T/part" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for i, c in enumerate(d["cases"]):
    json.dump(c, open(f"{sys.argv[2]}/cases/{i:04d}.json", "w"))
open(f"{sys.argv[2]}/status", "w").write("running: pid 1\n")
PY
"$G" report "$T/part" >/dev/null 2>&1 || fail "report of a run without report.json: exit $?"

t0=$(date +%s.%N)
held file openat "$T/run/report.json" 4 "$G" report "$T/run" --timeout 1s
check file 2 1 "gradsync: error: $T/run/report.json: cannot read: open of $T/run/report.json did not return within 1s: $fs_line"
t0=$(date +%s.%N)
held dir newfstatat,statx,stat "$T/run" 4 "$G" report "$T/run" --timeout 1s
check dir 2 1 "gradsync: error: stat $T/run: stat of $T/run did not return within 1s: $fs_line"
t0=$(date +%s.%N)
held case openat "$T/part/cases/0001.json" 4 "$G" report "$T/part" --timeout 1s
check case 2 1 "gradsync: error: read $T/part/cases/0001.json: open of $T/part/cases/0001.json did not return within 1s: $fs_line"
t0=$(date +%s.%N)
held list openat "$T/part/cases" 4 "$G" report "$T/part" --timeout 1s
check list 2 1 "gradsync: error: list $T/part/cases: open of $T/part/cases did not return within 1s: $fs_line"
t0=$(date +%s.%N)
held mkdir mkdir,mkdirat "$T/o1" 4 "$G" report "$T/run" --out "$T/o1" --timeout 1s
check mkdir 1 1 "gradsync: error: mkdir $T/o1: mkdir of $T/o1 did not return within 1s: $fs_line"
[ -s "$T/mkdir.out" ] && fail "mkdir: a report was printed before --out answered"
mkdir -p "$T/o2"
t0=$(date +%s.%N)
held out newfstatat,statx,stat "$T/o2/report.md" 4 "$G" report "$T/run" --out "$T/o2" --timeout 1s
check out 1 1 "gradsync: error: --out $T/o2: stat of $T/o2/report.md did not return within 1s: $fs_line"

# every line's time before any process ends (at 34 s)
for n in inc replay topo doctor gpu; do
	eval "t_$n=\$(said $n \"\$t30\" 45)"
done
pid=$pid_inc
check inc 2 30 "$T/e.ini:3: include: cannot read '$T/inc.ini': open of $T/inc.ini did not return within 30s: $fs_line" "$t_inc"
pid=$pid_replay
check replay 2 30 "gradsync run: --replay $T/rep: stat of $T/rep/experiment.ini did not return within 30s: $fs_line" "$t_replay"
[ -e "$T/res" ] && fail "replay: a run directory was made"
pid=$pid_topo
check topo 1 30 "gradsync: error: sysfs root $T/sys: open of $T/sys/class/infiniband did not return within 30s: $fs_line" "$t_topo"
[ -s "$T/topo.out" ] && fail "topo: a topology was printed"
pid=$pid_doctor
check doctor 1 30 "gradsync: error: sysfs root $T/sys: read of $T/sys/kernel/mm/transparent_hugepage/enabled did not return within 30s: $fs_line" "$t_doctor"
[ -s "$T/doctor.out" ] && fail "doctor: a verdict was printed"
pid=$pid_gpu
check gpu 1 30 "gradsync gpu: write $T/prof.txt: open of $T/prof.txt did not return within 30s: $fs_line" "$t_gpu"

# SIGINT 1 s into a held include (its bound 30 s, held 8 s): the line within the stop's
# grace, and the process's main thread gone with it (its exit then waits in the kernel
# for the held call alone: strace's hold here, NFS's killable wait on a real mount);
# exit 130, as the default action. SIGINT at its default action first: a shell starts
# its background jobs ignoring it, and an ignored signal is no stop.
dfl_int='import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])'
held stop openat "$T/inc.ini" 8 python3 -c "$dfl_int" "$G" check "$T/e.ini"
for i in $(seq 200); do grep -q 'openat(' "$T/stop.trace" 2>/dev/null && break; sleep 0.05; done
sleep 1
gpid=$(pgrep -P "$(pgrep -P "$pid")")
t0=$(date +%s.%N)
kill -INT "$gpid"
# the moments seen (date: python's start would take longer than what is measured)
at_line='' at_exit=''
for i in $(seq 200); do
	[ -z "$at_line" ] && grep -q "stopped by" "$T/stop.err" && at_line=$(date +%s.%N)
	# the leader a zombie (or gone): main returned, the held thread alone is left
	[ -z "$at_exit" ] && ! grep -qs '^State:.*[RSDt]' "/proc/$gpid/status" && at_exit=$(date +%s.%N)
	[ -n "$at_line" ] && [ -n "$at_exit" ] && break
	sleep 0.02
done
since() { [ -n "$1" ] && python3 -c "import sys; print(f'{float(sys.argv[1]) - float(sys.argv[2]):.2f}')" "$1" "$t0"; }
t_line=$(since "$at_line") t_exit=$(since "$at_exit")
wait "$pid"
st=$?
[ "$st" = 130 ] || fail "stop: exit $st, expected 130"
[ -n "$t_line" ] && within "$t_line" 1 || fail "stop: the line took ${t_line:-over 4}s after SIGINT"
[ -n "$t_exit" ] && within "$t_exit" 1 || fail "stop: the process took ${t_exit:-over 4}s to exit after SIGINT"
grep -qx "$T/e.ini:3: include: cannot read '$T/inc.ini': stopped by SIGINT while the open of $T/inc.ini was pending" "$T/stop.err" ||
	{ fail "stop: no line naming the call still pending"; cat "$T/stop.err"; }
[ "$(grep -cv '^strace: ' "$T/stop.err")" = 1 ] || { fail "stop: more than one line"; cat "$T/stop.err"; }
echo "stop: exit $st, the line ${t_line}s and the exit ${t_exit}s after SIGINT (held 1s)"

[ $fails = 0 ] && echo "hung inputs: all passed"
exit $((fails > 0))
