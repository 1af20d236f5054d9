#!/usr/bin/env python3
"""compute = gemm against the cost model: does the GPU step take what `gradsync plan` says?

usage: check_gemm_mode.py GRADSYNC_BINARY [--ini tests/workload/gemm_mode.ini] [--max-err 0.05]
                          [--report FILE.json]

Runs the experiment (one rank per case, so a step is compute alone) unless --report names
the report.json of a run already made, and compares each case's median forward and backward
time (fwd_ms.p50, bwd_ms.p50 of the report) with plan's fwd_s and bwd_s for the same model,
batch, sequence, precision and GPU profile. Prints one line per case; exits 1 when a case's
forward+backward is off by more than --max-err, 77 when the binary is missing.
"""

import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--ini", default=os.path.join(HERE, "gemm_mode.ini"))
    ap.add_argument("--max-err", type=float, default=0.05)
    ap.add_argument("--report", default=None)
    ap.add_argument("--out-dir", default=None)
    o = ap.parse_args()
    if not os.access(o.binary, os.X_OK):
        print("no binary %s" % o.binary)
        return 77
    report = o.report
    if not report:
        out = o.out_dir or "results"
        before = set(glob.glob(os.path.join(out, "gemm_mode-*")))
        subprocess.run([o.binary, "run", o.ini] + (["--out", out] if o.out_dir else []),
                       check=True)
        new = sorted(set(glob.glob(os.path.join(out, "gemm_mode-*"))) - before)
        if not new:
            print("FAIL: the run left no report under %s" % out)
            return 1
        report = os.path.join(new[-1], "report.json")
    doc = json.load(open(report))
    bad = 0
    print("%-44s %9s %9s %9s %9s %7s" % ("case", "fwd_ms", "plan_fwd", "bwd_ms", "plan_bwd",
                                          "err"))
    for c in doc["cases"]:
        w, cfg = c.get("workload"), c["config"]
        if not w or c.get("status") != "ok":
            print("%-44s FAIL: status %s" % (c["name"], c.get("status")))
            bad += 1
            continue
        cmd = [o.binary, "plan", "--model", cfg["workload.model"], "--batch",
               cfg["workload.batch"], "--seq-len", cfg["workload.seq_len"], "--precision",
               cfg["workload.precision"], "--gpu-profile", cfg["gpu.profile"], "--json"]
        p = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        f, b = w["fwd_ms"]["p50"], w["bwd_ms"]["p50"]
        pf, pb = p["fwd_s"] * 1e3, p["bwd_s"] * 1e3
        err = (f + b) / (pf + pb) - 1
        bad += abs(err) > o.max_err
        print("%-44s %9.2f %9.2f %9.2f %9.2f %+6.1f%%  (%s, %s kernels)" % (
            c["name"], f, pf, b, pb, 100 * err, w["compute"], w.get("gpu_kernels")))
    print("%d of %d cases off by more than %.0f%%" % (bad, len(doc["cases"]), 100 * o.max_err))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
