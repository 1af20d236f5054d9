#!/bin/sh
# `gradsync topo` end to end: live machine, fixtures (text and JSON), errors, and the
# capture script round trip (a capture of /sys reports the same as /sys itself).
set -u
. "$(dirname "$0")/../lib.sh"
test_begin
FX=tests/fixtures/sysfs

"$G" topo --help >"$T/out" 2>&1
if grep -q "unknown verb" "$T/out"; then
	echo "the topo verb is not wired into main.c yet"
	exit 77
fi

"$G" topo >"$T/live" 2>"$T/err" || fail "topo on /sys: exit $?: $(cat "$T/err")"
grep -q '^NUMA nodes (' "$T/live" || fail "topo on /sys lists no NUMA nodes"
grep -q '^Network interfaces (' "$T/live" || fail "topo on /sys lists no interfaces"

"$G" topo --sysfs-root "$FX/dgx-h100" >"$T/dgx" || fail "topo dgx-h100: exit $?"
grep -q '^GPU0    X      PXB    NODE   NODE   SYS    SYS    SYS    SYS    PIX    PXB' "$T/dgx" \
	|| fail "dgx-h100 GPU0 row"
grep -q '^GPU7    no     no     no     no     no     no     yes    yes    mlx5_7 (PIX)' "$T/dgx" \
	|| fail "dgx-h100 GPU7 GDR row"
"$G" topo --sysfs-root "$FX/phb-rootports" --gdr-level PHB >"$T/phb" || fail "phb: exit $?"
grep -q '^GPU0    yes    mlx5_0 (PHB)' "$T/phb" || fail "phb-rootports GDR at PHB"

"$G" topo --json --sysfs-root "$FX/dgx-h100" >"$T/dgx.json" || fail "topo --json: exit $?"
if command -v python3 >/dev/null 2>&1; then
	python3 - "$T/dgx.json" <<'PY' || fail "dgx-h100 JSON content"
import json, sys
j = json.load(open(sys.argv[1]))
assert len(j["gpus"]) == 8 and len(j["rdma_nics"]) == 8, "counts"
row0 = ["PIX", "PXB", "NODE", "NODE", "SYS", "SYS", "SYS", "SYS"]
assert j["gpu_nic"][0] == row0, j["gpu_nic"][0]
assert j["gpu_gpu"][4][5] == "PXB" and j["nic_nic"][0][0] == "X"
assert j["peermem_module"] == "nvidia_peermem" and j["dmabuf_kernel"] is True
assert sum(g["possible"] for g in j["gdr"]) == 16, "GDR pairs at PXB"
PY
fi

"$G" topo --sysfs-root /nonexistent >/dev/null 2>&1
[ $? = 1 ] || fail "missing sysfs root must exit 1"
"$G" topo --gdr-level NODE >/dev/null 2>&1
[ $? = 2 ] || fail "bad --gdr-level must exit 2"
"$G" topo extra >/dev/null 2>&1
[ $? = 2 ] || fail "extra argument must exit 2"

# --bind: the process really lands where the plan says (checked by move_pages/sched_getcpu).
"$G" topo --bind node:0 >"$T/bind" || fail "--bind node:0: exit $?"
grep -q 'actual: cpus .*policy bind 0, pages node0 64 of 64 sampled pages' "$T/bind" \
	|| fail "--bind node:0 placement: $(tail -n 1 "$T/bind")"
if [ "$(nproc)" -ge 2 ]; then
	"$G" topo --bind cpus:1 >"$T/bind" || fail "--bind cpus:1: exit $?"
	grep -q 'actual: cpus 1 (on 1), policy default' "$T/bind" || fail "--bind cpus:1 placement"
fi
if [ "$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)" = 1 ]; then
	"$G" topo --bind remote >"$T/bind" || fail "--bind remote: exit $?"
	grep -q 'remote: not applicable (only one NUMA node' "$T/bind" || fail "--bind remote on 1 node"
fi
"$G" topo --bind node:5000 >/dev/null 2>"$T/err"
[ $? = 2 ] || fail "--bind node:5000 must exit 2"
grep -q 'NUMA node number above 1023' "$T/err" || fail "--bind node:5000 message: $(cat "$T/err")"

# Capture round trip: the capture reports what /sys reports (but for the root's name).
if "$FX/capture.sh" "$T/cap" >"$T/caplog" 2>&1; then
	"$G" topo --sysfs-root "$T/cap" | sed "s|$T/cap|ROOT|g" >"$T/a"
	sed 's|/sys|ROOT|g' "$T/live" >"$T/b"
	diff "$T/a" "$T/b" >"$T/diff" || fail "capture of /sys differs: $(cat "$T/diff")"
else
	fail "capture.sh: $(cat "$T/caplog")"
fi
# Re-capturing each fixture keeps everything the walker reads (links, switch ids, ports).
for f in dgx-h100 bcm-switches pxb-node two-socket-sys phb-rootports; do
	"$FX/capture.sh" "$T/re-$f" "$FX/$f" >/dev/null 2>&1 || fail "capture.sh of $f"
	"$G" topo --sysfs-root "$T/re-$f" | sed "s|$T/re-$f|ROOT|g" >"$T/a"
	"$G" topo --sysfs-root "$FX/$f" | sed "s|$FX/$f|ROOT|g" >"$T/b"
	diff "$T/a" "$T/b" >"$T/diff" || fail "re-capture of $f differs: $(cat "$T/diff")"
done
"$FX/capture.sh" "$T/cap" >/dev/null 2>&1 && fail "capture.sh into a non-empty dir must fail"

# --gpu only picks the GPU --bind places for; a root without sysfs is one line
"$G" topo --gpu 5 >/dev/null 2>"$T/err"
[ $? = 2 ] && grep -q -- "--gpu goes with --bind VALUE" "$T/err" || fail "--gpu alone: $(cat "$T/err")"
mkdir -p "$T/nosys"
"$G" topo --sysfs-root "$T/nosys" >/dev/null 2>"$T/err"
[ $? = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] || fail "an empty sysfs root: not one line: $(cat "$T/err")"

# --timeout bounds the walk of the tree: a bad value is one line and exit 2 (report's words);
# a good one changes nothing; a tree whose directory does not answer (held by strace past
# the bound) fails at it
for v in 0 bogus 25h; do
	"$G" topo --timeout "$v" >/dev/null 2>"$T/err"
	st=$?
	[ $st = 2 ] || fail "--timeout $v: exit $st, want 2"
	[ "$(cat "$T/err")" = "gradsync topo: --timeout '$v': expected a duration 100ms..24h such as 30s" ] ||
		fail "--timeout $v: message: $(cat "$T/err")"
done
"$G" topo --timeout 5s --timeout 6s >/dev/null 2>"$T/err"
[ $? = 2 ] && grep -qx 'gradsync topo: --timeout given twice: give it once' "$T/err" ||
	fail "--timeout twice: $(cat "$T/err")"
"$G" topo --timeout 5s --sysfs-root "$FX/dgx-h100" >"$T/dgx5" || fail "--timeout 5s: exit $?"
cmp -s "$T/dgx" "$T/dgx5" || fail "--timeout 5s changed the output: $(diff "$T/dgx" "$T/dgx5" | head -5)"
"$G" topo --help | grep -q -- '--timeout DURATION' || fail "topo --help lacks --timeout"
if command -v strace >/dev/null 2>&1; then
	cp -a "$FX/dgx-h100" "$T/held"
	t0=$(date +%s%3N)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout -s KILL 60 strace -f \
		-o "$T/held.trace" -P "$T/held/class/infiniband" -e trace=openat \
		-e inject=openat:delay_enter=5000000 "$G" topo --timeout 1s --sysfs-root "$T/held" \
		>/dev/null 2>"$T/held.err" &
	pid=$!
	for i in $(seq 100); do
		grep -q 'did not return' "$T/held.err" && break
		sleep 0.1
	done
	ms=$(($(date +%s%3N) - t0))
	[ $ms -lt 5000 ] || fail "--timeout 1s, a held directory: the line after $ms ms"
	wait $pid
	st=$?
	[ $st = 1 ] || fail "--timeout 1s, a held directory: exit $st, want 1"
	grep -q "^gradsync: error: sysfs root $T/held: open of $T/held/class/infiniband did not return within 1s" \
		"$T/held.err" || fail "--timeout 1s, a held directory: $(cat "$T/held.err")"
fi

[ "$fails" = 0 ] && echo "topo cli: all checks passed"
[ "$fails" = 0 ]
