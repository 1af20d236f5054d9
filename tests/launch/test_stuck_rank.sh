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
# not named.
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

# stuck_job TAG HOOK: run the job with GRADSYNC_TEST_DELAY=HOOK; st its exit, took seconds
stuck_job() {
	start=$(date +%s)
	GRADSYNC_TEST_DELAY=$2 timeout -s KILL 60 "$G" run "$T/job.ini" >"$T/$1.out" 2>"$T/$1.err"
	st=$?
	took=$(( $(date +%s) - start ))
	dir=$(ls -td "$T"/results/stuck-* | head -n 1)
}

for victim in 1 3; do
	stuck_job s$victim "$victim:60000000@100"
	[ $st = 1 ] || { fail "rank $victim stuck: exit $st, expected 1"; cat "$T/s$victim.err"; }
	# a 3 s timeout, a second's grace, a second's linger, three short cases: not 60 s
	[ $took -le 25 ] || fail "rank $victim stuck: the run took ${took}s"
	grep -q "error: rank $victim (host $(hostname), pid [0-9]*) is stuck: its main thread has not returned from the case [0-9.]* s after the job aborted; it has been in the test hook GRADSYNC_TEST_DELAY for [0-9.]* s; the job stopped on: " "$T/s$victim.err" ||
		{ fail "rank $victim stuck: rank 0 does not name it"; cat "$T/s$victim.err"; }
	grep -q "rank $victim killed by signal 15" "$T/s$victim.err" ||
		{ fail "rank $victim stuck: the driver did not terminate it"; cat "$T/s$victim.err"; }
	python3 - "$dir" "$victim" <<'PY' || fail "rank $victim stuck: report.json"
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
# told after the grace, not before; stuck since before the others timed out
assert 1.0 <= float(m.group(4)) < 3.0, m.group(4)
assert float(m.group(5)) >= 3.0, m.group(5)
# and the job's first reason after it, whole: a waiter's, naming a peer or a rank
assert re.search(r"(peer|rank) \d", m.group(6)), m.group(6)
print("rank %d stuck: %s" % (v, err[:230]))
PY
	echo "rank $victim stuck: exit $st in ${took}s"
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
[ $fails = 0 ]
