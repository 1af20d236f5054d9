#!/bin/sh
# One device call for issue 17's staged pipeline, with binaries built off the GPU machine
# (ninja, then tests/gpu/build.sh build/gpubin) and carried in BIN (default bin/ beside
# this script): time gpu_memops.c's staged pipeline against a pinned copy (memops_bench:
# 1 MiB and 4 MiB pieces, 4 and 8 channels), then gradsync's GPU end-to-end test (staged
# tcp/shm and cudaipc, verified bit-exact). Logs under $OUT, a short table last.
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/gpu_out}
bin=${BIN:-$here/bin}
mkdir -p "$out"
{
	timeout 100 "$bin/memops_bench" 1024 1024 4
	timeout 100 "$bin/memops_bench" 1024 1024 8
	timeout 100 "$bin/memops_bench" 1024 4096 4
	echo "memops rc=$?"
} >"$out/memops.log" 2>&1
GRADSYNC=$bin/gradsync GPU_RUN_OUT=/tmp/trg GPU_ITERS=3 timeout 200 sh "$here/test_run_gpu.sh" \
	>"$out/run_gpu.log" 2>&1
echo "test_run_gpu rc=$?" >>"$out/run_gpu.log"
cat "$out/memops.log"
tail -6 "$out/run_gpu.log"
