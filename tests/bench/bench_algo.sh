#!/bin/sh
# Benchmark (not a test): AllReduce algorithms against each other at the sizes where
# `algorithm = auto` has to choose (sched_pick, src/coll/sched.c), interleaved: every
# repetition runs each algorithm once per rank count, in an order that alternates, and
# the table holds per point the median over repetitions of each run's p50 (latency-bound
# sizes: the median shrugs off a preempted iteration on a shared host), or with STAT=avg
# of each run's mean.
#   usage: tests/bench/bench_algo.sh [OUTDIR]
#   env:   RANKS="2 4" REPS=5 ITERS=100 SIZES="4KiB..256KiB x2" TRANSPORTS="tcp, shm" STAT=p50
#          (STAT=avg: each run's mean instead, what bench_peers.sh compares with the peers)
#          ALGOS="ring rd rhd tree linear" (2 ranks: ring, rd and linear only, rhd and
#          tree equal ring there) GRADSYNC=build/gradsync
# Writes OUTDIR/raw.tsv (rep ranks transport algo size us, the STAT) and prints the table:
# µs per AllReduce, the fastest algorithm per point.
set -eu
G=$(readlink -f "${GRADSYNC:-build/gradsync}")
RANKS=${RANKS:-2 4}
REPS=${REPS:-5}
ITERS=${ITERS:-100}
SIZES=${SIZES:-4KiB..256KiB x2}
TRANSPORTS=${TRANSPORTS:-tcp, shm}
ALGOS=${ALGOS:-ring rd rhd tree linear}
STAT=${STAT:-p50}
case $STAT in p50 | avg) ;; *) echo "bench_algo.sh: STAT=$STAT: p50 or avg" >&2; exit 2 ;; esac
OUT=${1:-results/bench-algo-$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$OUT"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
RAW=$OUT/raw.tsv
: >"$RAW"

run1() { # rep n algo
	cat >"$T/a.ini" <<INI
[experiment]
name = algo
output_dir = $T/results
[collective]
sizes = $SIZES
iterations = $ITERS
warmup = 5
verify = off
algorithm = $3
[launch]
local_ranks = $2
[report]
formats = json
[matrix]
transport = $TRANSPORTS
INI
	rm -rf "$T/results"
	"$G" -q run "$T/a.ini" >/dev/null
	/usr/bin/python3 - "$T" "$1" "$2" "$3" "$STAT" >>"$RAW" <<'PY'
import glob, json, sys
rep = json.load(open(glob.glob(sys.argv[1] + "/results/algo-*/report.json")[0]))
for c in rep["cases"]:
    for r in c["collective"]:
        print(sys.argv[2], sys.argv[3], c["config"]["transport.transport"], sys.argv[4],
              r["size"], r["time_us"][sys.argv[5]], sep="\t")
PY
}

rep=1
while [ "$rep" -le "$REPS" ]; do
	for n in $RANKS; do
		algos=$ALGOS
		[ "$n" -le 2 ] && algos=$(echo "$algos" | tr ' ' '\n' | grep -vx 'rhd\|tree' | tr '\n' ' ')
		[ $((rep % 2)) -eq 0 ] && algos=$(echo "$algos" | tr ' ' '\n' | tac | tr '\n' ' ')
		for a in $algos; do
			run1 "$rep" "$n" "$a"
		done
	done
	echo "rep $rep done" >&2
	rep=$((rep + 1))
done

/usr/bin/python3 - "$RAW" "$STAT" <<'PY' | tee "$OUT/table.md"
import collections, statistics, sys
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    rep, n, tp, algo, size, us = line.split()
    v[(int(n), tp, int(size), algo)].append(float(us))
med = {k: statistics.median(x) for k, x in v.items()}
algos = sorted({k[3] for k in med}, key="ring rd rhd tree linear".split().index)
reps = max(len(x) for x in v.values())
print(f"{sys.argv[2]} us per AllReduce, median of {reps} interleaved repetitions\n")
print("| ranks | transport | size | " + " | ".join(algos) + " | fastest |")
print("|---" * (4 + len(algos)) + "|")
for n, tp, size in sorted({k[:3] for k in med}):
    row = {a: med.get((n, tp, size, a)) for a in algos}
    have = {a: x for a, x in row.items() if x is not None}
    best = min(have, key=have.get)
    cells = " | ".join("-" if row[a] is None else f"{row[a]:.1f}" for a in algos)
    name = f"{size >> 10} KiB" if size < 1 << 20 else f"{size >> 20} MiB"
    print(f"| {n} | {tp} | {name} | {cells} | {best} |")
PY
