#!/bin/bash
# Run the GPU layer's tests and benchmarks on a GPU machine, logs under $OUT, a short
# table last. Uses the prebuilt binaries in bin/ beside this script when they start,
# else builds from the source tree in tree/ (or the repository) with the local nvcc.
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/gpu_out}
mkdir -p "$out"
bin=$here/bin

{
	date -u
	uname -r
	nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.sm,clocks.max.sm \
		--format=csv 2>&1
	ls -l "$bin" 2>&1
} >"$out/env.log" 2>&1

"$bin/gpu_test" spin >"$out/probe.log" 2>&1
rc=$?
if [ $rc -eq 126 ] || [ $rc -eq 127 ] || grep -q "no CUDA\|no kernel image\|GLIBC" "$out/probe.log"; then
	echo "prebuilt binaries unusable (rc=$rc), building here" | tee -a "$out/env.log"
	src=$here/tree
	[ -d "$src" ] || src=.
	(cd "$src" && NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc) \
		./tests/gpu/build.sh "$here/built") >>"$out/env.log" 2>&1
	bin=$here/built
fi

timeout 90 "$bin/gpu_test" >"$out/test.log" 2>&1
test_rc=$?
timeout 60 "$bin/gpu_bench" >"$out/bench.log" 2>&1
bench_rc=$?
if command -v compute-sanitizer >/dev/null; then
	timeout 60 compute-sanitizer --tool memcheck "$bin/gpu_test" gemm dmabuf \
		>"$out/memcheck.log" 2>&1
	echo "memcheck rc=$?" >>"$out/memcheck.log"
fi
if command -v cuobjdump >/dev/null; then
	cuobjdump --dump-sass "$bin/gpu_bench" 2>/dev/null | grep -oE '^ +/\*[0-9a-f]+\*/ +[A-Z0-9_.]+' |
		awk '{print $2}' | sort | uniq -c | sort -rn | head -40 >"$out/sass_hist.txt"
	cuobjdump --dump-sass "$bin/gpu_bench" 2>/dev/null |
		grep -oE "Function : [^ ]*gemm[^ ]*|HMMA[.A-Z0-9]*|LDSM[.A-Z0-9]*|HGMMA[.A-Z0-9]*" |
		uniq -c >"$out/sass_gemm.txt"
fi

{
	echo "== gpu_test rc=$test_rc"
	grep -E "^(FAIL|PASS|SKIP|GPU|gemm|spin|dmabuf|reduce|fill)" "$out/test.log" | tail -40
	echo "== tensor-core instructions per gemm kernel"
	cat "$out/sass_gemm.txt" 2>/dev/null | head -24
	echo "== memcheck"
	grep -E "ERROR SUMMARY|memcheck rc" "$out/memcheck.log" 2>/dev/null
	echo "== gpu_bench rc=$bench_rc"
	sed -n '/^benchmark/,$p' "$out/bench.log"
	grep -i "error\|fail\|wrong" "$out/bench.log" | head -5
} | tee "$out/summary.txt"
