#!/bin/bash
# (kept as run on the H200: binaries in bin/ beside it, built here with ninja; see RESULTS.md)
# gpuint device run: GPU unit tests, gradsync run GPU tests, staged benchmark vs pinned
# copies, the DDP workload with our GEMM, PyTorch's real step time. Logs under $OUT.
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/gpuint_out}
mkdir -p "$out"
B=$here/bin
export GRADSYNC=$B/gradsync
cd "$here"
{
	date -u; uname -r
	nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.sm,clocks.max.sm --format=csv
	$GRADSYNC gpu; $GRADSYNC topo 2>&1 | head -40
	df -h /dev/shm; nproc
} >"$out/env.log" 2>&1
t0=$(date +%s)
step() { echo "== $1 rc=$2 $(( $(date +%s) - t0 ))s" | tee -a "$out/summary.txt"; }
timeout 45 $B/gpu_device reduce pattern spin dmabuf >"$out/gpu_unit.log" 2>&1; step gpu_unit $?
GPU_RUN_OUT=/tmp/trg GPU_ITERS=3 GPU_SIZES="4KiB..4MiB x4, 1000003" timeout 110 sh ./test_run_gpu.sh >"$out/test_run_gpu.log" 2>&1
step test_run_gpu $?
cat /tmp/trg/bench.log /tmp/trg/wl.log >>"$out/test_run_gpu.log" 2>/dev/null
cat >/tmp/perf.ini <<INI
[experiment]
name = perf
output_dir = /tmp/perfres
[collective]
sizes = 1MiB..256MiB x2
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
transport = tcp, shm
INI
timeout 80 $GRADSYNC run /tmp/perf.ini >"$out/perf.log" 2>&1; step perf $?
cat >/tmp/wl.ini <<INI
[experiment]
name = wl
output_dir = /tmp/wlres
[workload]
batch = 32
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
local_ranks = 2
timeout = 120s
[matrix]
model = resnet50, bert_large
INI
sed -i 's/^batch = 32$/batch = 32/' /tmp/wl.ini
# bert_large runs batch 8: a second file keeps both in one report
sed -e 's/^batch = 32$/batch = 8/' -e 's/model = resnet50, bert_large/model = bert_large/' \
	-e 's/name = wl/name = wlbert/' /tmp/wl.ini >/tmp/wlbert.ini
sed -i 's/model = resnet50, bert_large/model = resnet50/' /tmp/wl.ini
timeout 60 $GRADSYNC run /tmp/wl.ini >"$out/wl.log" 2>&1; step wl_resnet50 $?
timeout 70 $GRADSYNC run /tmp/wlbert.ini >>"$out/wl.log" 2>&1; step wl_bert $?
PYTHONUNBUFFERED=1 timeout 90 python3 torch_step_time.py --copy --iters 10 >"$out/torch.log" 2>&1
step torch $?
python3 - >"$out/results.txt" 2>&1 <<'PY'
import glob, json
for f in sorted(glob.glob("/tmp/perfres/*/cases/*.json") + glob.glob("/tmp/wlres/*/cases/*.json") +
                glob.glob("/tmp/wlres*/*/cases/*.json")):
    c = json.load(open(f))
    print("##", f, c["name"], c["status"], c.get("error", ""))
    print("gpu", json.dumps(c.get("gpu")), "\npath", json.dumps(c.get("gpu_path")), "\nbound", json.dumps(c.get("bound")))
    for r in c.get("collective", []):
        print(" size %10d time_us %s busbw %s wrong %s" % (r.get("size", 0), json.dumps(r.get("time_us", r.get("time"))), json.dumps(r.get("busbw_GBps")), r.get("wrong")))
    w = c.get("workload")
    if w:
        print(json.dumps({k: w.get(k) for k in ("model", "batch", "iter_ms", "fwd_ms", "bwd_ms", "exposed_comm_ms", "gpu_tflops_calibrated", "gpu_tflops_used", "gpu_kernels", "wrong", "busbw_GBps", "grad_bytes")}))
PY
ls /tmp/perfres /tmp/wlres /tmp/wlresbert 2>/dev/null | head >/dev/null
tar czf "$out/runs.tgz" -C /tmp perfres wlres trg 2>/dev/null
cat "$out/summary.txt"; cat "$out/results.txt" | head -80; tail -5 "$out/torch.log"
