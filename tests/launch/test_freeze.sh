#!/bin/sh
# Rank 0 frozen (SIGSTOP, as Ctrl-Z or a debugger would) under hand launch, then resumed:
# the other ranks time out meanwhile, and rank 0 wakes to their aborts, the first read of
# which may be a waiter's ("waits on peer 1", from a rank whose neighbour had already
# given up). The job's reason, in rank 0's log and in the report, is rank 0's freeze and
# how long it lasted, with the first abort after it. Rank 1 frozen: rank 0's report names
# rank 1, the rank that does not answer, not whichever waiter's abort came first.
set -u
. "$(dirname "$0")/../lib_net.sh"
rank_test_begin
port=$(free_port $((22000 + $$ % 9000)))
export GRADSYNC_TOKEN=freeze-test-token

cat >"$T/job.ini" <<INI
[experiment]
name = freeze
output_dir = $T/results
[collective]
sizes = 1MiB
iterations = 100000
warmup = 0
verify = off
[transport]
transport = tcp
[launch]
timeout = 3s
INI

# freeze_job TAG VICTIM: 3 ranks by hand; once they iterate, SIGSTOP rank VICTIM for 6 s
# (twice the timeout), then SIGCONT; sts holds the exits in rank order
freeze_job() {
	pids=
	for r in 0 1 2; do
		"$G" run "$T/job.ini" --rank $r --world-size 3 --rendezvous 127.0.0.1:$port \
			>"$T/$1.$r.log" 2>&1 &
		pids="$pids $!"
	done
	for i in $(seq 200); do
		grep -q "iteration" "$T/$1.0.log" 2>/dev/null && break
		sleep 0.1
	done
	victim=$(echo $pids | cut -d' ' -f$(($2 + 1)))
	kill -STOP "$victim"
	sleep 6
	kill -CONT "$victim"
	# shellcheck disable=SC2086 # every rank's pid
	reap_all "$1" 30 $pids
	pids=
}

freeze_job f0 0
[ "$sts" = " 1 1 1" ] || fail "rank 0 frozen: exits$sts, expected 1 1 1"
grep -q "error: .*rank 0 did not run for [6-9]\.[0-9] s (stopped: SIGSTOP, Ctrl-Z or a debugger; or its host paused) and the job timed out meanwhile; then: rank [12] aborted" "$T/f0.0.log" ||
	{ fail "rank 0 frozen: its log does not put the job's end down to its freeze"; cat "$T/f0.0.log"; }
python3 - "$(ls -td "$T"/results/freeze-* | head -n 1)" <<'PY' || fail "rank 0 frozen: report.json does not give the freeze as the reason"
import json, re, sys
r = json.load(open(sys.argv[1] + "/report.json"))
c = r["cases"][0]
assert c["status"] == "failed", c["status"]
assert re.match(r"rank 0 did not run for [6-9]\.\d s ", c["error"]), c["error"]
print("rank 0 frozen: " + c["error"][:150])
PY

# rank 1 frozen: rank 0 times out on rank 2, which waits on rank 1, at about the time
# rank 2 does; whichever abort comes first, rank 0's ping finds the rank that does not
# answer and the report names it, with its host and pid
port=$(free_port $((port + 1)))
freeze_job f1 1
[ "$sts" = " 1 1 1" ] || fail "rank 1 frozen: exits$sts, expected 1 1 1"
grep -q "rank 0 did not run" "$T/f1.0.log" && { fail "rank 1 frozen: rank 0 says it froze itself"; cat "$T/f1.0.log"; }
grep -q "error: rank 1 (host $(hostname), pid [0-9]*) does not answer: its process is stopped (SIGSTOP, Ctrl-Z or a debugger) or its host froze; the job stopped on: " "$T/f1.0.log" ||
	{ fail "rank 1 frozen: rank 0 does not name rank 1 as the rank that does not answer"; cat "$T/f1.0.log"; }
grep -q "rank 1 did not run for [6-9]\.[0-9] s" "$T/f1.1.log" ||
	{ fail "rank 1 frozen: rank 1 does not say it was frozen"; cat "$T/f1.1.log"; }
python3 - "$(ls -td "$T"/results/freeze-* | head -n 1)" <<'PY' || fail "rank 1 frozen: report.json does not name rank 1"
import json, sys
c = json.load(open(sys.argv[1] + "/report.json"))["cases"][0]
assert c["status"] == "failed", c["status"]
assert c["error"].startswith("rank 1 (host "), c["error"]
# whole: the stall line's end (what tcp holds for the peer) is kept, not cut at 256 or
# 400 characters as the bootstrap's and the log's buffers did
assert c["error"].endswith(" s ago"), c["error"][-80:]
print("rank 1 frozen: %s ... %s (%d characters)" % (c["error"][:100], c["error"][-40:], len(c["error"])))
PY
[ $fails = 0 ]
