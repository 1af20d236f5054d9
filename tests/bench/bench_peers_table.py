#!/usr/bin/python3
"""The table of tests/bench/bench_peers.sh from its raw.tsv (rep ranks transport program
size avg_us): busbw (size / time x 2(n-1)/n), medians over repetitions per point, ours over the best peer of the
transport (tcp: Open MPI's tcp BTL and Gloo; shm: Open MPI's vader BTL and Gloo, which
has no shared-memory transport), and the points under the issue's targets
(>= 1.0x everywhere, >= 1.5x at 64 MiB). A second ratio pairs the programs within each
repetition (ours over that repetition's best peer, median over repetitions): the VM
switches between a slow and a fast state for minutes, and a repetition caught by a switch
between two programs moves one median and not the other; the pairs keep each comparison
inside one repetition. The targets are judged on both.

  bench_peers_table.py raw.tsv [raw.tsv...]   (several: the repetitions of split runs)
"""
import collections
import statistics
import sys

PEERS = ("mpi-stock", "mpi-tuned", "mpi-rules", "gloo")  # then any other the run holds


def size_name(s):
    return f"{s >> 20} MiB" if s >= 1 << 20 else f"{s >> 10} KiB"


def main(paths):
    byrep = {}  # (rep, ranks, transport, program, size) -> busbw: the one store
    for line in (l for p in paths for l in open(p)):
        f = line.split()
        if len(f) == 6:
            n, s, us = int(f[1]), int(f[4]), float(f[5])
            key = (f[0], n, f[2], f[3], s)
            if key in byrep:
                sys.exit(f"bench_peers_table.py: repetition {f[0]} of {f[3]} {n} ranks {f[2]} "
                         f"{s} B twice: split runs take REP0 (bench_peers.sh)")
            if us > 0:
                byrep[key] = s / us / 1e3 * 2.0 * (n - 1) / n
    runs = collections.defaultdict(list)
    for (_, n, tp, prog, s), bw in byrep.items():
        runs[(n, tp, prog, s)].append(bw)
    med = {k: statistics.median(v) for k, v in runs.items()}
    reps = max((len(v) for v in runs.values()), default=0)
    progs = {k[2] for k in med}
    peers = PEERS + tuple(sorted(p for p in progs if p not in PEERS + ("ours", "base")))
    base = "base" in progs  # ours from another build (BASE=): shown beside ours, not a peer

    def on(tp, prog):
        # Gloo runs over TCP only: it is a peer of both transports
        return "tcp" if prog == "gloo" else tp

    def paired(n, tp, s):
        """Median over repetitions of ours / that repetition's best peer."""
        rs = []
        for rep in sorted({k[0] for k in byrep}):
            o = byrep.get((rep, n, tp, "ours", s))
            ps = [v for v in (byrep.get((rep, n, on(tp, p), p, s)) for p in peers)
                  if v is not None]
            if o and ps:
                rs.append(o / max(ps))
        return statistics.median(rs) if rs else None

    def judge(v, target, where, misses):
        """v as a cell, bold and listed in misses when under target."""
        if v is None:
            return "-"
        if v < target:
            misses.append(f"{where}: {v:.2f} (target {target})")
            return f"**{v:.2f}**"
        return f"{v:.2f}"

    print(f"busbw GB/s, median of {reps} interleaved repetitions; ratio = ours / best peer\n")
    bh = " base | ours/base |" if base else ""
    print("| ranks | transport | size | ours |" + bh + " " + " | ".join(peers) +
          " | best peer | ratio | paired |")
    print("|---|---|---|---|" + "---|---|" * base + "---|" * len(peers) + "---|---|---|")
    misses, pmisses = [], []
    for n in sorted({k[0] for k in med}):
        for tp in ("tcp", "shm"):
            for s in sorted({k[3] for k in med if k[0] == n and k[1] == tp}):
                o = med.get((n, tp, "ours", s))
                ps = {p: med.get((n, on(tp, p), p, s)) for p in peers}
                have = {p: v for p, v in ps.items() if v is not None}
                best = max(have, key=have.get) if have else None
                cells = " | ".join("-" if ps[p] is None else f"{ps[p]:.3g}" for p in peers)
                if base:
                    b = med.get((n, tp, "base", s))
                    cells = (f"{b:.3g} | {o / b:.2f}" if b and o else "- | -") + " | " + cells
                target = 1.5 if s == 64 << 20 else 1.0
                where = f"{n} ranks {tp} {size_name(s)}"
                rs = judge(o / have[best] if o and best else None, target, where, misses)
                ps_ = judge(paired(n, tp, s), target, where, pmisses)
                print(f"| {n} | {tp} | {size_name(s)} | {o:.3g} | {cells} | {best or '-'} | {rs} | {ps_} |"
                      if o else f"| {n} | {tp} | {size_name(s)} | - | {cells} | {best or '-'} | - | - |")
    print()
    print("below target: " + ("; ".join(misses) if misses else "none"))
    print("below target, paired: " + ("; ".join(pmisses) if pmisses else "none"))


if __name__ == "__main__":
    main(sys.argv[1:])
