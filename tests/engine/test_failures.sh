#!/bin/sh
# Failure handling end to end: a rank killed mid-run makes every other rank exit non-zero
# within the timeout with a message naming it; a rank stopped (hung) under the local
# driver is named and terminated within a second of rank 0, in a DDP workload too, and a
# hung rank 0 (which writes the results) is named in the report by the driver; a stranger
# with garbage and one with the wrong token at the rendezvous are refused while the run
# completes; a rank silent in the host exchange fails the first case in the report, with
# the reason.
set -u
. "$(dirname "$0")/../lib_net.sh"
rank_test_begin
port=$(free_port $((20000 + $$ % 10000)))

cat >"$T/long.ini" <<INI
[experiment]
name = kill
output_dir = $T/results
[collective]
sizes = 16MiB
iterations = 100000
warmup = 0
verify = off
[transport]
transport = TRANSPORT
[launch]
timeout = 10s
INI
for tp in tcp shm; do
	sed "s/TRANSPORT/$tp/" "$T/long.ini" >"$T/$tp.ini"
	pids=
	for r in 0 1 2; do
		"$G" run "$T/$tp.ini" --rank $r --world-size 3 --rendezvous 127.0.0.1:$port \
			--token kill-test >"$T/$tp.$r.log" 2>&1 &
		pids="$pids $!"
	done
	sleep 3
	victim=$(echo $pids | cut -d' ' -f3)
	kill -9 "$victim"
	start=$(date +%s)
	for p in $(echo $pids | cut -d' ' -f1-2); do
		if wait "$p"; then fail "$tp: a survivor exited 0"; fi
	done
	took=$(( $(date +%s) - start ))
	[ $took -le 12 ] || fail "$tp: survivors took ${took}s (timeout 10s)"
	for r in 0 1; do
		grep -q "rank 2" "$T/$tp.$r.log" || {
			fail "$tp: rank $r's log does not name rank 2:"; tail -n 5 "$T/$tp.$r.log"; }
	done
	echo "$tp: survivors stopped in ${took}s: $(grep -h 'rank 2' "$T/$tp.0.log" | head -n 1)"
	port=$(free_port $((port + 1)))
done

# case_failed_with GLOB WHAT TEXT1 TEXT2: the first case of the run directory GLOB names
# failed, its error holding both texts (printed after WHAT)
case_failed_with() {
	python3 - "$(ls -d $1 | head -n 1)" "$2" "$3" "$4" <<'PY'
import json, sys
c = json.load(open(sys.argv[1] + "/report.json"))["cases"][0]
assert c["status"] == "failed", c["status"]
assert sys.argv[3] in c["error"] and sys.argv[4] in c["error"], c["error"]
print(sys.argv[2] + ": " + c["error"][:160])
PY
}

# stop_rank INI ERR N: run INI under the local driver (3 ranks), SIGSTOP its Nth rank
# (by pid) once they iterate (at $stopped, seconds), wait for the driver (st: its exit
# status), then kill the stopped rank. 1 when the ranks never started.
stop_rank() {
	"$G" run "$1" >/dev/null 2>"$2" &
	drv=$!
	pids="$drv"
	ranks=
	for i in $(seq 100); do
		ranks=$(pgrep -P $drv | sort -n)
		[ "$(echo "$ranks" | grep -c .)" = 3 ] && grep -q "iteration" "$2" && break
		sleep 0.1
	done
	victim=$(echo "$ranks" | sed -n "${3}p")
	[ -n "$victim" ] || return 1
	kill -STOP "$victim"
	stopped=$(date +%s)
	wait $drv
	st=$?
	kill -KILL "$victim" 2>/dev/null
	pids=
}

# stop_fails_case WHAT INI N GLOB TEXT1 TEXT2: stop_rank INI's Nth rank (its stderr in
# INI.err); the driver exits 1 and the first case of the run directory GLOB names failed
# with both texts in its reason
stop_fails_case() {
	if ! stop_rank "$2" "$2.err" "$3"; then
		fail "$1: ranks never started"
		return
	fi
	[ $st = 1 ] || fail "$1: driver exit $st, expected 1"
	case_failed_with "$4" "$1" "$5" "$6" ||
		fail "$1: the case's reason does not hold '$5' and '$6'"
}

# A rank hung (SIGSTOP) mid-collective under the local driver: the others time out
# naming it, and the driver stops the hung rank a second after rank 0 has left (it used
# to wait out a second timeout, then 2 s more for SIGKILL: 12 s here instead of 6).
for tp in tcp shm; do
	sed "s/TRANSPORT/$tp/; s/^timeout = 10s/timeout = 5s/; s/^\[launch\]/[launch]\nlocal_ranks = 3/" \
		"$T/long.ini" >"$T/stop.ini"
	stop_rank "$T/stop.ini" "$T/stop.err" 2 ||
		{ fail "stop $tp: ranks never started"; continue; }
	took=$(( $(date +%s) - stopped ))
	[ $st = 1 ] || fail "stop $tp: driver exit $st, expected 1"
	[ $took -le 9 ] || fail "stop $tp: ${took}s to stop (timeout 5s)"
	grep -q "peer 1" "$T/stop.err" && grep -q "rank 1 killed by signal 15" "$T/stop.err" || {
		fail "stop $tp: no error naming peer 1, or rank 1 not terminated:"
		grep -v iteration "$T/stop.err" | tail -n 8; }
	# the line ends with what the transport holds for the stopped peer (transport_ops.pending)
	case $tp in
	shm) want='; shm peer 1: sends: .* receives: .* process [0-9]* alive' ;;
	*) want='; tcp peer 1: [0-9]* requests posted and not completed, [0-9]* bytes queued and not written; bytes last came from it [0-9.]* s ago' ;;
	esac
	grep 'waits on .* peer 1' "$T/stop.err" | grep -q "$want" || {
		fail "stop $tp: the timeout line does not say what $tp holds for peer 1:"
		grep -m 1 'waits on' "$T/stop.err"; }
	echo "stop $tp: driver exit $st in ${took}s: $(grep -m 1 -o 'waits on .* peer 1.*' "$T/stop.err")"
done

# Rank 0 itself hung (SIGSTOP) under the local driver: it writes the case's results, so
# nobody does; the report's reason is the driver's account, naming the rank that failed
# first and rank 0, terminated while still running (it said "no results file: the
# case's ranks failed before writing it, or the write failed").
sed "s/TRANSPORT/tcp/; s/^timeout = 10s/timeout = 3s/; s/^\[launch\]/[launch]\nlocal_ranks = 3/" \
	"$T/long.ini" >"$T/stop0.ini"
sed -i "s#^output_dir = .*#output_dir = $T/stop0#" "$T/stop0.ini"
stop_fails_case "stop rank 0" "$T/stop0.ini" 1 "$T/stop0/kill-*" "exited with status 1" \
	"rank 0, still running"

# A rank hung (SIGSTOP) in a DDP workload: the case's reason, in the report, names the
# hung rank as the one that does not answer rank 0's ping, before the first abort (the
# AllReduce's stall, or a barrier's timeout; it was the compute thread's own bucket wait,
# "timed out waiting for bucket 2 of 3", which fired first and named nobody).
cat >"$T/wl.ini" <<INI
[experiment]
name = wl
output_dir = $T/wl
[workload]
model = resnet18
compute = sleep
iterations = 100000
warmup = 0
[transport]
transport = shm
[launch]
local_ranks = 3
timeout = 3s
INI
stop_fails_case "workload stop" "$T/wl.ini" 2 "$T/wl/wl-*" "rank 1 (host" "does not answer"

# Strangers at the rendezvous: garbage and a wrong token; the job must still finish.
cat >"$T/ok.ini" <<INI
[experiment]
name = strangers
output_dir = $T/results
[collective]
sizes = 1MiB
iterations = 3
[launch]
timeout = 20s
INI
pids=
"$G" run "$T/ok.ini" --rank 0 --world-size 2 --rendezvous 127.0.0.1:$port --token right \
	>"$T/s0.log" 2>&1 &
pids="$!"
sleep 0.5
python3 - "$port" <<'PY'
import socket, sys, struct
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"GET / HTTP/1.0\r\n\r\n" + bytes(range(256)) * 4)
s.close()
PY
GRADSYNC_TOKEN= "$G" run "$T/ok.ini" --rank 1 --world-size 2 --rendezvous 127.0.0.1:$port \
	--token wrong >"$T/bad.log" 2>&1 &
bad=$!
"$G" run "$T/ok.ini" --rank 1 --world-size 2 --rendezvous 127.0.0.1:$port --token right \
	>"$T/s1.log" 2>&1 &
pids="$pids $!"
for p in $pids; do wait "$p" || fail "strangers: a real rank failed"; done
wait $bad && fail "the wrong-token rank was accepted"
grep -qi "token" "$T/s0.log" || { fail "rank 0 did not log the refused token"; cat "$T/s0.log"; }
ls "$T"/results/strangers-*/report.json >/dev/null 2>&1 || fail "no report"
# A rank that never answers the host exchange (just after the bootstrap; strace holds its
# read of the boot id for 3 s, timeout 1s): rank 0 fails the first case with the reason
# and the report says failed (it listed no case and said "done" while exiting 1).
if command -v strace >/dev/null 2>&1; then
	port=$(free_port $((port + 1)))
	sed 's/^timeout = 20s/timeout = 1s/' "$T/ok.ini" >"$T/early.ini"
	"$G" run "$T/early.ini" --out "$T/early" --rank 0 --world-size 2 \
		--rendezvous 127.0.0.1:$port --token e >"$T/e0.log" 2>&1 &
	pids="$!"
	# LeakSanitizer cannot work under ptrace: an ASan build checks no leaks here
	nolsan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	ASAN_OPTIONS=$nolsan strace -o /dev/null -f -e trace=openat -e inject=openat:delay_enter=3000000 \
		-P /proc/sys/kernel/random/boot_id "$G" run "$T/early.ini" --out "$T/early" --rank 1 \
		--world-size 2 --rendezvous 127.0.0.1:$port --token e >"$T/e1.log" 2>&1
	wait $pids
	st=$?
	pids=
	[ $st = 1 ] || fail "early failure: rank 0 exit $st, expected 1"
	d=$(ls -d "$T"/early/strangers-* | head -n 1)
	grep -q "^failed" "$d/status" || fail "early failure: status: $(cat "$d/status")"
	python3 - "$d" <<'PY' || fail "early failure: report.json"
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
c = r["cases"]
assert r["status"] == "failed", r["status"]
assert len(c) == 1 and c[0]["status"] == "failed", c
assert "waiting for rank 1 (allgather)" in c[0]["error"], c[0]["error"]
PY
	echo "early failure: rank 0 exit $st; $(cat "$d/status")"
else
	echo "early failure: strace not installed, not checked"
fi
# Buffers past the machine's memory: 2 local ranks x (pristine + work) of 64 GiB are
# refused before any is allocated, naming the arithmetic; the OOM killer used to choose.
cat >"$T/mem.ini" <<INI
[experiment]
name = mem
output_dir = $T/mem
[collective]
sizes = 4KiB, 64GiB
iterations = 1
[launch]
local_ranks = 2
timeout = 20s
INI
t0=$(date +%s)
timeout 60 "$G" run "$T/mem.ini" >"$T/mem.out" 2>"$T/mem.err"
st=$?
took=$(($(date +%s) - t0))
[ $st = 1 ] || fail "memory: exit $st, expected 1"
grep -q "error: case base: 2 ranks on host .* need 256GiB for their buffers (128GiB each), .* available (MemAvailable): lower \[collective\] sizes or use fewer ranks per host" "$T/mem.err" ||
	{ fail "memory: no line with the arithmetic:"; cat "$T/mem.err"; }
[ "$(grep -c 'need 256GiB' "$T/mem.err")" -le 3 ] || fail "memory: said by every rank"
[ $took -le 15 ] || fail "memory: took ${took}s"
d=$(ls -d "$T/mem"/mem-* | head -n 1)
python3 - "$d" <<'PY' || fail "memory: report.json"
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
c = r["cases"]
assert r["status"] == "failed" and c[0]["status"] == "failed", (r["status"], c)
assert "need 256GiB for their buffers" in c[0]["error"], c[0]["error"]
PY
echo "memory: 2 x 128 GiB refused in ${took}s, exit $st"

# A rank that fails after writing its case's results (a crash in teardown, here an exit
# status 3 from a preloaded destructor once main has returned): the run exited 1 beside a
# "done" report; now the case reads failed with why, its figures kept.
cat >"$T/late.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((destructor)) static void late_exit(void)
{
	const char *r = getenv("GRADSYNC_RANK");

	if (r && !strcmp(r, "1") && getenv("GRADSYNC_CASE"))
		_exit(3);
}
C
if cc -shared -fPIC -o "$T/late.so" "$T/late.c" 2>"$T/late.cc"; then
	cat >"$T/late.ini" <<INI
[experiment]
name = late
output_dir = $T/late
[collective]
sizes = 4KiB
iterations = 5
[launch]
local_ranks = 2
INI
	# a sanitizer build wants its runtime first among the preloads: let it be second
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		LD_PRELOAD="$T/late.so" timeout 60 "$G" run "$T/late.ini" >"$T/late.out" 2>"$T/late.err"
	st=$?
	[ $st = 1 ] || fail "late exit: exit $st, expected 1"
	d=$(ls -d "$T/late"/late-* | head -n 1)
	grep -q "^failed" "$d/status" || fail "late exit: status: $(cat "$d/status")"
	python3 - "$d" <<'PY' || fail "late exit: report.json"
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
c = r["cases"][0]
assert r["status"] == "failed", r["status"]
assert c["status"] == "failed", c["status"]
assert "exited with status 3 after its results were written" in c["error"], c["error"]
assert c["collective"][0]["busbw_GBps"] > 0, c["collective"]
PY
	echo "late exit: exit $st; $(cat "$d/status")"
else
	echo "late exit: no C compiler for the preload, not checked"
fi

# The same under a launcher, where no driver sees the ranks' exits: rank 1 exits (status
# 3) in its case's teardown, when it unmaps its first buffer of 1 MiB or more (none before
# that in a rank: the case's buffers are its only ones), after its results went to rank 0.
# Rank 0's barrier after the last case fails: exit 1 and a "failed" report saying why,
# where it wrote "done" beside exit 1 before; the case's figures stay.
cat >"$T/gone.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int munmap(void *addr, size_t len)
{
	int (*real)(void *, size_t) = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");

	if (len >= (1u << 20))
		_exit(3);
	return real(addr, len);
}
C
if cc -shared -fPIC -o "$T/gone.so" "$T/gone.c" -ldl 2>"$T/gone.cc"; then
	sed -e "s/^name = late/name = gone/" -e "s#^output_dir = .*#output_dir = $T/gone#" \
		-e "/^local_ranks/d" "$T/late.ini" >"$T/gone.ini"
	gport=$(free_port $((port + 7)))
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		LD_PRELOAD="$T/gone.so" timeout 60 "$G" run "$T/gone.ini" --rank 1 --world-size 2 \
		--rendezvous 127.0.0.1:$gport --token gone-test >"$T/gone.1.log" 2>&1 &
	gpid=$!
	timeout 60 "$G" run "$T/gone.ini" --rank 0 --world-size 2 --rendezvous 127.0.0.1:$gport \
		--token gone-test >"$T/gone.0.log" 2>&1
	st=$?
	wait "$gpid"
	st1=$?
	[ $st1 = 3 ] || fail "lost at the end: rank 1 exit $st1, expected 3 (the preload)"
	[ $st = 1 ] || fail "lost at the end: rank 0 exit $st, expected 1"
	grep -q "barrier after the last case" "$T/gone.0.log" ||
		{ fail "lost at the end: no line on rank 0"; cat "$T/gone.0.log"; }
	d=$(ls -d "$T/gone"/gone-* | head -n 1)
	grep -q "^failed.*a rank was lost after the last case" "$d/status" ||
		fail "lost at the end: status: $(cat "$d/status")"
	python3 - "$d" <<'PY' || fail "lost at the end: report.json"
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
c = r["cases"][0]
assert r["status"] == "failed", r["status"]
assert "barrier after the last case failed" in r["error"], r.get("error")
assert c["status"] == "ok", c["status"]
assert c["collective"][0]["busbw_GBps"] > 0, c["collective"]
PY
	echo "lost at the end: rank 0 exit $st, rank 1 exit $st1; $(cat "$d/status")"
else
	echo "lost at the end: no C compiler for the preload, not checked"
fi

[ $fails = 0 ] && echo "failures: kills detected and strangers refused"
exit $((fails > 0))
