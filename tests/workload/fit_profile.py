#!/usr/bin/env python3
"""Fit the h200 profile's free parameters on the fit cases alone (fit_cases.txt).

usage: fit_profile.py GRADSYNC_BINARY [--rounds N] [--host-pace] [--profile ROW|FILE]
                      [--ref TABLE --fit-cases LIST] [--fixed KEY,...] > fitted.profile

Starts from `gradsync gpu --profile h200 --write -` (or the --profile given) and adjusts, by
coordinate descent with multiplicative steps, only what no kernel measurement pins down: the
eager host time per call forward, per autograd node backward, per kernel and per further
kernel of one library call (launch_gap_us, bwd_gap_share, launch_us, sublaunch_us), and the
GPU's idle between queued kernels (kernel_gap_us: the profiler's kernel durations, which the
shares are fitted on, leave it out; a multiplicative step needs a start above 0). The layout copies' bytes come from the fit cases' kernels now
(RESULTS.md, eighth session), so their share is no longer free. Matrix rates, convolution and class shares, HBM bandwidth come from
micro_kernels.py (ref/h200_torch_micro.json) and the attention share from the kernel
times the profiler recorded (ref/h200_torch_steps.json, by_class).
The objective is the mean |error| of forward+backward plus half that of forward and, where
the case's host time was measured on a quiet host (quiet_trials, merge_steps.py), half
that of the host's own time per pass (the sum of the ops' host_s), over the fit cases
only; tf32 has no fit case, so its values are not fitted at all.

--ref and --fit-cases fit another row on another card's table: the h100 row's host values
on the H100 leases' steps (ref/h100_torch_steps.json, fit_cases_h100.txt: fp16 and bf16
autocast, fp32 and tf32; the bf16 models held out). --fixed leaves keys as they start
(kernel_gap_us there: the GPU's idle per kernel, which the H100's GPU-bound passes show as
the H200's, 1.1-1.7 us, and a fit of the host alone has no business moving).
"""

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_costmodel import (HOST_KEYS, QUIET_PACE_US, case_key, case_pace, fit_set,  # noqa: E402
                             host_per_pass_ms)
from gradsync_plan import load_json, plan_case  # noqa: E402
# (key, index): the free parameters
FAST = 1.25  # merge_steps.py's: a pace within this of the quiet host's is its fast state
FREE = [("launch_gap_us", 0), ("bwd_gap_share", 0), ("launch_us", 0), ("sublaunch_us", 0),
        ("kernel_gap_us", 0)]


def read_profile(text):
    p = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if "=" in line:
            k, v = [x.strip() for x in line.split("=", 1)]
            p[k] = v if k in ("name", "source") else [float(x) for x in v.split()]
    return p


def write_profile(p, path):
    with open(path, "w") as f:
        for k, v in p.items():
            f.write("%s = %s\n" % (k, v if isinstance(v, str) else
                                   " ".join("%.6g" % x for x in v)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", default="h200", help="the row or file to start from")
    ap.add_argument("--ref", default=os.path.join(HERE, "ref", "h200_torch_steps.json"))
    ap.add_argument("--fit-cases", default=os.path.join(HERE, "fit_cases.txt"))
    ap.add_argument("--fixed", default="", help="comma list of FREE keys to leave as they are")
    ap.add_argument("--host-pace", action="store_true",
                    help="plan each case with the host's values scaled by its trials' pace "
                         "over the quiet host's (check_costmodel.py --host-pace)")
    o = ap.parse_args()
    ref = load_json(o.ref)
    free = [(k, i) for k, i in FREE if k not in o.fixed.split(",")]
    fits = fit_set(o.fit_cases)
    cases = [c for c in ref["cases"] if case_key(c) in fits]
    prof = read_profile(subprocess.run([o.binary, "gpu", "--profile", o.profile, "--write", "-"],
                                       check=True, capture_output=True, text=True).stdout)
    # a case whose trials ran on a host past FAST of the quiet host's pace describes that
    # host: left out of the host's fit, unless each case is planned with the host's values
    # scaled by its pace over the quiet host's (--host-pace, check_costmodel.py's)
    if not o.host_pace:
        slow = [c for c in cases if (case_pace(c, ref.get("host_pace_us")) or 0) >
                FAST * QUIET_PACE_US]
        cases = [c for c in cases if c not in slow]
        print("# %d fit cases measured on a slow host left out (--host-pace takes them)" %
              len(slow), file=sys.stderr)
    scale = {}
    for c in cases:
        pace = case_pace(c, ref.get("host_pace_us")) if o.host_pace else None
        scale[id(c)] = round(pace / QUIET_PACE_US, 2) if pace else 1.0
    tmps = {s: tempfile.NamedTemporaryFile("w", suffix=".profile", delete=False).name
            for s in set(scale.values())}

    def cost(p):
        for s, path in tmps.items():
            write_profile({k: ([x * s for x in v] if k in HOST_KEYS else v)
                           for k, v in p.items()}, path)
        tot = 0
        for c in cases:
            j = plan_case(o.binary, c, ["--gpu-profile", tmps[scale[id(c)]]])
            tot += abs((j["fwd_s"] + j["bwd_s"]) * 1e3 / c["step_ms"] - 1)
            tot += 0.5 * abs(j["fwd_s"] * 1e3 / c["fwd_ms"] - 1)
            if c.get("quiet_trials"):
                # the host's own time per pass, measured on a quiet host: what the host
                # parameters are, whether or not the GPU hides them in this case
                for ph, h in zip(("fwd", "bwd"), host_per_pass_ms(j)):
                    tot += 0.5 * abs(h / c["host_%s_ms" % ph] - 1)
        return tot / len(cases)

    best = cost(prof)
    print("# start: objective %.4f" % best, file=sys.stderr)
    for rnd in range(o.rounds):
        step = [1.3, 1.12, 1.04][min(rnd, 2)]
        for key, i in free:
            for f in (step, 1 / step):
                while True:
                    trial = {k: (list(v) if isinstance(v, list) else v) for k, v in prof.items()}
                    trial[key][i] *= f
                    c = cost(trial)
                    if c < best - 1e-5:
                        best, prof = c, trial
                    else:
                        break
        print("# round %d: objective %.4f" % (rnd, best), file=sys.stderr)
    for path in tmps.values():
        os.unlink(path)
    prof["source"] = "fitted by fit_profile.py on %s" % os.path.basename(o.fit_cases)
    for k, v in prof.items():
        print("%s = %s" % (k, v if isinstance(v, str) else " ".join("%.4g" % x for x in v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
