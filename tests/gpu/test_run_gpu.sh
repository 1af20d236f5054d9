#!/bin/sh
# gradsync run with GPU buffers: 2 ranks sharing one GPU over tcp and shm (both stage
# through pinned host memory) and cudaipc (GPU memory directly, the path GPUDirect RDMA
# takes too), the benchmark verified bit-exact on the GPU for sum and avg (3 ranks too:
# avg divides, never multiplies by 1/3), and the DDP workload with our GEMM as compute on
# calibrated TFLOP/s, verified. Without a GPU: skip (77), saying why.
# Keeps the run directory in $GPU_RUN_OUT when set (the device runs collect it).
set -u
GRADSYNC=${GRADSYNC:-build/gradsync}
if ! "$GRADSYNC" gpu >/dev/null 2>&1; then
	echo "skip: no GPU on this node ($("$GRADSYNC" gpu 2>&1 | tail -1))"
	exit 77
fi
dir=${GPU_RUN_OUT:-$(mktemp -d)}
mkdir -p "$dir"
fail=0
# run_ini NAME: gradsync run $dir/NAME.ini, its output in NAME.log; its tail on a failure
run_ini() {
	if ! "$GRADSYNC" run "$dir/$1.ini" >"$dir/$1.log" 2>&1; then
		echo "FAIL: gradsync run $1.ini (log $dir/$1.log)"
		tail -20 "$dir/$1.log"
		fail=1
	fi
}
cat >"$dir/bench.ini" <<INI
[experiment]
name = gpu_bench
output_dir = $dir/res
[collective]
sizes = ${GPU_SIZES:-4KiB..16MiB x4, 1000004}
iterations = ${GPU_ITERS:-5}
warmup = 2
verify = all
chunk_size = ${GPU_CHUNK:-4MiB}
[gpu]
device = auto
[launch]
timeout = 60s
[matrix]
transport = tcp, shm, cudaipc
reduce_op = sum, avg
dtype = f32, bf16
local_ranks = 2, 3
INI
run_ini bench
cat >"$dir/wl.ini" <<INI
[experiment]
name = gpu_workload
output_dir = $dir/res
[workload]
model = resnet50
batch = 32
gpu_tflops = 0
iterations = 5
warmup = 2
[collective]
chunk_size = 4MiB
verify = first
[gpu]
device = auto
[launch]
local_ranks = 2
timeout = 60s
[matrix]
transport = tcp, shm
compute = gemm, spin
INI
run_ini wl
# every case: ok, on the GPU, staged, no wrong element
python3 - "$dir/res" <<'PY' || fail=1
import glob, json, sys
bad = 0
for f in sorted(glob.glob(sys.argv[1] + "/*/cases/*.json")):
    c = json.load(open(f))
    gp = c.get("gpu_path", {})
    wrong = sum(r.get("wrong", 0) for r in c.get("collective", []))
    w = c.get("workload") or {}
    wrong += w.get("wrong", 0)
    ipc = "transport=cudaipc" in c["name"]
    want = "gpu memory (cudaipc)" if ipc else "staged"
    ok = (c.get("status") == "ok" and gp.get("mode") == want and c.get("gpu")
          and wrong == 0 and (ipc or "tcp/shm always stage" in gp.get("reason", "")))
    if w and (not w.get("gpu_tflops_calibrated") or w.get("gpu_kernels", 0) < 1):
        ok = False
    print(("ok   " if ok else "FAIL ") + c["name"], gp.get("mode"), "wrong=%d" % wrong,
          "calibrated=%s" % w.get("gpu_tflops_calibrated") if w else "")
    bad += not ok
sys.exit(1 if bad else 0)
PY
exit $fail
