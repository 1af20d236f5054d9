#!/bin/bash
# (kept as run on the H200: binaries in bin/ beside it, built here with ninja; see RESULTS.md)
# gpuint device run 2: cudaipc (GPU memory directly) verified, host-memory baselines of the
# staged benchmark, the workload on 1 rank (no GPU sharing) and over cudaipc.
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/gpuint_out}
mkdir -p "$out"
export GRADSYNC=$here/bin/gradsync
cd "$here"
t0=$(date +%s)
step() { echo "== $1 rc=$2 $(( $(date +%s) - t0 ))s" | tee -a "$out/summary.txt"; }
timeout 60 bin/mgpu_device check >"$out/mgpu.log" 2>&1; step mgpu_check $?
GPU_RUN_OUT=/tmp/trg GPU_ITERS=3 GPU_SIZES="4KiB..4MiB x4, 1000003" timeout 120 sh ./test_run_gpu.sh >"$out/test_run_gpu.log" 2>&1
step test_run_gpu $?
cat /tmp/trg/bench.log >>"$out/test_run_gpu.log" 2>/dev/null
cat >/tmp/perf.ini <<INI
[experiment]
name = perf2
output_dir = /tmp/perfres
[collective]
sizes = 1MiB..256MiB x4
iterations = 10
warmup = 3
verify = first
chunk_size = 4MiB
[gpu]
device = auto
[launch]
local_ranks = 2
timeout = 60s
[matrix]
transport = tcp, shm, cudaipc
INI
timeout 60 $GRADSYNC run /tmp/perf.ini >"$out/perf.log" 2>&1; step perf $?
sed -e 's/^device = auto$/device = none/' -e 's/^transport = tcp, shm, cudaipc$/transport = tcp, shm/' \
	-e 's/name = perf2/name = perfhost/' /tmp/perf.ini >/tmp/perfhost.ini
timeout 60 $GRADSYNC run /tmp/perfhost.ini >>"$out/perf.log" 2>&1; step perf_host $?
cat >/tmp/wl.ini <<INI
[experiment]
name = wl1
output_dir = /tmp/wlres
[workload]
compute = gemm
gpu_tflops = 0
iterations = 10
warmup = 3
[collective]
chunk_size = 4MiB
[transport]
transport = shm
[gpu]
device = auto
[launch]
local_ranks = 1
timeout = 120s
[matrix]
model = resnet50
INI
timeout 40 $GRADSYNC run /tmp/wl.ini >"$out/wl.log" 2>&1; step wl1_resnet $?
sed -e 's/^model = resnet50$/model = bert_large\nbatch = 8/' -e 's/name = wl1/name = wl1bert/' /tmp/wl.ini >/tmp/wlb.ini
timeout 40 $GRADSYNC run /tmp/wlb.ini >>"$out/wl.log" 2>&1; step wl1_bert $?
sed -e 's/^local_ranks = 1$/local_ranks = 2/' -e 's/^transport = shm$/transport = cudaipc/' \
	-e 's/name = wl1/name = wlipc/' /tmp/wl.ini >/tmp/wli.ini
sed -e 's/^local_ranks = 1$/local_ranks = 2/' -e 's/^transport = shm$/transport = cudaipc/' \
	-e 's/name = wl1bert/name = wlipcbert/' /tmp/wlb.ini >/tmp/wlib.ini
timeout 45 $GRADSYNC run /tmp/wli.ini >>"$out/wl.log" 2>&1; step wl_ipc_resnet $?
timeout 60 $GRADSYNC run /tmp/wlib.ini >>"$out/wl.log" 2>&1; step wl_ipc_bert $?
python3 - >"$out/results.txt" 2>&1 <<'PY'
import glob, json
for f in sorted(glob.glob("/tmp/perfres/*/cases/*.json") + glob.glob("/tmp/wlres/*/cases/*.json")):
    c = json.load(open(f))
    print("##", c["name"], c["status"], c.get("error", ""), "path", json.dumps(c.get("gpu_path")), "bound", c.get("bound", {}).get("desc"))
    for r in c.get("collective", []):
        print(" size %10d avg_us %10.1f busbw %6.2f wrong %s" % (r.get("size", 0), r["time_us"]["avg"], r.get("busbw_GBps"), r.get("wrong")))
    w = c.get("workload")
    if w:
        print(json.dumps({k: w.get(k) for k in ("model", "batch", "ranks", "iter_ms", "fwd_ms", "bwd_ms", "exposed_comm_ms", "gpu_tflops_calibrated", "wrong", "busbw_GBps")}))
PY
cat "$out/summary.txt" "$out/results.txt"; grep -E "^(ok|FAIL)" "$out/test_run_gpu.log"
grep -E "ok|FAIL" "$out/mgpu.log" | sort | uniq -c | head
grep -iE "error" "$out/test_run_gpu.log" "$out/wl.log" "$out/perf.log" | sort | uniq -c | head -20
