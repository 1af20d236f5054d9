#!/bin/sh
# What a user sees while a run goes: rank 0 alone prints each case line and each
# size's row as it is measured, -q silences that, workloads print their iterations,
# and a rank slowed by the test hook GRADSYNC_TEST_DELAY=RANK:USEC (it sleeps before
# each AllReduce, so the others wait for it) is named as the straggler in the terminal,
# report.json and report.md; op = pairwise measures and reports every rank pair; a
# failed case's report keeps the first error printed, the real cause.
set -u
. "$(dirname "$0")/../lib.sh"
test_begin

cat >"$T/s.ini" <<INI
[experiment]
name = prog
output_dir = $T/results
[collective]
sizes = 4KiB, 64KiB
iterations = 12
warmup = 1
[transport]
transport = tcp
[launch]
local_ranks = 3
timeout = 60s
[report]
formats = json,md
INI
GRADSYNC_TEST_DELAY=2:20000 "$G" run "$T/s.ini" >"$T/out" 2>"$T/err" ||
	fail "slowed run: exit $?: $(tail -n 5 "$T/err")"
n=$(grep -c '^case 1/1: base (3 ranks)$' "$T/err")
[ "$n" = 1 ] || fail "case line printed $n times (rank 0 alone should): $(cat "$T/err")"
grep -Eq '^ +4KiB +1024 +f32 +sum ' "$T/err" || fail "no 4KiB row as measured: $(cat "$T/err")"
grep -Eq '^ +64KiB +16384 ' "$T/err" || fail "no 64KiB row"
grep -q 'straggler at 4096 bytes: rank 2 (host ' "$T/err" || fail "terminal names no straggler"
d=$(ls -d "$T"/results/prog-*)
grep -q '^- base, 4KiB: rank 2 (host ' "$d/report.md" || fail "report.md names no straggler"
python3 - "$d/report.json" <<'PY' || fail "report.json per-rank fields"
import json, sys
rep = json.load(open(sys.argv[1]))
for row in rep["cases"][0]["collective"]:
    rk = row["ranks"]
    assert rk["slowest"] == 2, rk
    assert rk["straggler"]["rank"] == 2 and rk["straggler"]["host"], rk
    assert rk["spread"] > 1.5, rk
    assert len(rk["mean_us"]) == 3 and len(rk["iter_us"]) == 3, rk
    assert all(len(x) == row["iterations"] for x in rk["iter_us"]), rk
    # the slowest rank's own time is the shortest: the others waited for it
    assert rk["mean_us"][2] < min(rk["mean_us"][0], rk["mean_us"][1]), rk
PY

# A live line at least every 2 s, even while one iteration takes 3 s (rank 1 is late
# by 3 s at each AllReduce): rank 0's ticker redraws it from the last state.
cat >"$T/long.ini" <<INI
[experiment]
name = long
output_dir = $T/results
[collective]
sizes = 4KiB
iterations = 2
warmup = 0
[transport]
transport = tcp
[launch]
local_ranks = 2
timeout = 60s
[report]
formats = json
INI
python3 - "$G" "$T/long.ini" <<'PY' || fail "live line gaps"
import os, subprocess, sys, time
env = dict(os.environ, GRADSYNC_TEST_DELAY="1:3000000")
p = subprocess.Popen([sys.argv[1], "run", sys.argv[2]], stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE, text=True, env=env)
stamps = []
for line in p.stderr:
    stamps.append((time.monotonic(), line.rstrip()))
assert p.wait() == 0, stamps
live = [t for t, l in stamps if " iteration " in l and "ETA" in l]
assert len(live) >= 4, stamps
first = live[0]
row = [t for t, l in stamps if l.lstrip().startswith("4KiB")][0]
ts = [t for t, l in stamps if first <= t <= row]
gap = max(b - a for a, b in zip(ts, ts[1:]))
print("lines:", len(ts), "longest gap: %.2fs" % gap)
assert gap <= 2.0, gap
PY

# Before the first case rank 0 waits for the others: a live line says how many ranks
# are there, at least every 2 s, until the last one comes (rank 1 starts 2.5 s late).
python3 - "$G" "$T/long.ini" <<'PY' || fail "waiting-for-ranks line"
import subprocess, sys, threading, time
args = ["run", sys.argv[2], "--world-size", "2", "--rendezvous", "127.0.0.1:%d" % (20000 + time.time_ns() % 20000), "--token", "t"]
t0 = time.monotonic()
p0 = subprocess.Popen([sys.argv[1]] + args + ["--rank", "0"], stdout=subprocess.DEVNULL,
                      stderr=subprocess.PIPE, text=True)
late = []
threading.Timer(2.5, lambda: late.append(subprocess.Popen(
    [sys.argv[1]] + args + ["--rank", "1"], stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL))).start()
stamps = [(time.monotonic(), l.rstrip()) for l in p0.stderr]
assert p0.wait() == 0 and late and late[0].wait() == 0, stamps
waits = [t for t, l in stamps if l.startswith("waiting for ranks: 1/2 ranks, ")]
assert waits, stamps
case = [t for t, l in stamps if l.startswith("case 1/1: ")][0]
ts = [t0] + [t for t, l in stamps if t <= case]
gap = max(b - a for a, b in zip(ts, ts[1:]))
print("waiting lines:", len(waits), "longest gap before the case: %.2fs" % gap)
assert gap <= 2.0, (gap, stamps)
PY

# -q: no progress at all (a warning may still come: 3 ranks on 2 cores can really
# have a straggler, so none is asserted absent here).
"$G" -q run "$T/s.ini" >"$T/out" 2>"$T/err" || fail "quiet run: exit $?"
grep -v 'warning: straggler' "$T/err" | grep -q . && fail "-q printed: $(cat "$T/err")"

# A workload prints each iteration as it ends.
cat >"$T/w.ini" <<INI
[experiment]
name = wl
output_dir = $T/results
[workload]
model = resnet18
batch = 8
compute = sleep
gpu_tflops = 50
iterations = 3
warmup = 1
[launch]
local_ranks = 2
timeout = 60s
[report]
formats = json
INI
"$G" run "$T/w.ini" >"$T/out" 2>"$T/err" || fail "workload run: exit $?"
n=$(grep -c '^  iteration [0-9]/3: [0-9.]* ms (forward' "$T/err")
[ "$n" = 3 ] || fail "workload printed $n iteration lines, expected 3: $(cat "$T/err")"

# op = pairwise: every pair of 3 ranks at each size, its sender's figures, the table.
cat >"$T/p.ini" <<INI
[experiment]
name = pw
output_dir = $T/results
[collective]
op = pairwise
sizes = 4KiB, 256KiB
iterations = 10
[launch]
local_ranks = 3
timeout = 60s
[report]
formats = json,md
INI
"$G" run "$T/p.ini" >"$T/out" 2>"$T/err" || fail "pairwise run: exit $?: $(tail -n 5 "$T/err")"
n=$(grep -Ec '^ +(4|256)KiB +[0-9]-[0-9] +[0-9.]+ +[0-9.]+' "$T/err")
[ "$n" = 6 ] || fail "pairwise printed $n pair rows, expected 6: $(cat "$T/err")"
d=$(ls -d "$T"/results/pw-*)
grep -q '^### #1 base: rank pairs' "$d/report.md" || fail "report.md has no rank pairs table"
python3 - "$d/report.json" <<'PY' || fail "pairwise report.json"
import json, sys
rows = json.load(open(sys.argv[1]))["cases"][0]["collective"]
assert [r["size"] for r in rows] == [4096, 262144], rows
for r in rows:
    assert r["op"] == "pairwise"
    assert [(p["a"], p["b"]) for p in r["pairs"]] == [(0, 1), (0, 2), (1, 2)], r["pairs"]
    assert all(p["bw_GBps"] > 0 and p["lat_us"] > 0 and p["host_a"] for p in r["pairs"]), r
    assert isinstance(r["slow_pairs"], list)
PY

# A failed case keeps its first real cause in the report, not the errno passed up.
cat >"$T/ib.ini" <<INI
[experiment]
name = ibf
output_dir = $T/results
[transport]
transport = ib
[collective]
sizes = 4KiB
[launch]
local_ranks = 2
timeout = 20s
[report]
formats = json
INI
"$G" run "$T/ib.ini" >"$T/out" 2>"$T/err" && fail "ib without an RDMA NIC passed"
d=$(ls -d "$T"/results/ibf-*)
python3 - "$d/report.json" "$T/err" <<'PY' || fail "failed case's reason"
import json, sys
err = json.load(open(sys.argv[1]))["cases"][0]["error"]
first = [l for l in open(sys.argv[2]) if ": error: " in l][0].split(": error: ", 1)[1].strip()
assert err == first or err.endswith(first), (err, first)
assert "transport ib" in err or "ib" in err.split(":")[0], err
PY

[ $fails = 0 ] && echo "progress: all checks passed"
[ $fails = 0 ]
