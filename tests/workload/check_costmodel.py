#!/usr/bin/env python3
"""Hold gradsync's cost model against the committed PyTorch measurements.

usage: check_costmodel.py GRADSYNC_BINARY [--ref ref/h200_torch_steps.json] [--profile h200]
                          [--max-err 0.15] [--max-median 0.08] [--max-fwd-err 0.20]
                          [--max-ready-err 0.15] [--enforce]
                          [--guard-median M] [--guard-worst W] [--guard-fwd-median F]
                          [--guard-within N] [--guard-ready-median R] [--guard-ready-within N]
                          [--buckets MODEL:BATCH:SEQ:PRECISION ...]

For every measured case (model, batch, seq, precision) it runs
`gradsync plan --model M --batch B --seq-len S --precision P --gpu-profile G --json --tensors`
and compares forward (fwd_s), forward+backward (fwd_s + bwd_s) and each bucket's ready time
(the latest measured ready time of its members, relative to the end of forward) with the
table. Cases are split into the fit set (tests/workload/fit_cases.txt: the cases the h200
profile's parameters were chosen on) and the held-out rest; both are reported apart.
The gradient-ready order of every case must equal the order PyTorch's hooks recorded
(always enforced). Bucket ready times are GPU-timeline references measured where the
instrument did not stretch the backward (ready_reference: one definition, README "Compute
model"): in ms, and as a share of the backward pass. With --host-pace each case is planned
at its trials' host pace, and its ready times at the pace of the trials they came from
(ready_pace: the light traces and bucket hooks ran in trials of their own).
Prints one line per case and a summary (--buckets: under the cases named, every bucket's
modelled and measured ready time, ms since backward's start, and the reference's source);
with --enforce exits 1 when a threshold is missed;
--guard-* are the regression guard CI runs on the held-out cases: the median and worst
|error| of forward+backward, the median |error| of forward and of the worst bucket ready
time (ms) may not grow past them, the cases within --max-err and buckets' cases within
--max-ready-err may not fall below them.
Exits 0 otherwise (77 when the binary is missing).
"""

import argparse
import ast
import os
import statistics
import subprocess
import sys
import tempfile

from gradsync_plan import load_json, plan_case

HERE = os.path.dirname(os.path.abspath(__file__))


HOST_KEYS = ("launch_gap_us", "launch_us", "sublaunch_us", "bwd_start_us")
QUIET_PACE_US = 6.921  # the host the h200 row's host values were fitted on (merge_steps.py)
# A case whose trials ran on a host this many times slower than the quiet one (READY=9's
# lease, 2026-12-05: 11-14 us per tiny op against 6.92) says nothing about the model at the
# quiet pace: the plain check lists it as "slow-host", apart from fit and held-out, and
# --host-pace, which tells the model that host's pace, counts it as held out.
SLOW_HOST = 1.5


def case_pace(c, run_paces):
    """The host's pace (us per tiny eager op, measure_torch_step.py's probe) in the trials
    a case's figures come from: merge_steps.py kept the trials within QUIET (1.10) of their
    run's pace, so the run is the one of run_paces (the table's host_pace_us) whose kept
    trials give the case's quiet_trials and step_ms; the median of their probes. None where
    the case's run had no probe or no run matches."""
    tr = c.get("trials")
    if isinstance(tr, str):
        tr = ast.literal_eval(tr)
    tr = [t for t in tr or [] if len(t) >= 5]
    if not tr:
        return None
    for run in sorted(run_paces or []):
        keep = [t for t in tr if t[4] <= 1.10 * run] or tr
        if len(keep) == c.get("quiet_trials") and \
                abs(statistics.median(t[1] for t in keep) - c["step_ms"]) < 1e-3:
            return statistics.median(t[4] for t in keep)
    return None


def paced_profile(binary, profile, scale, cache):
    """A copy of profile with the host's values times scale (a host scale times slower),
    written once per scale by the binary itself (gpu --host-pace: the four HOST_KEYS
    scaled by the pace over the row's own, QUIET_PACE_US for h200)."""
    key = round(scale, 2)
    if key not in cache:
        fd, path = tempfile.mkstemp(suffix=".profile")
        os.close(fd)
        subprocess.run([binary, "gpu", "--profile", profile, "--host-pace",
                        "%.6g" % (key * QUIET_PACE_US), "--write", path], check=True,
                       capture_output=True, text=True)
        cache[key] = path
    return cache[key]


def host_per_pass_ms(j):
    """The model's host time per pass (ms) from a `plan --json` answer: its host_fwd_s
    and host_bwd_s (backward's with its start-up: loss.backward()'s walk of the graph is
    the host's too), the timeline's own clock. One definition for fit_profile.py's
    objective and check_host.py."""
    return j["host_fwd_s"] * 1e3, j["host_bwd_s"] * 1e3


def plan(binary, c, profile):
    return plan_case(binary, c, ["--gpu-profile", profile, "--tensors"])


def profile_row(binary, name="h200"):
    """The binary's profile row `name` as numbers ({key: [values]}), as gpu --write writes
    it: what the fit scripts start from and check against."""
    out = subprocess.run([binary, "gpu", "--profile", name, "--write", "-"], check=True,
                         capture_output=True, text=True).stdout
    p = {}
    for line in out.splitlines():
        line = line.split("#")[0].strip()
        if "=" in line:
            k, v = [x.strip() for x in line.split("=", 1)]
            if k not in ("name", "source"):
                p[k] = [float(x) for x in v.split()]
    return p


def fit_set(path=None):
    """The (model, batch, seq, precision) keys a profile's values were fitted on: the h200
    row's fit_cases.txt unless another list is given (fit_cases_h100.txt)."""
    path = path or os.path.join(HERE, "fit_cases.txt")
    keys = set()
    with open(path) as f:
        for line in f:
            line = line.split("#")[0].split()
            if line:
                keys.add(tuple(line))
    return keys


def case_key(c):
    return (c["model"], str(c["batch"]), str(c["seq"]), c["precision"])


STRETCH = 1.10  # a trace whose backward exceeds the untraced one by more is no reference


def ready_reference(c):
    """(ready ms per parameter since backward's start, the backward's ms, source) or None.

    One definition throughout: a gradient is ready when the GPU has finished every kernel
    launched before its AccumulateGrad node ended (what DDP's reducer, firing from that
    node, makes its AllReduce wait for on the stream), in ms from the end of the spin
    kernel launched between forward and backward (the GPU's start of backward: forward's
    kernels and the host's call of loss.backward() both through).
    "bucket-hooked": events from one cheap hook on each bucket's last parameter (measure_torch_
    step.py --gradsync; a bucket is ready when that parameter is); "light": the traces of
    the GPU's activities alone (measure_torch_step.py
    --light-steps; ready_share x bwd_light_ms, the quiet trials' median); "traced": the full
    profile's ready_gpu_ms; "hooked": CUDA events recorded from post-accumulate-grad hooks
    (ready_ms: the later of the GPU having done what was launched before and the hook
    having run; where the hooks did not stretch the backward, the GPU's time). Each counts
    only where its own backward is within STRETCH of the untraced one (bwd_ms): a trace or
    hooks that stretched the backward (host-bound steps: the host's recording, 47 us a
    hook, a slow spell of the host) moved the ready times too, so such a case has no
    reference (counted, not compared)."""
    bwd = c["bwd_ms"]
    if c.get("bucket_ready_ms") and c.get("bwd_bucket_ms", 1e9) <= STRETCH * bwd:
        return dict(c["bucket_ready_ms"]), c["bwd_bucket_ms"], "bucket-hooked"
    if c.get("ready_share") and c.get("bwd_light_ms", 1e9) <= STRETCH * bwd:
        lb = c["bwd_light_ms"]
        return {n: s * lb for n, s in c["ready_share"].items()}, lb, "light"
    rg, gb = c.get("ready_gpu_ms"), c.get("bwd_gpu_ms")
    if rg and gb and gb <= STRETCH * bwd:
        return dict(rg), gb, "traced"
    hk = c.get("ready_ms")
    if hk and max(hk.values()) <= STRETCH * bwd:
        return dict(hk), max(hk.values()), "hooked"
    return None


def ready_pace(c, src):
    """The host's pace (us per tiny op) in the trials a ready reference (ready_reference's
    src) comes from: the light traces and the bucket hooks ran in trials of their own, whose
    host may sit on the other side of forward's balance than the step's trials (a host-bound
    forward hides backward's start-up from the GPU or does not). merge_steps.py stores it
    (light_pace_us, bucket_pace_us). None where unknown (a full trace, the hooked steps, a
    table that does not say: the step's pace stands)."""
    return c.get({"light": "light_pace_us", "bucket-hooked": "bucket_pace_us"}.get(src, ""))


def pct(x):
    return "-" if x is None else "%.1f%%" % (100 * x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--ref", default=os.path.join(HERE, "ref", "h200_torch_steps.json"))
    ap.add_argument("--profile", default="h200")
    ap.add_argument("--fit-cases", default=None,
                    help="the list of the profile's fit cases (default fit_cases.txt, the h200 "
                         "row's; fit_cases_h100.txt for the h100 row's host values)")
    ap.add_argument("--max-err", type=float, default=0.15)
    ap.add_argument("--max-median", type=float, default=0.08)
    ap.add_argument("--max-fwd-err", type=float, default=0.20)
    ap.add_argument("--max-ready-err", type=float, default=0.15)
    ap.add_argument("--enforce", action="store_true")
    ap.add_argument("--guard-median", type=float, default=None)
    ap.add_argument("--guard-worst", type=float, default=None)
    ap.add_argument("--guard-fwd-median", type=float, default=None)
    ap.add_argument("--guard-within", type=int, default=None)
    ap.add_argument("--guard-ready-median", type=float, default=None)
    ap.add_argument("--guard-ready-within", type=int, default=None)
    ap.add_argument("--host-pace", action="store_true",
                    help="scale the host's values per case by its trials' pace over the "
                         "quiet host's (%.3f us): the model told the measured host's speed"
                    % QUIET_PACE_US)
    ap.add_argument("--buckets", nargs="+", default=[], metavar="CASE",
                    help="print each bucket's ready time, model against measured, under "
                         "these cases (model:batch:seq:precision)")
    o = ap.parse_args()
    show = {tuple(x.split(":")) for x in o.buckets}
    if not os.access(o.binary, os.X_OK):
        print("no binary %s" % o.binary)
        return 77
    ref = load_json(o.ref)
    fits = fit_set(o.fit_cases)
    rows = {"fit": [], "held-out": [], "slow-host": []}
    by_prec = {}
    order_bad = []
    print("%-12s %5s %5s %-9s %-8s %9s %9s %7s %7s %7s %7s" % (
        "model", "batch", "seq", "precision", "set", "real_ms", "model_ms", "err",
        "fwd_err", "ready", "share"))
    paced = {}
    for c in ref["cases"]:
        prof, pace = o.profile, case_pace(c, ref.get("host_pace_us"))
        if o.host_pace and pace:
            prof = paced_profile(o.binary, o.profile, pace / QUIET_PACE_US, paced)
        p = plan(o.binary, c, prof)
        step = (p["fwd_s"] + p["bwd_s"]) * 1e3
        err = step / c["step_ms"] - 1
        ferr = p["fwd_s"] * 1e3 / c["fwd_ms"] - 1
        names = [t["name"] for t in p["tensors"]]
        if [names[i] for i in p["ready_order"]] != c["ready_order"]:
            order_bad.append(case_key(c))
        rerrs, rshare, details = [], [], []
        ref_ready = ready_reference(c)
        if ref_ready:
            ready, last, src = ref_ready
            rpace = ready_pace(c, src) if o.host_pace else None
            if rpace and not (pace and abs(rpace / pace - 1) <= 0.005):
                # the ready figures' own trials' host, not the step's
                p = plan(o.binary, c, paced_profile(o.binary, o.profile,
                                                    rpace / QUIET_PACE_US, paced))
            for i, b in enumerate(p["buckets"]):
                real = max(ready.get(names[t], 0) for t in b["tensors"])
                counted = real > 0.05 * last  # tiny early buckets: relative error is noise
                if counted:
                    rerrs.append(abs(b["ready_s"] * 1e3 / real - 1))
                    rshare.append(abs((b["ready_s"] / p["bwd_s"]) / (real / last) - 1))
                if case_key(c) in show and not details:
                    details.append("    forward: host %.3f ms, GPU %.3f ms; backward's start-up "
                                   "%.3f ms; ready times may move by %.3f ms" % (
                                       p["host_fwd_s"] * 1e3, p["gpu_fwd_s"] * 1e3,
                                       p["bwd_start_s"] * 1e3, p["ready_swing_s"] * 1e3))
                if case_key(c) in show:
                    details.append("    bucket %-3d %4d tensors  model %8.3f ms  %s %8.3f ms%s" % (
                        i, len(b["tensors"]), b["ready_s"] * 1e3, src, real,
                        "  %+6.1f%%" % (100 * (b["ready_s"] * 1e3 / real - 1)) if counted
                        else "  (under 5% of backward: not counted)"))
        rmax = max(rerrs) if rerrs else None
        smax = max(rshare) if rshare else None
        s = "fit" if case_key(c) in fits else "held-out"
        if not o.host_pace and pace and pace > SLOW_HOST * QUIET_PACE_US:
            s = "slow-host"
        row = (abs(err), abs(ferr), rmax, smax)
        rows[s].append(row)
        by_prec.setdefault((c["precision"], s), []).append(row)
        print("%-12s %5d %5d %-9s %-8s %9.2f %9.2f %+6.1f%% %+6.1f%% %7s %7s" % (
            c["model"], c["batch"], c["seq"], c["precision"], s, c["step_ms"], step,
            100 * err, 100 * ferr, pct(rmax), pct(smax)))
        for line in details:
            print(line)
    ok = True
    for s, r in rows.items():
        if not r:
            continue
        worst = max(x[0] for x in r)
        med = statistics.median(x[0] for x in r)
        fw = max(x[1] for x in r)
        rds = [x[2] for x in r if x[2] is not None]
        shs = [x[3] for x in r if x[3] is not None]
        within = sum(1 for x in r if x[0] <= o.max_err)
        fwithin = sum(1 for x in r if x[1] <= o.max_fwd_err)
        rwithin = sum(1 for x in rds if x <= o.max_ready_err)
        fmed = statistics.median(x[1] for x in r)
        rdmed = statistics.median(rds) if rds else None
        print("%s: %d cases, %d within %.0f%%, median |err| %.1f%%, worst %.1f%%; forward "
              "%d within %.0f%%, median %.1f%%, worst %.1f%%; bucket ready (worst bucket "
              "of a case, %d cases with a reference that did not stretch the backward) in ms %d within %.0f%%, "
              "median %s, worst %s; as share of backward median %s, worst %s" % (
                  s, len(r), within, 100 * o.max_err, 100 * med, 100 * worst, fwithin,
                  100 * o.max_fwd_err, 100 * fmed, 100 * fw, len(rds), rwithin,
                  100 * o.max_ready_err, pct(rdmed), pct(max(rds) if rds else None),
                  pct(statistics.median(shs) if shs else None),
                  pct(max(shs) if shs else None)))
        ok = ok and worst <= o.max_err and med <= o.max_median and fw <= o.max_fwd_err \
            and (not rds or max(rds) <= o.max_ready_err)
        if s != "held-out":
            continue
        over = []
        for name, val, lim in (("median", med, o.guard_median), ("worst", worst, o.guard_worst),
                               ("forward median", fmed, o.guard_fwd_median),
                               ("ready median", rdmed, o.guard_ready_median)):
            if lim is not None and val is not None and val > lim:
                over.append("%s %.1f%% > %.1f%%" % (name, 100 * val, 100 * lim))
        if o.guard_within is not None and within < o.guard_within:
            over.append("%d within %.0f%% < %d" % (within, 100 * o.max_err, o.guard_within))
        if o.guard_ready_within is not None and rwithin < o.guard_ready_within:
            over.append("ready %d within %.0f%% < %d" % (rwithin, 100 * o.max_ready_err,
                                                         o.guard_ready_within))
        if over:
            print("FAIL: held-out past the guard: %s" % "; ".join(over))
            order_bad.append("guard")
    print("| precision | set | cases | within %.0f%% | median | worst | forward within %.0f%% "
          "| forward median / worst | ready in ms: cases, within %.0f%%, median | ready share "
          "median / worst |" % (100 * o.max_err, 100 * o.max_fwd_err, 100 * o.max_ready_err))
    for (prec, s), r in sorted(by_prec.items()):
        rds = [x[2] for x in r if x[2] is not None]
        shs = [x[3] for x in r if x[3] is not None]
        print("| %s | %s | %d | %d | %.1f%% | %.1f%% | %d | %.1f%% / %.1f%% | %d, %d, %s | "
              "%s / %s |" % (
                  prec, s, len(r), sum(1 for x in r if x[0] <= o.max_err),
                  100 * statistics.median(x[0] for x in r), 100 * max(x[0] for x in r),
                  sum(1 for x in r if x[1] <= o.max_fwd_err),
                  100 * statistics.median(x[1] for x in r), 100 * max(x[1] for x in r),
                  len(rds), sum(1 for x in rds if x <= o.max_ready_err),
                  pct(statistics.median(rds) if rds else None),
                  pct(statistics.median(shs) if shs else None),
                  pct(max(shs) if shs else None)))
    for path in paced.values():
        os.unlink(path)
    print("issue thresholds %s" % ("met" if ok else "missed"))
    if order_bad:
        print("FAIL: ready order differs from PyTorch's (or guard): %s" % order_bad)
        return 1
    print("ready order equals PyTorch's in all %d cases" % len(ref["cases"]))
    return 1 if (o.enforce and not ok) else 0


if __name__ == "__main__":
    sys.exit(main())
