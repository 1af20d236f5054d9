#!/bin/bash
# The emulated cluster inside one qemu VM, for a kernel with sch_netem: this build host's has
# none, so its bed (bed.sh) can shape a link's rate but add no delay, and alpha stays "not
# resolved". The VM boots Debian's 6.1 kernel through tests/softroce/lib.sh (the one place
# that fetches, packs and boots it), loads bridge, veth, tbf, netem and BBR, and runs bed.sh's
# namespaces in it, so every shaped link also gets a real netem delay (bed.sh --delay).
#
# usage: tests/cluster/vm.sh bed [bed options] EXPERIMENT.ini [gradsync run options]
#          one bed run in a VM (what `bed.sh --vm ...` does); --out DIR and --logs DIR are
#          host directories: the run directory and the ranks' logs come back into them,
#          and the last line is "run: DIR" as with bed.sh
#        tests/cluster/vm.sh measure OUTDIR [bed options]
#          tests/cluster/measure.sh in one VM (one boot for every layout); OUTDIR gets what
#          it writes, predict.txt included
# env:   SR_VM_CPUS (2), SR_VM_MEM (4G), SR_ACCEL (-accel tcg: KVM does not boot on the
#        build host, tests/softroce/lib.sh says how it fails); GS_* and GRADSYNC_LOG*
#        (an experiment's ${GS_...} values) and measure.sh's LAYOUTS, ALGOS, WORKLOAD,
#        FIT_FROM and PREDICT_SIZES are passed into the VM
# The VM has no NIC: the bed's bridge and veths live inside it, one kernel, so the ranks share
# one clock as on the host bed. Under TCG the VM's own floor (what an unshaped link moves, and
# a step's software time) is far below the host's: keep --rate well under it
# (tests/cluster/RESULTS.md, "Latency"). Exit: the command's status (77: cannot boot a VM).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/tests/softroce/lib.sh"

MODE=${1:-}
shift || true
case $MODE in
bed | measure) ;;
*)
	echo "vm.sh: first argument 'bed' or 'measure' (see the head of $0)" >&2
	exit 2
	;;
esac
G=$(readlink -f "${GRADSYNC:-$ROOT/build/gradsync}")
[ -x "$G" ] || { echo "vm.sh: $G not built" >&2; exit 2; }
export SR_VM_CPUS=${SR_VM_CPUS:-2} SR_VM_MEM=${SR_VM_MEM:-4G}
export SR_VM_MODULES=$SR_CLUSTER_MODULES

# quote ARGS for the VM's busybox sh: every argument in single quotes
sh_quote() {
	local a q="'\\''"
	for a in "$@"; do printf "'%s' " "${a//\'/$q}"; done
}

HOSTOUT= HOSTLOGS= LIMIT=600 INI= ARGS=()
if [ "$MODE" = bed ]; then
	# the bed's options until the experiment file; --out/--logs are mapped into the VM
	while [ $# -gt 0 ]; do
		case $1 in
		--out) HOSTOUT=$2; shift 2 ;;
		--logs) HOSTLOGS=$2; shift 2 ;;
		--limit) LIMIT=$2; ARGS+=("$1" "$2"); shift 2 ;;
		--) shift; break ;;
		-*) ARGS+=("$1" "${2:-}"); shift 2 ;;
		*) break ;;
		esac
	done
	[ $# -ge 1 ] || { echo "vm.sh: no experiment file (see bed.sh --help)" >&2; exit 2; }
	INI=$(readlink -f "$1")
	shift
	[ -f "$INI" ] || { echo "vm.sh: $INI: no such file" >&2; exit 2; }
	CMD=(tests/cluster/bed.sh --out /out/run --logs /out/logs "${ARGS[@]}"
		/work/tests/cluster/vm_experiment.ini "$@")
	[ -n "$HOSTOUT" ] || HOSTOUT=$(dirname "$INI")
else
	[ $# -ge 1 ] || { echo "vm.sh: measure OUTDIR [bed options]" >&2; exit 2; }
	HOSTOUT=$1
	shift
	LIMIT=${VM_MEASURE_LIMIT:-3600}
	CMD=(tests/cluster/measure.sh /out/run "$@")
fi
mkdir -p "$HOSTOUT" || exit 2
HOSTOUT=$(readlink -f "$HOSTOUT")
# boot (TCG: 10-30 s), the modules, the namespaces, the tar back over the console
export SR_VM_TIMEOUT=$((LIMIT + 120))

sr_init
SR_TOOLS="$SR_VM_TOOLS ip:iproute2 tc:iproute2 bash:bash unshare:util-linux" sr_need_tools
sr_fetch_kernel || sr_skip "no Debian 6.1 kernel package available (apt-get download failed)"

# /work in the VM: tests/cluster as in the tree (the experiment as vm_experiment.ini), the
# command and the environment it runs with
W=$SR_LOGDIR/work
mkdir -p "$W"
cp "$HERE"/*.sh "$HERE"/*.ini "$W/" || sr_fail "cannot copy tests/cluster"
[ -n "$INI" ] && { cp "$INI" "$W/vm_experiment.ini" || sr_fail "cannot copy $INI"; }
{
	for v in $(compgen -e | grep -E '^(GS_|GRADSYNC_LOG|(LAYOUTS|ALGOS|WORKLOAD|FIT_FROM|PREDICT_SIZES)$)'); do
		[ "$v" = GS_IF ] || [ "$v" = GS_HOST ] && continue
		echo "export $v=$(sh_quote "${!v}")"
	done
	echo "set -- $(sh_quote "${CMD[@]}")"
} >"$W/cmd"
SR_FILES=$(ls "$W"/*) # the initramfs puts them in /work; the scenario in tests/cluster
# iproute2's ip and tc, bash as /bin/sh, coreutils' timeout and util-linux's unshare in
# place of busybox's applets: its ip and tc know no netns or qdiscs, and its sh, timeout and
# unshare run busybox's own applets ahead of PATH.
sr_build_initramfs "$SR_LOGDIR/cluster.cpio.gz" "$HERE/vm_scenario.sh" \
	"$G=/bin/gradsync" "$(command -v ip)=/bin/ip" "$(command -v tc)=/bin/tc" \
	"$(command -v bash)=/bin/sh" "$(command -v timeout)=/bin/timeout" \
	"$(command -v unshare)=/bin/unshare" ||
	sr_fail "initramfs build failed"
echo "vm: ${SR_VM_CPUS} vCPUs, $SR_VM_MEM, ${SR_ACCEL:--accel tcg}, logs in $SR_LOGDIR" >&2
sr_boot cluster "$SR_LOGDIR/cluster.cpio.gz" "" "gs.role=cluster"
# How long the VM's threads were ready to run and waited for a host CPU (their run delay,
# /proc/PID/task/TID/schedstat; qemu names its vCPU threads only with debug-threads, and
# its other threads hardly run): under TCG the guest's clock goes on meanwhile, so this
# is time the ranks on a vCPU lost to the host, not to the links the model describes
vcpu_wait() {
	local q t s=0 d
	q=$(pgrep -P "$1" | head -n 1) # timeout's child: qemu
	[ -n "$q" ] || return 1
	for t in /proc/"$q"/task/*; do
		d=$(awk '{ print $2 }' "$t/schedstat" 2>/dev/null) && s=$((s + d))
	done
	echo "$(date +%s%N) $s"
}
(
	while kill -0 "${SR_PIDS[-1]}" 2>/dev/null; do
		vcpu_wait "${SR_PIDS[-1]}" >>"$SR_LOGDIR/vcpu_wait.txt"
		sleep 1
	done
) &
waiter=$!
sr_wait "${SR_PIDS[-1]}" cluster
st=$?
wait "$waiter"
# the share of the run one vCPU spent waiting, from the first sample to the last
wait_pct=$(awk -v n="$SR_VM_CPUS" 'NR == 1 { t0 = $1; d0 = $2 } { t1 = $1; d1 = $2 }
	END { if (t1 > t0) printf "%.1f", 100 * (d1 - d0) / (t1 - t0) / n }' \
	"$SR_LOGDIR/vcpu_wait.txt" 2>/dev/null)
if [ -n "$wait_pct" ]; then
	echo "vm: its vCPUs waited for a host CPU ${wait_pct}% of the run" >&2
	# each second: host time (ns since the epoch), the VM's threads' run delay so far (ns)
	cp "$SR_LOGDIR/vcpu_wait.txt" "$HOSTOUT/vcpu_wait.txt"
fi

# the VM's /out comes back as base64 between two console lines
tr -d '\r' <"$SR_LOGDIR/cluster.log" >"$SR_LOGDIR/console.txt"
mkdir -p "$SR_LOGDIR/out"
if ! sed -n '/^GS_OUT_BEGIN$/,/^GS_OUT_END$/p' "$SR_LOGDIR/console.txt" | sed '1d;$d' |
	base64 -d | tar -xz -C "$SR_LOGDIR/out"; then
	SR_KEEP_LOGS=1
	echo "vm.sh: the VM's results did not come back (console in $SR_LOGDIR/cluster.log)" >&2
	[ $st = 0 ] && st=1
fi
cat "$SR_LOGDIR/out/vm.out" 2>/dev/null | sed 's|^run: /out/run/|run: '"$HOSTOUT"'/|'
if [ -d "$SR_LOGDIR/out/run" ]; then
	cp -r "$SR_LOGDIR/out/run/." "$HOSTOUT/" || st=1
fi
if [ -n "$HOSTLOGS" ] && [ -d "$SR_LOGDIR/out/logs" ]; then
	mkdir -p "$HOSTLOGS" && cp -r "$SR_LOGDIR/out/logs/." "$HOSTLOGS/"
fi
[ $st = 0 ] || SR_KEEP_LOGS=1
exit $st
