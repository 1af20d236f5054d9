#!/bin/sh
# Benchmark (not a test): our tcp and shm AllReduce busbw next to Open MPI's
# MPI_Allreduce (tcp BTL; shared-memory vader BTL) for 2 and 4 ranks, 1MiB..256MiB,
# in one run on this machine, and the ratio ours / Open MPI. Targets at 64MiB:
# >= 1.5x over TCP, >= 1.2x over shared memory.
#   usage: tests/bench/bench_vs_mpi.sh [RANKS...]   (default: 2 4)
set -eu
G=$(readlink -f "${GRADSYNC:-build/gradsync}")
RANKS=${*:-2 4}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
command -v mpicc >/dev/null || { echo "install Debian packages openmpi-bin libopenmpi-dev"; exit 77; }
mpicc -O2 "$(dirname "$0")/mpi_allreduce.c" -o "$T/mpi_allreduce"
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"
LO=1048576 HI=268435456 ITERS=${ITERS:-10}

for n in $RANKS; do
	cat >"$T/ours.ini" <<INI
[experiment]
name = bench
output_dir = $T/results
[collective]
sizes = 1MiB..256MiB x2
iterations = $ITERS
warmup = 3
verify = off
algorithm = ring
[launch]
local_ranks = $n
[report]
formats = json
[matrix]
transport = tcp, shm
INI
	"$G" -q run "$T/ours.ini" >/dev/null
	$MPIRUN -np "$n" --mca btl tcp,self --mca btl_tcp_if_include lo "$T/mpi_allreduce" $LO $HI $ITERS >"$T/mpi_tcp.$n"
	$MPIRUN -np "$n" --mca btl vader,self "$T/mpi_allreduce" $LO $HI $ITERS >"$T/mpi_shm.$n"
	python3 - "$T" "$n" <<'PY'
import glob, json, sys
T, n = sys.argv[1], sys.argv[2]
rep = json.load(open(sorted(glob.glob(T + "/results/bench-*/report.json"))[-1]))
ours = {}
for c in rep["cases"]:
    tp = c["config"]["transport.transport"]
    ours[tp] = {r["size"]: r["busbw_GBps"] for r in c["collective"]}
def mpi(f):
    return {int(l.split()[0]): float(l.split()[2]) for l in open(f) if l.strip()}
ref = {"tcp": mpi(T + "/mpi_tcp." + n), "shm": mpi(T + "/mpi_shm." + n)}
print(f"\n{n} ranks            busbw GB/s: gradsync vs Open MPI")
print(f"{'size':>10} | {'tcp ours':>9} {'tcp mpi':>8} {'ratio':>6} | {'shm ours':>9} {'shm mpi':>8} {'ratio':>6}")
for s in sorted(ref["tcp"]):
    row = f"{s >> 20:>8}Mi |"
    for tp in ("tcp", "shm"):
        o, m = ours.get(tp, {}).get(s, 0), ref[tp].get(s, 0)
        row += f" {o:9.3f} {m:8.3f} {o / m if m else 0:6.2f} |"
    print(row)
s = 64 << 20
for tp, target in (("tcp", 1.5), ("shm", 1.2)):
    o, m = ours[tp].get(s, 0), ref[tp].get(s, 0)
    r = o / m if m else 0
    print(f"64MiB {tp}: ours {o:.3f} GB/s, Open MPI {m:.3f} GB/s, ratio {r:.2f} (target >= {target}) {'MET' if r >= target else 'MISSED'}")
PY
	rm -rf "$T/results"
done
