#!/usr/bin/env python3
"""Merge measure_torch_step.py outputs into one reference table (ref/h200_torch_steps.json).

usage: merge_steps.py OUT.json RUN.json [RUN.json ...]

A case (model, batch, seq, precision) measured in several runs gets the median of the runs'
medians (fwd_ms, bwd_ms, step_ms; a host-bound step varies by 10-20% between runs of the
same case, see README "Compute model"), the list of each run's step_ms ("runs"), and the
kernels and ready times of the latest run that has them (hook-free ready_gpu_ms first).
Cases keep the order of their first appearance; env is the first run's.
"""

import json
import statistics
import sys


def key(c):
    return (c["model"], c["batch"], c["seq"], c["precision"])


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    runs = [json.load(open(p)) for p in sys.argv[2:]]
    order, by = [], {}
    for r in runs:
        for c in r["cases"]:
            k = key(c)
            if k not in by:
                order.append(k)
                by[k] = []
            by[k].append(c)
    cases = []
    for k in order:
        cs = by[k]
        m = dict(cs[-1])
        for f in ("fwd_ms", "bwd_ms", "step_ms"):
            m[f] = round(statistics.median(c[f] for c in cs), 4)
        m["runs"] = [c["step_ms"] for c in cs]
        for c in reversed(cs):
            if c.get("kernels"):
                m["kernels"] = c["kernels"]
                break
        for c in reversed(cs):
            if c.get("ready_gpu_ms"):
                m["ready_gpu_ms"], m["bwd_gpu_ms"] = c["ready_gpu_ms"], c["bwd_gpu_ms"]
                break
        cases.append(m)
    doc = {"env": runs[0]["env"], "cases": cases,
           "skipped": sum((r.get("skipped", []) for r in runs), [])}
    with open(sys.argv[1], "w") as f:
        json.dump(doc, f, indent=0)
    print("%s: %d cases from %d runs" % (sys.argv[1], len(cases), len(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
