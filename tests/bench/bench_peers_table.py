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
    runs = collections.defaultdict(list)
    byrep = {}  # (rep, ranks, transport, program, size) -> busbw
    for line in (l for p in paths for l in open(p)):
        f = line.split()
        if len(f) == 6:
            n, s, us = int(f[1]), int(f[4]), float(f[5])
            if us > 0:
                bw = s / us / 1e3 * 2.0 * (n - 1) / n
                runs[(n, f[2], f[3], s)].append(bw)
                byrep[(f[0], n, f[2], f[3], s)] = bw
    med = {k: statistics.median(v) for k, v in runs.items()}
    reps = max((len(v) for v in runs.values()), default=0)
    progs = {k[2] for k in med}
    peers = PEERS + tuple(sorted(p for p in progs if p not in PEERS + ("ours", "base")))
    base = "base" in progs  # ours from another build (BASE=): shown beside ours, not a peer

    def peer(n, tp, prog, s):
        # Gloo runs over TCP only: it is a peer of both transports
        return med.get((n, "tcp" if prog == "gloo" else tp, prog, s))

    def paired(n, tp, s):
        """Median over repetitions of ours / that repetition's best peer."""
        rs = []
        for rep in sorted({k[0] for k in byrep}):
            o = byrep.get((rep, n, tp, "ours", s))
            ps = [byrep.get((rep, n, "tcp" if p == "gloo" else tp, p, s)) for p in peers]
            ps = [v for v in ps if v is not None]
            if o and ps:
                rs.append(o / max(ps))
        return statistics.median(rs) if rs else None

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
                ps = {p: peer(n, tp, p, s) for p in peers}
                have = {p: v for p, v in ps.items() if v is not None}
                best = max(have, key=have.get) if have else None
                r = o / have[best] if o and best else None
                cells = " | ".join("-" if ps[p] is None else f"{ps[p]:.3g}" for p in peers)
                if base:
                    b = med.get((n, tp, "base", s))
                    cells = (f"{b:.3g} | {o / b:.2f}" if b and o else "- | -") + " | " + cells
                rs = f"{r:.2f}" if r else "-"
                pr = paired(n, tp, s)
                ps_ = f"{pr:.2f}" if pr else "-"
                target = 1.5 if s == 64 << 20 else 1.0
                if r is not None and r < target:
                    misses.append(f"{n} ranks {tp} {size_name(s)}: {r:.2f} (target {target})")
                    rs = f"**{rs}**"
                if pr is not None and pr < target:
                    pmisses.append(f"{n} ranks {tp} {size_name(s)}: {pr:.2f} (target {target})")
                    ps_ = f"**{ps_}**"
                print(f"| {n} | {tp} | {size_name(s)} | {o:.3g} | {cells} | {best or '-'} | {rs} | {ps_} |"
                      if o else f"| {n} | {tp} | {size_name(s)} | - | {cells} | {best or '-'} | - | - |")
    print()
    print("below target: " + ("; ".join(misses) if misses else "none"))
    print("below target, paired: " + ("; ".join(pmisses) if pmisses else "none"))


if __name__ == "__main__":
    main(sys.argv[1:])
