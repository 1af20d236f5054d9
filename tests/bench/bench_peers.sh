#!/bin/sh
# Benchmark (not a test): our tcp and shm AllReduce beside the peers a performance engineer
# would run on the same host, each tuned as that engineer would, in one run:
#   mpi-stock  Open MPI's MPI_Allreduce (pml ob1; btl tcp,self on lo, or vader,self) as
#              installed;
#   mpi-tuned  the same with glibc's malloc told to keep what it maps (MALLOC_MMAP_MAX_=0,
#              MALLOC_TRIM_THRESHOLD_=-1, passed with mpirun -x): stock Open MPI mallocs and
#              frees a temporary buffer per call, and every fresh page costs a first-touch
#              fault (~15 us on this VM), so its busbw collapses above 32 MiB;
#   gloo       torch.distributed's Gloo (Debian's python3-torch, /usr/bin/python3), TCP on
#              lo, the same malloc settings;
#   mpi-rules  mpi-tuned with the tuned module's AllReduce algorithm chosen per rank count
#              and message size by a dynamic rules file (coll_tuned_use_dynamic_rules=1,
#              coll_tuned_dynamic_rules_filename): the algorithm that beat Open MPI's own
#              choice in every repetition of a sweep of all six here, where one did
#              (RULES below; tests/bench/RESULTS.md, "Open MPI's algorithms");
#   base       (not in the default PEERS) ours built from another commit (BASE=path to its
#              gradsync): a change measured against the code before it in the same run;
#              the table shows it beside ours, never as a peer;
#   mpi-algN   (for that sweep, not in the default PEERS) mpi-tuned with the AllReduce
#              forced to algorithm N (coll_tuned_allreduce_algorithm=N; 1 basic linear,
#              2 nonoverlapping, 3 recursive doubling, 4 ring, 5 segmented ring,
#              6 rabenseifner).
# Ours runs as a user would: the defaults (algorithm = auto, chunk_size = auto, ...).
# Every program times alike: warm-up, iterations back to back, per iteration the ranks'
# mean, averaged (busbw = size / time x 2(n-1)/n). Repetitions interleave every program,
# so a busy machine slows all of them alike; the table shows medians per point and ours
# over the best peer of the transport (tcp: Open MPI tcp and Gloo; shm: Open MPI vader and
# Gloo).
#   usage: tests/bench/bench_peers.sh [OUTDIR]
#   env:   RANKS="2 4" REPS=3 SIZES=small,mid,large ITERS=10 MID_ITERS=50 SMALL_ITERS=200
#          PEERS="ours mpi-stock mpi-tuned mpi-rules gloo" GRADSYNC=build/gradsync BASE=
#          REP0=1 (number of the first repetition: runs of one bench can be split and
#          their raw.tsv files handed together to bench_peers_table.py)
# Writes OUTDIR/raw.tsv (rep ranks transport program size avg_us) and OUTDIR/table.md,
# prints the table.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
G=$(readlink -f "${GRADSYNC:-build/gradsync}")
RANKS=${RANKS:-2 4}
REPS=${REPS:-3}
SIZES=${SIZES:-small,mid,large}
ITERS=${ITERS:-10}
MID_ITERS=${MID_ITERS:-50}
SMALL_ITERS=${SMALL_ITERS:-200}
PEERS=${PEERS:-ours mpi-stock mpi-tuned mpi-rules gloo}
OUT=${1:-results/bench-peers-$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$OUT"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
command -v mpicc >/dev/null || { echo "install Debian packages openmpi-bin libopenmpi-dev"; exit 77; }
mpicc -O2 "$here/mpi_allreduce.c" -o "$T/mpi_allreduce"
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"
TUNED="MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=-1"
RAW=$OUT/raw.tsv
: >"$RAW"

# mpi-rules: "transport ranks from_bytes algorithm" (0: Open MPI's own choice), from the
# sweep (PEERS="mpi-tuned mpi-alg1 .. mpi-alg6" REPS=2, 2026-12-01 17:25-17:50 UTC): per
# point the algorithm whose time beat the default's in both repetitions, by the widest
# margin, smoothed into ranges
RULES="
shm 2 0 3
shm 2 1048576 4
shm 2 16777216 5
shm 2 67108864 6
shm 4 0 1
shm 4 1048576 6
shm 4 67108864 5
tcp 2 0 3
tcp 2 65536 0
tcp 2 1048576 6
tcp 2 67108864 5
tcp 4 0 1
tcp 4 65536 0
tcp 4 262144 2
tcp 4 1048576 6
tcp 4 67108864 5
"
# Open MPI's rules file for one transport: collectives (1), ALLREDUCE's id (2), comm
# sizes, then per comm size its size and rules, each "bytes algorithm fanout segsize"
rules() { # transport file
	echo "$RULES" | awk -v tp="$1" '$1 == tp {
		if (!($2 in n)) order[++ncomm] = $2
		r[$2, ++n[$2]] = $3 " " $4 " 0 0"
	}
	END {
		print 1; print 2; print ncomm
		for (i = 1; i <= ncomm; i++) {
			c = order[i]; print c; print n[c]
			for (j = 1; j <= n[c]; j++) print r[c, j]
		}
	}' >"$2"
}
rules tcp "$T/rules-tcp.conf"
rules shm "$T/rules-shm.conf"

# the size groups: small ones need many iterations to rise above the clock's noise, and
# 1-4 MiB more than 10: with 4 ranks on 2 CPUs one AllReduce of 1 MiB took 300 us to 14 ms
# in one run (p99 2.6-25x p50), so an average of 10 swung the ratio from 0.89x to 1.51x
group() {
	case $1 in
	small) echo "4096 262144 $SMALL_ITERS 4KiB..256KiB" ;;
	mid) echo "1048576 4194304 $MID_ITERS 1MiB..4MiB" ;;
	large) echo "16777216 268435456 $ITERS 16MiB..256MiB" ;;
	*) echo "bench_peers.sh: unknown size group '$1' (small, mid, large)" >&2; exit 2 ;;
	esac
}

# raw: "size avg_us busbw" lines on stdin -> rows of raw.tsv
emit() {
	awk -v rep="$1" -v n="$2" -v tp="$3" -v prog="$4" \
		'NF == 3 { printf "%s\t%s\t%s\t%s\t%s\t%s\n", rep, n, tp, prog, $1, $2 }' >>"$RAW"
}

ours() { # rep n lo hi iters span [binary label]
	cat >"$T/ours.ini" <<INI
[experiment]
name = bench
output_dir = $T/results
[collective]
sizes = $6 x4
iterations = $5
warmup = 3
verify = off
[launch]
local_ranks = $2
[report]
formats = json
[matrix]
transport = tcp, shm
INI
	rm -rf "$T/results"
	"${7:-$G}" -q run "$T/ours.ini" >/dev/null
	for tp in tcp shm; do
		/usr/bin/python3 - "$T" "$tp" <<'PY' | emit "$1" "$2" "$tp" "${8:-ours}"
import glob, json, sys
rep = json.load(open(glob.glob(sys.argv[1] + "/results/bench-*/report.json")[0]))
for c in rep["cases"]:
    if c["config"]["transport.transport"] == sys.argv[2]:
        for r in c["collective"]:
            print(r["size"], r["time_us"]["avg"], r["busbw_GBps"])
PY
	done
}

mpi() { # rep n lo hi iters env-or-empty prog
	for tp in tcp shm; do
		alg=""
		case $7 in
		mpi-rules) alg="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename $T/rules-$tp.conf" ;;
		mpi-alg[1-6]) alg="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm ${7#mpi-alg}" ;;
		esac
		if [ "$tp" = tcp ]; then
			btl="--mca btl tcp,self --mca btl_tcp_if_include lo"
		else
			btl="--mca btl vader,self"
		fi
		xs=""
		for kv in $6; do
			xs="$xs -x $kv"
		done
		# shellcheck disable=SC2086
		$MPIRUN -np "$2" --mca pml ob1 $btl $alg $xs "$T/mpi_allreduce" "$3" "$4" "$5" 4 |
			emit "$1" "$2" "$tp" "$7"
	done
}

gloo() { # rep n lo hi iters
	# shellcheck disable=SC2086
	env $TUNED /usr/bin/python3 "$here/gloo_allreduce.py" "$2" "$3" "$4" "$5" \
		$((29600 + $1 * 10 + $2)) | emit "$1" "$2" tcp gloo
}

rep=${REP0:-1}
while [ "$rep" -lt "$((${REP0:-1} + REPS))" ]; do
	for n in $RANKS; do
		for g in $(echo "$SIZES" | tr , ' '); do
			set -- $(group "$g")
			lo=$1 hi=$2 it=$3 span=$4
			# alternate the order between repetitions: no program always runs first
			order=$PEERS
			[ $((rep % 2)) -eq 0 ] && order=$(echo "$PEERS" | tr ' ' '\n' | tac | tr '\n' ' ')
			for p in $order; do
				case $p in
				ours) ours "$rep" "$n" "$lo" "$hi" "$it" "$span" ;;
				base) ours "$rep" "$n" "$lo" "$hi" "$it" "$span" "$(readlink -f "${BASE:?BASE=path to the base build's gradsync}")" base ;;
				mpi-stock) mpi "$rep" "$n" "$lo" "$hi" "$it" "" mpi-stock ;;
				mpi-tuned | mpi-rules | mpi-alg[1-6]) mpi "$rep" "$n" "$lo" "$hi" "$it" "$TUNED" "$p" ;;
				gloo) gloo "$rep" "$n" "$lo" "$hi" "$it" ;;
				*) echo "bench_peers.sh: unknown peer '$p'" >&2; exit 2 ;;
				esac
			done
			echo "rep $rep: $n ranks, $span done" >&2
		done
	done
	rep=$((rep + 1))
done
/usr/bin/python3 "$here/bench_peers_table.py" "$RAW" | tee "$OUT/table.md"
