#!/bin/bash
# Benchmark (not a test): the verbs transport on the two-VM Soft-RoCE bed of tests/softroce
# (qemu TCG, one rank per VM, a lossless unix stream link, rxe0). Measures, from VM a to VM b:
#  1. write bandwidth: gradsync op = write_bw over roce against perftest's ib_write_bw at
#     the same message sizes and bytes (TOTAL per size per measurement), interleaved,
#     REPS times; medians and the ratio ours / ib_write_bw. Target: >= 0.95x.
#  2. AllReduce busbw at 64MiB over roce (once per rep), over our write bandwidth at the
#     largest size. Target: >= 0.9x. For context, ib_write_bw -b at that size: what the bed
#     carries with traffic both ways at once, as in a 2-rank AllReduce.
#  3. CPU cost: one run with [matrix] transport = tcp, roce (AllReduce 16MiB, 64MiB):
#     cpu_s_per_GB (our threads) and host_cpu_s_per_GB (the whole VM, /proc/stat) at 64MiB.
# cq_mode defaults to event on both ranks: under TCG with one vCPU per VM it gave the same
# bandwidth as poll within the noise (write_bw 0.080 vs 0.077 GB/s at 64KiB, 0.090 vs 0.091
# at 1MiB, AllReduce 0.041 vs 0.040) for about 20% less of our CPU per GB (7.9 vs 9.8 s/GB
# at 64KiB, 5.5 vs 7.1 at 1MiB); ib_write_bw's server is passive too. SRB_CQ=poll, or
# SRB_CQ_A / SRB_CQ_B for one VM's rank, compares. SR_VM_CPUS=2 was slower on a 2-core
# host (write_bw 0.058/0.071 GB/s, AllReduce 0.034, tcp AllReduce 0.030 instead of 0.053).
# TCG moves about 0.08 GB/s over rxe: the whole bench takes about 2.5 minutes.
#   usage: tests/bench/bench_softroce.sh [SIZE...]   (bytes; default: 65536 1048576)
#   env:   REPS (3), TOTAL (bytes, 67108864), SRB_PARTS ("wbw ar cpu"), SRB_CQ (event),
#          GRADSYNC (build/gradsync), SR_VM_CPUS (1), SR_VM_MEM (1G), SR_VM_TIMEOUT (420)
# Console logs and the per-step output stay in the directory printed at the end.
set -eu
export SR_VM_TIMEOUT=${SR_VM_TIMEOUT:-420} # before lib.sh, which defaults it to 150
. "$(dirname "$0")/../softroce/lib.sh"

ROOT=$(cd "$SR_DIR/../.." && pwd)
BENCH=$ROOT/tests/bench
G=$(readlink -f "${GRADSYNC:-$ROOT/build/gradsync}")
SIZES=${*:-65536 1048576}
REPS=${REPS:-3}
TOTAL=${TOTAL:-67108864}
PARTS=${SRB_PARTS:-wbw ar cpu}
export SR_KEEP_LOGS=${SR_KEEP_LOGS:-1} SR_VM_MEM=${SR_VM_MEM:-1G}

sr_init
T0=$(date +%s)
sr_need_tools
[ -x "$G" ] || sr_skip "$G not built"
"$G" version | grep -q '^verbs: *on' || sr_skip "$G built without verbs"
sr_fetch_kernel || sr_skip "no Debian 6.1 kernel package available (apt-get download failed)"

# a private copy: build/ may be rebuilt while the VMs run
cp "$G" "$SR_LOGDIR/gradsync"
SR_FILES="$BENCH/softroce_wbw.ini $BENCH/softroce_allreduce.ini $BENCH/softroce_cpu.ini"
sr_build_initramfs "$SR_LOGDIR/bench.cpio.gz" "$BENCH/softroce_bench_vm.sh" \
	"$SR_LOGDIR/gradsync=/bin/gradsync" "$(command -v ib_write_bw)" \
	"$(command -v ibv_devinfo)" || sr_fail "initramfs build failed"

# settings reach the VMs as gs.env.NAME=V,W kernel arguments (vm_init.sh exports them)
env="gs.env.SRB_SIZES=$(echo $SIZES | tr ' ' ,) gs.env.SRB_TOTAL=$TOTAL"
env="$env gs.env.SRB_REPS=$REPS gs.env.SRB_PARTS=$(echo $PARTS | tr ' ' ,)"
for v in SRB_CQ SRB_CQ_A SRB_CQ_B; do
	[ -n "${!v:-}" ] && env="$env gs.env.$v=${!v}"
done
echo "bench: sizes $SIZES, $REPS reps, $TOTAL B per size per measurement, parts '$PARTS'," \
	"${SR_VM_CPUS:-1} vCPU and $SR_VM_MEM per VM, cq_mode ${SRB_CQ:-event}" \
	"(a ${SRB_CQ_A:-=}, b ${SRB_CQ_B:-=}); logs in $SR_LOGDIR"

ok=1
sr_boot_pair "$SR_LOGDIR/bench.cpio.gz" "gs.peer=10.0.0.2 $env" "$env"
set +e # from here on, and in lib.sh's exit trap (it kills VMs that are gone already)
sr_wait_pair || ok=0
rm -f "$SR_LOGDIR/bench.cpio.gz"
tr -d '\r' <"$SR_LOGDIR/vm_a.log" >"$SR_LOGDIR/vm_a.txt"
tr -d '\r' <"$SR_LOGDIR/vm_b.log" >"$SR_LOGDIR/vm_b.txt"

echo
echo "== Soft-RoCE bench summary ($(($(date +%s) - T0)) s; VM a timeline:" \
	"$(awk '/^SRB time / {printf "%s%s", sep, $3; sep = ", "}' "$SR_LOGDIR/vm_a.txt"))"
grep -h '^SRB error' "$SR_LOGDIR/vm_a.txt" "$SR_LOGDIR/vm_b.txt" || true
# ib_write_bw client rows (bytes iterations peak avg msgrate, Gb/s) -> "SRB wbw" records
awk '/^SRB ib begin / { k = $4; s = $5; sub(/size=/, "", s); tool = $6; row = ""; next }
	/^SRB ib end / { if ($7 == "exit=0" && row != "")
			printf "SRB wbw %s size=%s %s GBps=%.4f\n", k, s, tool, row / 8
		s = ""; next }
	/^SRB / { print; next }
	s != "" && $1 == s && NF == 5 { row = $4 }' "$SR_LOGDIR/vm_a.txt" | awk '
function kv(k,   i) {
	for (i = 3; i <= NF; i++)
		if (index($i, k "=") == 1)
			return substr($i, length(k) + 2)
	return ""
}
function median(l,   a, n, i, j, t) {
	n = split(l, a, " ")
	if (n == 0)
		return 0
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function hsize(s) {
	return s >= 1048576 && s % 1048576 == 0 ? s / 1048576 "MiB" : \
		s >= 1024 && s % 1024 == 0 ? s / 1024 "KiB" : s "B"
}
function verdict(r, t) { return r >= t ? "MET" : "MISSED" }
$2 == "vm" { cq = kv("cq_mode"); cpus = kv("cpus") }
$2 == "wbw" && kv("tool") != "ibbi" {
	s = kv("size") + 0
	if (!(s in seen)) { seen[s] = 1; order[++ns] = s }
	v[s, kv("tool")] = v[s, kv("tool")] " " kv("GBps")
}
$2 == "ar" { ar = ar " " kv("busbw"); arsize = kv("size") }
$2 == "wbw" && kv("tool") == "ibbi" { bi = bi " " kv("GBps"); bisize = kv("size") }
$2 == "cpu" && kv("size") == 67108864 {
	cpu[++nc] = sprintf("  %-9s %10s %14s %18s", kv("transport"), kv("busbw"),
		kv("cpu_s_per_GB"), kv("host_cpu_s_per_GB"))
}
END {
	printf "VM a: %s vCPU, cq_mode %s (see vm_b.txt for b)\n", cpus, cq
	if (ns) {
		print "\n1. write bandwidth VM a -> VM b, GB/s: median [every rep]"
		printf "  %-6s %-30s %-30s %7s  %s\n", "size", "ib_write_bw", "gradsync write_bw",
			"ours/ib", "target >= 0.95"
		for (i = 1; i <= ns; i++) {
			s = order[i]
			ib = median(v[s, "ib"]); gs = median(v[s, "gs"])
			r = ib > 0 ? gs / ib : 0
			printf "  %-6s %-30s %-30s %7.3f  %s\n", hsize(s),
				sprintf("%.4f [%s ]", ib, v[s, "ib"]), sprintf("%.4f [%s ]", gs, v[s, "gs"]),
				r, verdict(r, 0.95)
			if (s >= big) { big = s; wbig = gs }
		}
	}
	if (ar != "") {
		a = median(ar)
		printf "\n2. AllReduce %s over roce: busbw %.4f GB/s median [%s ]\n", hsize(arsize), a, ar
		if (wbig > 0)
			printf "   / our write bw at %s (%.4f GB/s) = %.3f  (target >= 0.9) %s\n",
				hsize(big), wbig, a / wbig, verdict(a / wbig, 0.9)
		if (bi != "")
			printf "   the bed both ways at once: ib_write_bw -b at %s %.4f GB/s median [%s ]\n" \
				"   (both directions summed); AllReduce busbw / its half = %.3f\n",
				hsize(bisize), median(bi), bi, a / (median(bi) / 2)
	}
	if (nc) {
		print "\n3. CPU cost, AllReduce 64MiB, tcp and roce in one run (s per GB sent)"
		printf "  %-9s %10s %14s %18s\n", "transport", "busbw GB/s", "cpu_s_per_GB",
			"host_cpu_s_per_GB"
		for (i = 1; i <= nc; i++)
			print cpu[i]
	}
}'
echo "logs: $SR_LOGDIR (vm_a.log, vm_b.log; vm_*.txt without CR)"
[ $ok = 1 ] || { echo "FAIL: a VM did not finish its scenario"; exit 1; }
exit 0
