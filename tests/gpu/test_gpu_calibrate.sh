#!/bin/sh
# `gradsync gpu --calibrate` on a GPU: the calibration runs as one bounded group of CUDA
# calls (src/gpu/calibrate.c) and still measures (GEMM TFLOP/s, and with --write GPU 0's
# memory rates into a profile); a call that does not return mid-calibration (the test hook
# GRADSYNC_TEST_HANG=cudaEventSynchronize: the wait for the first timed GEMM) fails the
# command at --timeout, GPU 0's line printed, one line naming the call and the device,
# exit 1. Without a GPU: skip (77), saying why (the GPU-less case is
# tests/doctor/test_doctor_hung_probe.sh's, with cudaSetDevice standing in).
set -u
. "$(dirname "$0")/../lib.sh"
test_begin
if ! "$G" gpu >/dev/null 2>&1; then
	echo "skip: no GPU on this node ($("$G" gpu 2>&1 | tail -1))"
	exit 77
fi
now_ms() { date +%s%3N; }

"$G" gpu --calibrate --write "$T/p.profile" --timeout 120s >"$T/ok.out" 2>"$T/ok.err" ||
	{ fail "gpu --calibrate --write: exit $?"; cat "$T/ok.err"; }
grep -Eq '^gpu 0: .*, gemm bf16 [1-9][0-9]* TFLOP/s, stream [1-9][0-9]* GB/s' "$T/ok.out" ||
	{ fail "gpu --calibrate: no rates on GPU 0's line"; cat "$T/ok.out"; }
grep -q '^# our kernels here: gemm ' "$T/p.profile" || fail "gpu --calibrate --write: no profile"

t0=$(now_ms)
GRADSYNC_TEST_HANG=cudaEventSynchronize timeout -s KILL 60 "$G" gpu --calibrate --timeout 5s \
	>"$T/hung.out" 2>"$T/hung.err"
st=$?
ms=$(($(now_ms) - t0))
echo "gpu --calibrate, cudaEventSynchronize hung: exit $st after ${ms} ms"
[ $st = 1 ] || fail "gpu --calibrate, hung: exit $st, want 1"
[ $ms -lt 15000 ] || fail "gpu --calibrate, hung: ${ms} ms, want within the 5 s bound and the probe"
grep -q '^gpu 0: ' "$T/hung.out" || { fail "gpu --calibrate, hung: no line for GPU 0"; cat "$T/hung.out"; }
grep -qx 'gradsync gpu: CUDA device 0: cudaEventSynchronize did not return within 5s (driver wedged?)' \
	"$T/hung.err" || { fail "gpu --calibrate, hung: stderr"; cat "$T/hung.err"; }

[ $fails = 0 ] && echo "gpu --calibrate within its bound: all passed"
[ $fails = 0 ]
