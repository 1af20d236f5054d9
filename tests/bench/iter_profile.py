#!/usr/bin/env python3
"""Where a collective case's average comes from, per size, from a run's report.json.

    tests/bench/iter_profile.py RESULTS_DIR_OR_REPORT_JSON

Per case and size: the average (the report's), the p50, p99 and max of the iterations'
times (each the ranks' mean, as the report times an iteration), the sum of the first 5
measured iterations, and the share of the run's time in iterations over 10x the p50.
A few slow iterations (a page's first touch, two ranks put on one CPU for a while) move
an average of 200 small AllReduces more than any change to the steady path; this tells
them apart. Needs ranks.iter_us (null above 65536 ranks x iterations).
"""
import glob
import json
import os
import sys


def report_path(arg):
    if os.path.isfile(arg):
        return arg
    found = sorted(glob.glob(os.path.join(arg, "**", "report.json"), recursive=True),
                   key=os.path.getmtime)
    if not found:
        sys.exit(f"iter_profile.py: no report.json under {arg}")
    return found[-1]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    rep = json.load(open(report_path(sys.argv[1])))
    print("case\tsize\tavg_us\tp50_us\tp99_us\tmax_us\tfirst5_us\tslow_share")
    for k, case in enumerate(rep["cases"]):
        for row in case.get("collective") or []:
            its = (row.get("ranks") or {}).get("iter_us")
            if not its:
                continue
            n = len(its[0])
            mean = [sum(r[i] for r in its) / len(its) for i in range(n)]
            s = sorted(mean)
            p50 = s[n // 2]
            slow = sum(x for x in mean if x > 10 * p50) / sum(mean)
            print(f"{k}\t{row['size']}\t{row['time_us']['avg']:.2f}\t{p50:.2f}\t"
                  f"{s[min(n - 1, n * 99 // 100)]:.2f}\t{s[-1]:.1f}\t{sum(mean[:5]):.1f}\t"
                  f"{slow:.2f}")


main()
