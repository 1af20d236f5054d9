#!/bin/sh
# Context switches, yields, CPU time and syscalls per AllReduce, ours against Open MPI at
# one point, interleaved: counts hold under load where times do not. Each figure is the
# difference of two runs (ITERS_LO and ITERS_HI iterations) over ITERS_HI - ITERS_LO, so
# start-up and teardown cancel; summed over all ranks (perf stat follows the children).
#   TRANSPORT=tcp RANKS=4 SIZE=4096 REPS=2 tests/bench/switch_count.sh
# MPI runs tuned (MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=-1) with its AllReduce forced
# to MPI_ALG (1 = basic linear, what auto picks for small messages on a crowded host).
# A benchmark, not a test. Needs perf (and tracepoints: root or perf_event_paranoid <= 1).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
G=$(readlink -f "${GRADSYNC:-build/gradsync}")
TRANSPORT=${TRANSPORT:-tcp}
RANKS=${RANKS:-4}
SIZE=${SIZE:-4096}
REPS=${REPS:-2}
ITERS_LO=${ITERS_LO:-200}
ITERS_HI=${ITERS_HI:-5200}
MPI_ALG=${MPI_ALG:-1}
command -v perf >/dev/null || { echo "switch_count.sh: needs perf (Debian linux-perf)"; exit 77; }
command -v mpicc >/dev/null || { echo "install Debian packages openmpi-bin libopenmpi-dev"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mpicc -O2 "$here/mpi_allreduce.c" -o "$T/mpi_allreduce"
printf '1\n2\n1\n%s\n1\n0 %s 0 0\n' "$RANKS" "$MPI_ALG" >"$T/rules.conf"
if [ "$TRANSPORT" = tcp ]; then
	btl="--mca btl tcp,self --mca btl_tcp_if_include lo"
else
	btl="--mca btl vader,self"
fi
EV=context-switches,task-clock,syscalls:sys_enter_sched_yield,syscalls:sys_enter_epoll_wait
EV=$EV,syscalls:sys_enter_poll,syscalls:sys_enter_sendmsg,syscalls:sys_enter_writev
EV=$EV,syscalls:sys_enter_recvmsg,syscalls:sys_enter_readv,syscalls:sys_enter_read

# count PEER ITERS: "event value" lines, then "avg_us value"
count() {
	if [ "$1" = ours ]; then
		cat >"$T/ours.ini" <<INI
[experiment]
name = cs
output_dir = $T/res
[collective]
sizes = $SIZE
iterations = $2
warmup = 3
verify = off
[launch]
local_ranks = $RANKS
[report]
formats = json
[transport]
transport = $TRANSPORT
INI
		rm -rf "$T/res"
		perf stat -x, -e "$EV" -o "$T/stat" -- "$G" -q run "$T/ours.ini" >/dev/null
		/usr/bin/python3 -c "
import glob, json
r = json.load(open(glob.glob('$T/res/cs-*/report.json')[0]))
print('avg_us', r['cases'][0]['collective'][0]['time_us']['avg'])"
	else
		perf stat -x, -e "$EV" -o "$T/stat" -- mpirun --allow-run-as-root --oversubscribe \
			--bind-to none -np "$RANKS" --mca pml ob1 $btl --mca coll_tuned_use_dynamic_rules 1 \
			--mca coll_tuned_dynamic_rules_filename "$T/rules.conf" -x MALLOC_MMAP_MAX_=0 \
			-x MALLOC_TRIM_THRESHOLD_=-1 "$T/mpi_allreduce" "$SIZE" "$SIZE" "$2" 4 |
			awk '{ print "avg_us", $2 }'
	fi
	awk -F, 'NF > 3 && $1 ~ /^[0-9.]+$/ { sub(/^syscalls:sys_enter_/, "", $3); print $3, $1 }' "$T/stat"
}

echo "# $TRANSPORT $RANKS ranks $SIZE B, per AllReduce, all ranks; $(uptime)"
printf '%-5s %-4s %9s %8s %8s %8s %8s %8s %8s %8s %8s\n' peer rep avg_us switches cpu_us \
	yield epoll poll send rcv read
for rep in $(seq "$REPS"); do
	for peer in ours mpi; do
		count "$peer" "$ITERS_LO" >"$T/lo"
		count "$peer" "$ITERS_HI" >"$T/hi"
		awk -v peer="$peer" -v rep="$rep" -v n=$((ITERS_HI - ITERS_LO)) '
			FNR == NR { lo[$1] = $2; next }
			{ hi[$1] = $2 }
			END {
				printf "%-5s %-4s %9.1f", peer, rep, hi["avg_us"]
				split("context-switches task-clock sched_yield epoll_wait poll", k, " ")
				for (i = 1; i <= 5; i++) {
					v = (hi[k[i]] - lo[k[i]]) / n
					if (k[i] == "task-clock") v *= 1000 # msec -> us
					printf " %8.2f", v
				}
				printf " %8.2f", (hi["sendmsg"] + hi["writev"] - lo["sendmsg"] - lo["writev"]) / n
				printf " %8.2f", (hi["recvmsg"] + hi["readv"] - lo["recvmsg"] - lo["readv"]) / n
				printf " %8.2f\n", (hi["read"] - lo["read"]) / n
			}' "$T/lo" "$T/hi"
	done
done
