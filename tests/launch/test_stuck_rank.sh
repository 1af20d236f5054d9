#!/bin/sh
# A rank whose process runs but whose main thread is stuck (here in the test hook
# GRADSYNC_TEST_DELAY=RANK:USEC@N, a minute's sleep before its 100th AllReduce that no
# abort ends) still answers rank 0's ping from its bootstrap thread, so "does not answer"
# cannot name it. Its neighbours time out naming the peer they wait on, and which of
# their aborts comes first is chance. Rank 0's probe hears that its main thread has not
# returned from the case a second after the abort: the case's reason names that rank,
# its host and pid, and what it is stuck in, ahead of the job's first reason. With the
# stuck rank at two positions: the run ends within a bound, exit 1, the driver
# terminates the stuck rank once rank 0 is done, and the cases before and after it keep
# their results. A rank merely slow to return (its sleep ends just after the timeout) is
# not named. Rank 0 stuck: its own bootstrap thread names it in the same words, in its
# log and the case's file. A timeout of 2 s, and of 1 s, still leaves rank 0 the time to
# name the stuck rank before the driver ends it: the blame window shrinks with the
# timeout (launch/blame_window.h: 1.5 s at 3 s and under, its grace 0.43 s), and the
# driver ends the ranks no sooner, nor later than the timeout where it is 1.5 s or more. A workload's comm thread stuck, ranks
# started by hand: its rank gives it up within twice the timeout, saying what it is in,
# and exits 1 by itself, after rank 0 named it.
set -u
. "$(dirname "$0")/../lib_net.sh"
rank_test_begin

cat >"$T/job.ini" <<INI
[experiment]
name = stuck
output_dir = $T/results
[collective]
sizes = 64KiB
iterations = 200
warmup = 0
verify = off
[transport]
transport = tcp
[launch]
local_ranks = 4
timeout = 3s
[matrix]
op = write_lat, allreduce, write_bw
INI

# stuck_job TAG HOOK [TIMEOUT]: run the job with GRADSYNC_TEST_DELAY=HOOK ([launch]
# timeout TIMEOUT, else 3s); st its exit, took seconds
stuck_job() {
	sed "s/^timeout = .*/timeout = ${3:-3s}/" "$T/job.ini" >"$T/$1.ini"
	start=$(date +%s)
	GRADSYNC_TEST_DELAY=$2 timeout -s KILL 60 "$G" run "$T/$1.ini" >"$T/$1.out" 2>"$T/$1.err"
	st=$?
	took=$(( $(date +%s) - start ))
	dir=$(ls -td "$T"/results/stuck-* | head -n 1)
}

# for_stuck TAG VICTIM TIMEOUT_S: the run's exit, time and log, the driver's end of the
# stuck rank, and the report: the cases around kept, the failed one naming the victim
for_stuck() {
	tag=$1 victim=$2
	[ $st = 1 ] || { fail "$tag: exit $st, expected 1"; cat "$T/$tag.err"; }
	# the timeout, a second's grace, a second's linger, three short cases: not 60 s
	[ $took -le 25 ] || fail "$tag: the run took ${took}s"
	grep -q "error: rank $victim (host $(hostname), pid [0-9]*) is stuck: its main thread has not returned from the case [0-9.]* s after the job aborted; it has been in the test hook GRADSYNC_TEST_DELAY for [0-9.]* s; the job stopped on: " "$T/$tag.err" ||
		{ fail "$tag: rank $victim is not named stuck"; cat "$T/$tag.err"; }
	grep -q "rank $victim killed by signal 15" "$T/$tag.err" ||
		{ fail "$tag: the driver did not terminate rank $victim"; cat "$T/$tag.err"; }
	python3 - "$dir" "$victim" "$3" <<'PY' || fail "$tag: report.json"
import json, re, sys
r = json.load(open(sys.argv[1] + "/report.json"))
v = int(sys.argv[2])
c = r["cases"]
assert [x["status"] for x in c] == ["ok", "failed", "ok"], [x["status"] for x in c]
# the cases around the failed one keep their figures
for x in (c[0], c[2]):
    rows = x["collective"]
    assert rows and rows[0]["time_us"]["avg"] > 0, x["name"]
err = c[1]["error"]
m = re.match(r"rank (\d+) \(host (\S+), pid (\d+)\) is stuck: its main thread has not returned "
             r"from the case (\d+\.\d) s after the job aborted; it has been in the test hook "
             r"GRADSYNC_TEST_DELAY for (\d+\.\d) s; the job stopped on: (.+)", err)
assert m, err
# the stuck rank itself, by the pid the case's hosts list gives it: not a waiter
host = [h for h in c[1]["hosts"] if h["rank"] == v][0]
assert int(m.group(1)) == v and int(m.group(3)) == host["pid"], (err[:120], host)
# told after the grace (launch/blame_window.c: min(3.5 s, max(1.5 s, timeout / 2)), 2/7 of
# it, rounded down to the ms), not before; stuck since before the others timed out
tmo = float(sys.argv[3])
grace = min(3500, max(1500, int(tmo * 1000) // 2)) * 1000 // 3500 / 1000
assert int(grace * 10) / 10 <= float(m.group(4)) < 3.0, (m.group(4), grace)  # said to 0.1 s
assert float(m.group(5)) >= float(sys.argv[3]), m.group(5)
# and the job's first reason after it, whole: a waiter's, naming a peer or a rank
assert re.search(r"(peer|rank) \d", m.group(6)), m.group(6)
print("rank %d stuck: %s" % (v, err[:230]))
PY
	echo "$tag: rank $victim stuck, exit $st in ${took}s"
}

for victim in 1 3; do
	stuck_job s$victim "$victim:60000000@100"
	for_stuck s$victim $victim 3
done

# rank 0 stuck: it runs the probe, so its own bootstrap thread names it, in its log and
# in the case's file, which the report keeps (not the driver's "hung or stopped")
stuck_job s0 "0:60000000@100"
for_stuck s0 0 3

# a short timeout: the driver waits for rank 0's probe (its window, 1.5 s) before it ends
# the ranks (with 1 s it ended rank 0 mid-probe, and the stuck rank before it was asked)
for tmo in 2 1; do
	stuck_job t$tmo "2:60000000@100" ${tmo}s
	for_stuck t$tmo 2 $tmo
done

# slow, not stuck: rank 2 sleeps 3.4 s before its 100th AllReduce, its neighbours give up
# after 3 s, it returns from the case 0.4 s after the abort, within the grace
stuck_job slow "2:3400000@100"
[ $took -le 25 ] || fail "slow rank: the run took ${took}s"
grep -q "is stuck" "$T/slow.err" && { fail "slow rank: named stuck"; grep "is stuck" "$T/slow.err"; }
python3 - "$dir" <<'PY' || fail "slow rank: report.json"
import json, sys
c = json.load(open(sys.argv[1] + "/report.json"))["cases"]
assert c[0]["status"] == "ok" and c[2]["status"] == "ok", [x["status"] for x in c]
assert "is stuck" not in (c[1].get("error") or ""), c[1]["error"]
print("slow rank: case 2 %s: %s" % (c[1]["status"], (c[1].get("error") or "")[:120]))
PY
echo "slow rank: exit $st in ${took}s"

# A workload whose comm thread is stuck (the hook before rank 1's 60th bucket AllReduce:
# iteration 15's last bucket), 4 ranks by hand over tcp, so no driver ends rank 1: it
# waits for its comm thread twice the timeout (4 s) once the abort stopped it, says what
# it is in, and exits 1 by itself; rank 0 named it meanwhile.
port=$(free_port $((22000 + $$ % 9000)))
export GRADSYNC_TOKEN=stuck-rank-test-token
cat >"$T/wl.ini" <<INI
[experiment]
name = wl
output_dir = $T/results
[workload]
model = custom
layers = a:4096, b:4096, c:4096, d:4096
bucket_cap = 16KiB
compute = none
iterations = 50
warmup = 1
[transport]
transport = tcp
[launch]
timeout = 2s
INI
# rank 1 keeps on purpose what its stuck thread may still use, the experiment among it
# (its transports read the case's options): a sanitizer build's leak check would count it
start=$(now)
for r in 0 1 2 3; do
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	GRADSYNC_TEST_DELAY=1:60000000@60 "$G" run "$T/wl.ini" --rank $r --world-size 4 \
		--rendezvous 127.0.0.1:$port >"$T/wl.$r.log" 2>&1 &
	pids="$pids $!"
done
sts= r=0
for p in $pids; do
	# every wait has a bound: a rank still there 30 s on is a hang
	for i in $(seq 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$p" 2>/dev/null && { fail "comm thread stuck: rank $r still running 30 s on"; kill -9 "$p"; }
	wait "$p"
	sts="$sts $?"
	# rank 1 ends last: the time it took is this one
	[ $r = 1 ] && took=$(elapsed "$start")
	r=$((r + 1))
done
pids=
[ "$sts" = " 1 1 1 1" ] || fail "comm thread stuck: exits$sts, expected 1 1 1 1"
# setup, 2 s to the neighbours' timeout, a second for the reason, 4 s, exit
within "$took" 20 || fail "comm thread stuck: rank 1 took ${took}s to end"
python3 - "$T" "$(hostname)" <<'PY' || fail "comm thread stuck: the lines"
import glob, json, re, sys
T, host = sys.argv[1], sys.argv[2]
log1 = open(T + "/wl.1.log").read()
m = re.search(r"gradsync\[rank 1\]: error: the comm thread did not return within twice the "
              r"timeout \(4\.0 s\) of being told to stop: it is in the AllReduce of bucket 3, "
              r"begun (\d+\.\d) s ago, and has been in the test hook GRADSYNC_TEST_DELAY for "
              r"(\d+\.\d) s; Connection timed out\n", log1)
assert m, log1[-2000:]
# the timeout, the wait for the reason, then its 4 s: not sooner; its record since then
assert 6.0 <= float(m.group(1)) < 12 and abs(float(m.group(2)) - float(m.group(1))) <= 0.2, m.groups()
rep = json.load(open(glob.glob(T + "/results/wl-*/report.json")[0]))
c = rep["cases"][0]
pid = [h for h in c["hosts"] if h["rank"] == 1][0]["pid"]
line = (r"rank 1 \(host %s, pid %d\) is stuck: its comm thread has not returned from the case "
        r"\d\.\d s after the job aborted; it has been in the test hook GRADSYNC_TEST_DELAY for "
        r"\d+\.\d s; the job stopped on: .*(peer|rank) \d" % (re.escape(host), pid))
assert c["status"] == "failed" and re.match(line, c["error"]), c["error"]
assert re.search("error: " + line, open(T + "/wl.0.log").read())
print("comm thread stuck: " + m.group(0).strip()[:200])
PY
echo "comm thread stuck: exits$sts, rank 1 ended in ${took}s"

# Rank 0 slow past the grace, ranks by hand (no driver ends it): its bootstrap thread
# names it stuck and writes the case's stand-in, then its main thread comes back (4 s in
# the hook, the others timed out at 2 s), probes and writes its own account, which stays:
# one writer decides (run_case_save; case_save_test forces the other order too).
port=$(free_port $((port + 1)))
sed -e "s/^timeout = .*/timeout = 2s/" -e "/^local_ranks/d" \
	-e "s#^output_dir = .*#output_dir = $T/r0res#" "$T/job.ini" >"$T/r0.ini"
pids=
for r in 0 1 2 3; do
	GRADSYNC_TEST_DELAY=0:4000000@100 "$G" run "$T/r0.ini" --rank $r --world-size 4 \
		--rendezvous 127.0.0.1:$port >"$T/r0.$r.log" 2>&1 &
	pids="$pids $!"
done
# shellcheck disable=SC2086 # every rank's pid
reap_all "rank 0 slow" 30 $pids
pids=
[ "$sts" = " 1 1 1 1" ] || fail "rank 0 slow: exits$sts, expected 1 1 1 1"
python3 - "$T" <<'PY' || { fail "rank 0 slow: its account"; cat "$T/r0.0.log"; }
import glob, json, re, sys
T = sys.argv[1]
log = open(T + "/r0.0.log").read()
# the stand-in was said, then the main thread came back, in that order
named = log.find("error: rank 0 (host ")
back = log.find("gradsync[rank 0]: case op=allreduce: rank 0's main thread came back after its bootstrap thread named it stuck; the case's file holds the main thread's account")
assert 0 <= named < back, log[-2000:]
d = glob.glob(T + "/r0res/stuck-*")
c = json.load(open(d[0] + "/cases/0001.json"))
# the main thread's account: the job's reason, rank 0 not named
assert c["status"] == "failed" and "is stuck" not in c["error"], c["error"]
assert re.match(r"rank [123] aborted: ", c["error"]), c["error"]
rep = json.load(open(d[0] + "/report.json"))["cases"]
assert rep[1]["error"] == c["error"], rep[1]["error"]
print("rank 0 slow: case 2 kept the main thread's account: " + c["error"][:100])
PY
echo "rank 0 slow past the grace: exits$sts"
[ $fails = 0 ]
