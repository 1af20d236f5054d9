#!/bin/sh
# The DDP workload end to end: 2 ranks over tcp and shm, ResNet-18's buckets as
# `gradsync plan` prints them, metrics in range, the average checked bit-exactly, a
# 1-rank case for the scaling efficiency, and trace.json in the trace-event format; a
# replay runs the buckets the run ran, and a trace's samples/s comes from its own batch.
set -u
. "$(dirname "$0")/../lib.sh"
test_begin
cat >"$T/w.ini" <<INI
[experiment]
name = wl
output_dir = $T/results
[workload]
model = resnet18
batch = 16
compute = sleep
gpu_tflops = 50
iterations = 4
warmup = 1
[launch]
timeout = 60s
[report]
formats = json,html
[matrix]
transport = tcp, shm
local_ranks = 1, 2
exclude = transport=shm,local_ranks=1
INI
"$G" -q run "$T/w.ini" >"$T/out" 2>"$T/err" || { echo "run failed"; tail -n 20 "$T/err"; exit 1; }
"$G" plan --model resnet18 --json >"$T/plan.json" || exit 1
python3 - "$T" <<'PY' || exit 1
import glob, json, sys
T = sys.argv[1]
d = glob.glob(T + "/results/wl-*")[0]
rep = json.load(open(d + "/report.json"))
plan = json.load(open(T + "/plan.json"))
nb = len(plan["buckets"])
cases = {c["name"]: c for c in rep["cases"]}
assert len(cases) == 3, list(cases)
for name, c in cases.items():
    assert c["status"] == "ok", (name, c.get("error"))
    w = c["workload"]
    assert w["model"] == "resnet18" and w["params"] == 11689512, w["params"]
    assert w["buckets"] == nb == len(w["bucket_timeline"]), (w["buckets"], nb)
    assert w["wrong"] == 0, w["wrong"]
    it = w["iter_ms"]
    assert 0 < it["min"] <= it["p50"] <= it["max"], it
    assert 0 <= w["comm_wait_share"] <= 1 and 0 <= w["overlap_efficiency"] <= 1
    assert abs(w["samples_per_s"] - 16 * w["ranks"] * 1000 / it["mean"]) < 0.02 * w["samples_per_s"]
    for b in w["bucket_timeline"]:
        assert b["start_ms"] >= b["ready_ms"] - 0.5 and b["end_ms"] >= b["start_ms"], b
    # the README's "Workload metrics": the parts' means add up to the mean iteration, the
    # samples/s per rank and the scaling efficiency are what it says
    parts = w["fwd_ms"]["mean"] + w["bwd_ms"]["mean"] + w["exposed_comm_ms"]["mean"]
    assert abs(parts - it["mean"]) <= 1e-6 * it["mean"] + 1e-6, (parts, it["mean"])
    for k in ("iter_ms", "fwd_ms", "bwd_ms", "exposed_comm_ms", "allreduce_ms"):
        assert set(w[k]) == {"mean", "p50", "p99", "min", "max"}, (k, w[k])
    assert abs(w["samples_per_s_rank"] * w["ranks"] - w["samples_per_s"]) <= 1e-6 * w["samples_per_s"]
    assert set(w["critical_rank"]) == {"rank", "share"}, w["critical_rank"]
    # DDP's own logging fields are rank 0's (ns), as PyTorch reports them; fwd_ms is the
    # critical rank's per iteration. With one rank they are the same spans, so they must
    # agree exactly; with more, rank 0's own sleep jitter may put it past the critical
    # rank's maximum, so only the order of magnitude is checked.
    lg = w["ddp_logging"]
    f0 = lg["avg_forward_compute_time"] / 1e6
    if w["ranks"] == 1:
        assert w["fwd_ms"]["min"] * 0.999 <= f0 <= w["fwd_ms"]["max"] * 1.001, (lg, w["fwd_ms"])
        assert abs(f0 - w["fwd_ms"]["mean"]) <= 0.001 * w["fwd_ms"]["mean"] + 1e-6, (lg, w["fwd_ms"])
    else:
        assert 0.5 * w["fwd_ms"]["min"] <= f0 <= 2 * w["fwd_ms"]["max"], (lg, w["fwd_ms"])
    assert lg["avg_backward_comm_time"] > 0, lg
    assert lg["avg_backward_compute_comm_overlap_time"] <= lg["avg_backward_compute_time"] + 1, lg
    assert w["precision"] == "fp32" and w["gpu_profile"] == "h200", (w["precision"], w["gpu_profile"])
    assert w["gpu_tflops_used"] == 50, w["gpu_tflops_used"]  # gpu_tflops = 50, not a calibration
    trace = json.load(open(d + "/trace-%04d.json" % c["index"]))
    ev = trace["traceEvents"]
    assert any(e["ph"] == "M" and e["name"] == "process_name" for e in ev)
    xs = [e for e in ev if e["ph"] == "X"]
    assert xs and all(isinstance(e["ts"], (int, float)) and e["dur"] >= 0 and
                      isinstance(e["pid"], int) and isinstance(e["tid"], int) for e in xs)
    assert {e["pid"] for e in xs} == set(range(w["ranks"])), "every rank has a track"
    assert sum(1 for e in xs if e["cat"] == "allreduce") == nb * min(4, w["iterations"]) * w["ranks"]
two = cases["transport=tcp,local_ranks=2"]["workload"]
assert two["scaling_efficiency"] is not None and 0 < two["scaling_efficiency"] <= 1.2, two["scaling_efficiency"]
one = cases["transport=tcp,local_ranks=1"]["workload"]
assert one["scaling_efficiency"] is None, one["scaling_efficiency"]
# one rank moves nothing: its no-op AllReduces are not "communication" to hide
assert one["overlap_efficiency"] == 1, one["overlap_efficiency"]
want = two["samples_per_s_rank"] / one["samples_per_s_rank"]
assert abs(two["scaling_efficiency"] - want) <= 1e-6 * want, (two["scaling_efficiency"], want)
print("workload: %d buckets, tcp 2 ranks %.1f ms/iter (comm-wait %.0f%%), scaling %.2f" %
      (nb, two["iter_ms"]["mean"], 100 * two["comm_wait_share"], two["scaling_efficiency"]))
PY

# --replay reruns what ran: a bucket_cap left unset (DDP's 1 MiB first bucket) stays
# unset, where the resolved file once wrote the default as if given (first bucket 25 MiB).
# A trace's batch line gives samples/s; a trace without one has none (null, "-"), not 0.
TR=$(readlink -f "$(dirname "$0")/../workload/ref/resnet50_b32_amp_bf16.trace")
grep -v '^batch' "$TR" >"$T/nobatch.trace"
cat >"$T/r.ini" <<INI
[experiment]
name = rp
output_dir = $T/rp
[workload]
compute = none
iterations = 2
warmup = 0
[launch]
local_ranks = 1
timeout = 60s
[report]
formats = json
[matrix]
model = resnet18, trace
op_trace = $TR, $T/nobatch.trace
exclude = model=resnet18,op_trace=$T/nobatch.trace
INI
"$G" -q run "$T/r.ini" >"$T/out" 2>"$T/err" || { echo "run r.ini failed"; tail -n 20 "$T/err"; exit 1; }
d=$(ls -d "$T"/rp/rp-*)
"$G" -q run --replay "$d" --out "$T/rp2" >"$T/out" 2>"$T/err" ||
	{ echo "replay failed"; tail -n 20 "$T/err"; exit 1; }
python3 - "$d" "$(ls -d "$T"/rp2/rp-*)" <<'PY'
import json, sys
run, rep = (json.load(open(d + "/report.json")) for d in sys.argv[1:3])
a = {c["name"]: c["workload"] for c in run["cases"]}
b = {c["name"]: c["workload"] for c in rep["cases"]}
assert list(a) == list(b) and len(a) == 3, (list(a), list(b))
for name in a:
    mib = [x["bytes"] for x in a[name]["bucket_timeline"]]
    assert mib == [x["bytes"] for x in b[name]["bucket_timeline"]], (name, mib)
for name, w in a.items():
    if w["model"] == "resnet18":
        assert w["bucket_timeline"][0]["bytes"] < 4 << 20, w["bucket_timeline"][0]  # DDP's 1 MiB cap
    elif "nobatch" in name:
        assert w["samples_per_s"] is None and w["samples_per_s_rank"] is None, w["samples_per_s"]
    else:
        want = 32 * 1000 / w["iter_ms"]["mean"]
        assert abs(w["samples_per_s"] - want) < 0.02 * want, (w["samples_per_s"], want)
        got = w["samples_per_s"]
print("replay: %d cases, the same buckets; a trace's samples/s %.0f from its batch line, "
      "none without one" % (len(a), got))
PY
