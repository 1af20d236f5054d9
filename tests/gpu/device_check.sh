#!/bin/bash
# The GPU check of a head, in one device call (tests/gpu/RESULTS.md): the GPU layer's own
# test (gpu_device), gpu --calibrate bounded and measuring (test_gpu_calibrate.sh), the
# runs over GPU memory (test_run_gpu.sh), and doctor / gpu on a real driver, bounded, with a
# call hung by the test hook after the driver answered (GRADSYNC_TEST_HANG: the exit must
# not wait on the CUDA runtime). Built here first and carried in bin/:
#   ./configure && ninja && sh tests/gpu/test_gpu.sh; mkdir -p bin
#   cp build/gradsync build/tests/gpu_device bin/
# then, on the device: bash tests/gpu/device_check.sh (OUT set by the device: one tarball,
# $OUT/gpucheck.tgz, since the device returns few files). Prints each step's exit code.
set -u
OUT=${OUT:-/tmp/gpucheck}
C=$OUT/gpucheck
mkdir -p "$C"
nvidia-smi -L >"$C/card.txt" 2>&1
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
t=$(date +%s%N)
timeout 120 bin/gpu_device >"$C/gpu_device.txt" 2>&1
echo "gpu_device rc=$? ms=$(ms "$t"): $(tail -n 1 "$C/gpu_device.txt")"
t=$(date +%s%N)
GRADSYNC=bin/gradsync sh tests/gpu/test_gpu_calibrate.sh >"$C/calibrate.txt" 2>&1
echo "test_gpu_calibrate rc=$? ms=$(ms "$t")"
t=$(date +%s%N)
GRADSYNC=bin/gradsync GPU_RUN_OUT=$C/gpurun sh tests/gpu/test_run_gpu.sh >"$C/run_gpu.txt" 2>&1
echo "test_run_gpu rc=$? ms=$(ms "$t"): $(grep -c '^ok' "$C/run_gpu.txt") ok"
n=0
for a in "doctor --timeout 5s" "doctor --json --timeout 5s" "gpu --timeout 5s"; do
	n=$((n + 1))
	t=$(date +%s%N)
	# shellcheck disable=SC2086 # the verb and its options, split
	timeout 60 bin/gradsync $a >"$C/verb$n.txt" 2>&1
	echo "$a rc=$? ms=$(ms "$t")"
done
for h in cudaGetDeviceProperties cuInit; do
	for v in doctor gpu; do
		t=$(date +%s%N)
		GRADSYNC_TEST_HANG=$h timeout 60 bin/gradsync $v --timeout 2s >"$C/hang_${h}_$v.txt" 2>&1
		echo "HANG=$h $v --timeout 2s rc=$? ms=$(ms "$t"): $(grep 'did not return' "$C/hang_${h}_$v.txt" | head -n 1)"
	done
done
cd "$OUT" && tar czf gpucheck.tgz gpucheck && rm -rf gpucheck
