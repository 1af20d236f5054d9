#!/bin/sh
# A wedged GPU driver or a dead HCA (cuInit, ibv_get_device_list stuck in the kernel) no
# longer hangs `gradsync doctor` or `gradsync gpu` (its --calibrate too): the probe is
# given up on at --timeout, one line names the call, what it was on and the bound, doctor
# fails that check (text and JSON) and still prints the others, exit 1; with both wedged
# the doctor waits --timeout once, not twice; SIGTERM while the probe waits ends it at
# once, exit 143. This machine has neither a GPU nor an RDMA device: the test hook
# GRADSYNC_TEST_HANG=CALL (util/callbound.h) makes the named call block; and where strace
# is installed, verbs' own open of /sys/class/infiniband_verbs is held for real.
set -u
. "$(dirname "$0")/../lib.sh"
test_begin
now_ms() { date +%s%3N; }
# took NAME T0 LIMIT_S: fails NAME when more than LIMIT_S seconds passed since T0 (ms)
took() {
	ms=$(($(now_ms) - $2))
	[ $ms -lt $(($3 * 1000)) ] || fail "$1: took ${ms} ms, want under $3 s"
	echo "$1: ${ms} ms"
}
verbs_on() { "$G" version | grep -q '^verbs: *on'; }
# hung_in TAG HANG NAME ARGS...: gradsync ARGS with GRADSYNC_TEST_HANG=HANG (output in
# $T/NAME.out and .err): given up on and ended, exit 1, within 10 s, else failed
hung_in() {
	tag=$1 hang=$2 name=$3
	shift 3
	t0=$(now_ms)
	GRADSYNC_TEST_HANG=$hang timeout -s KILL 60 "$G" "$@" >"$T/$name.out" 2>"$T/$name.err"
	st=$?
	took "$tag" "$t0" 10
	[ $st = 1 ] || fail "$tag: exit $st, want 1"
}
# term_in TAG HANG NAME ARGS...: gradsync ARGS with GRADSYNC_TEST_HANG=HANG (output in
# $T/NAME.out and .err), SIGTERM once it waits in the hung call: 143 within 3 s, else failed
term_in() {
	tag=$1 hang=$2 name=$3
	shift 3
	GRADSYNC_TEST_HANG=$hang timeout -s KILL 60 "$G" "$@" >"$T/$name.out" 2>"$T/$name.err" &
	pid=$!
	sleep 1.5
	t0=$(now_ms)
	kill -TERM $pid
	wait $pid
	st=$?
	took "$tag" "$t0" 3
	[ $st = 143 ] || fail "$tag: exit $st, want 143"
}

# CUDA: the probe given up on at 1 s, said once on stderr, its check failed, the rest there
hung_in "doctor, cuInit hung" cuInit cuda doctor --timeout 1s
grep -qx 'gradsync: warning: doctor: CUDA driver: cuInit did not return within 1s (driver wedged?)' \
	"$T/cuda.err" || { fail "doctor, cuInit hung: no line naming the call and the bound"; cat "$T/cuda.err"; }
sed -n '/^\[gpu_driver\]$/,/^$/p' "$T/cuda.out" >"$T/cuda.check"
grep -q '^  FAIL  CUDA driver  *cuInit did not return within 1s (driver wedged?)$' "$T/cuda.check" ||
	{ fail "doctor, cuInit hung: gpu_driver not failed"; cat "$T/cuda.out"; }
grep -q 'fix: the driver is stuck in the kernel' "$T/cuda.check" || fail "doctor, cuInit hung: no fix"
for c in rdma_port memlock iommu hugepages auto_path; do
	grep -q "^\[$c\]\$" "$T/cuda.out" || fail "doctor, cuInit hung: no [$c]: the other checks must run"
done
grep -Eq '^FAIL: [0-9]+ pass, [0-9]+ warn, 1 fail, [0-9]+ skipped$' "$T/cuda.out" ||
	fail "doctor, cuInit hung: verdict $(tail -n 1 "$T/cuda.out")"

# verbs, JSON: the finding names the call; the document is whole and its counts agree
if verbs_on; then
	hung_in "doctor --json, ibv_get_device_list hung" ibv_get_device_list verbs doctor --json \
		--timeout 1s
	grep -qx 'gradsync: warning: doctor: RDMA devices: ibv_get_device_list did not return within 1s (HCA or its driver wedged?)' \
		"$T/verbs.err" || { fail "doctor, verbs hung: stderr"; cat "$T/verbs.err"; }
	python3 - "$T/verbs.out" <<'PY' || fail "doctor --json, verbs hung: JSON content"
import json, sys
j = json.load(open(sys.argv[1]))
f = j["findings"]
assert j["verdict"] == "fail", j["verdict"]
assert len(f) == sum(j["counts"].values()), "counts"
v = [x for x in f if x["check"] == "rdma_verbs"]
assert len(v) == 1 and v[0]["level"] == "fail" and v[0]["subject"] == "RDMA devices", v
assert v[0]["what"] == "ibv_get_device_list did not return within 1s (HCA or its driver wedged?)", v
assert v[0]["fix"], v
assert {"memlock", "auto_path", "hugepages"} <= {x["check"] for x in f}, "other checks missing"
PY
else
	echo "verbs off in this build: the verbs probe has no call to hang"
fi

# both at once: the two probes run side by side and share one bound, so the doctor waits
# --timeout once, not once per probe (a bound on a hang, not a timing: 1 s of it is the
# bound, the rest the sysfs walks), and each wedged call still has its own finding
t0=$(now_ms)
GRADSYNC_TEST_HANG=cuInit,ibv_get_device_list timeout -s KILL 60 "$G" doctor --timeout 1s \
	>"$T/both.out" 2>"$T/both.err"
st=$?
ms=$(($(now_ms) - t0))
echo "doctor, both hung: ${ms} ms"
[ $ms -lt 1800 ] || fail "doctor, both hung: took ${ms} ms, want under 1.8 s (one --timeout 1s)"
[ $st = 1 ] || fail "doctor, both hung: exit $st, want 1"
[ "$(grep -c 'did not return within 1s' "$T/both.err")" = "$(verbs_on && echo 2 || echo 1)" ] ||
	{ fail "doctor, both hung: one line per probe"; cat "$T/both.err"; }
grep -q '^  FAIL  CUDA driver  *cuInit did not return within 1s (driver wedged?)$' "$T/both.out" ||
	{ fail "doctor, both hung: gpu_driver not failed"; cat "$T/both.out"; }
if verbs_on; then
	grep -q '^  FAIL  RDMA devices  *ibv_get_device_list did not return within 1s (HCA or its driver wedged?)$' \
		"$T/both.out" || { fail "doctor, both hung: rdma_verbs not failed"; cat "$T/both.out"; }
	# CUDA's line first, as before the probes ran at once
	head -n 1 "$T/both.err" | grep -q 'CUDA driver: cuInit' ||
		{ fail "doctor, both hung: CUDA's line not first"; cat "$T/both.err"; }
fi
grep -Eq "^FAIL: [0-9]+ pass, [0-9]+ warn, $(verbs_on && echo 2 || echo 1) fail, [0-9]+ skipped\$" \
	"$T/both.out" || fail "doctor, both hung: verdict $(tail -n 1 "$T/both.out")"

# SIGTERM while the probe waits (its bound a minute): ended at once, 143, the probe named
term_in "doctor, SIGTERM in the hung probe" cuInit term doctor --timeout 60s
grep -qx 'gradsync: error: doctor: CUDA driver: stopped by SIGTERM while cuInit was pending' \
	"$T/term.err" || { fail "doctor, SIGTERM: stderr"; cat "$T/term.err"; }
[ "$(wc -l <"$T/term.err")" = 1 ] || { fail "doctor, SIGTERM: want one line"; cat "$T/term.err"; }

# SIGTERM with both probes hung: one grace for both, each pending call named in its line
if verbs_on; then
	term_in "doctor, SIGTERM in both hung probes" cuInit,ibv_get_device_list term2 doctor \
		--timeout 60s
	printf '%s\n' 'gradsync: error: doctor: CUDA driver: stopped by SIGTERM while cuInit was pending' \
		'gradsync: error: doctor: RDMA devices: stopped by SIGTERM while ibv_get_device_list was pending' |
		cmp -s - "$T/term2.err" || { fail "doctor, SIGTERM in both: stderr"; cat "$T/term2.err"; }
fi

# gpu: the same probe, the command fails in one line
hung_in "gpu, cuInit hung" cuInit gpu gpu --timeout 1s
grep -qx 'gradsync gpu: CUDA driver: cuInit did not return within 1s (driver wedged?)' "$T/gpu.err" &&
	[ "$(wc -l <"$T/gpu.err")" = 1 ] || { fail "gpu, cuInit hung: stderr"; cat "$T/gpu.err"; }

# gpu --calibrate: the calibration's own CUDA calls within the bound too. Without a GPU the
# hook's wedged cudaSetDevice stands in for one (as cuInit does for doctor): device 0's
# calibration given up on at 1 s, in one line naming the call and the device
hung_in "gpu --calibrate, cudaSetDevice hung" cudaSetDevice cal gpu --calibrate --timeout 1s
grep -qx 'gradsync gpu: CUDA device 0: cudaSetDevice did not return within 1s (driver wedged?)' \
	"$T/cal.err" && [ "$(grep -c '^gradsync gpu:' "$T/cal.err")" = 1 ] ||
	{ fail "gpu --calibrate, cudaSetDevice hung: stderr"; cat "$T/cal.err"; }
# SIGTERM in it: 143 at once, the pending call named
term_in "gpu --calibrate, SIGTERM in the hung calibration" cudaSetDevice calt gpu --calibrate \
	--timeout 60s
grep -qx 'gradsync gpu: CUDA device 0: stopped by SIGTERM while cudaSetDevice was pending' \
	"$T/calt.err" || { fail "gpu --calibrate, SIGTERM: stderr"; cat "$T/calt.err"; }

"$G" gpu --timeout 0 >/dev/null 2>"$T/gpu0.err"
st=$?
[ $st = 2 ] || fail "gpu --timeout 0: exit $st, want 2"
grep -qx "gradsync gpu: --timeout '0': expected a duration 100ms..24h such as 30s" "$T/gpu0.err" ||
	{ fail "gpu --timeout 0: message"; cat "$T/gpu0.err"; }
"$G" gpu --profile h200 --write "$T/p.profile" --timeout 5s || fail "gpu --write --timeout 5s: exit $?"
grep -q '^name = h200' "$T/p.profile" || fail "gpu --write --timeout 5s: no profile written"

# no hook: verbs' own open of its sysfs class held (strace) past the bound, for real
if verbs_on && command -v strace >/dev/null 2>&1; then
	t0=$(now_ms)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout -s KILL 60 strace -f \
		-o "$T/held.trace" -P /sys/class/infiniband_verbs -e trace=openat \
		-e inject=openat:delay_enter=6000000 "$G" doctor --timeout 1s >"$T/held.out" \
		2>"$T/held.err" &
	pid=$!
	for i in $(seq 100); do
		grep -q 'did not return' "$T/held.err" && break
		sleep 0.1
	done
	took "doctor, verbs' open held by strace: the line" "$t0" 5
	wait $pid
	st=$?
	[ $st = 1 ] || fail "doctor, verbs held: exit $st, want 1"
	grep -q '^gradsync: warning: doctor: RDMA devices: ibv_get_device_list did not return within 1s' \
		"$T/held.err" || { fail "doctor, verbs held: stderr"; cat "$T/held.err"; }
	grep -q '^  FAIL  RDMA devices  *ibv_get_device_list did not return within 1s' "$T/held.out" ||
		fail "doctor, verbs held: rdma_verbs not failed"
else
	echo "no strace or verbs off: verbs' own calls are not held"
fi

[ $fails = 0 ] && echo "doctor hung probes: all checks passed"
[ $fails = 0 ]
