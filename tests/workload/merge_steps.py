#!/usr/bin/env python3
"""Merge measure_torch_step.py outputs into one reference table (ref/h200_torch_steps.json).

usage: merge_steps.py OUT.json RUN.json [RUN.json ...] [--ready-only RUN.json [--steps-too CASE,...]]

A RUN.json may be gzipped (RUN.json.gz, as the raw runs under ref/runs/ are).

Later runs supersede earlier ones: a case (model, batch, seq, precision) takes fwd_ms,
bwd_ms, step_ms, host times, kernels and ready times from the last run that measured it
(hook-free ready_gpu_ms from the last that has them), and "runs" lists every run's step_ms
(the reference's spread between runs). Pass the old table first to keep the cases no later
run measured.

Quiet-host trials: where a run recorded the host's pace before each trial (the 5th field of
"trials", host_probe_us: us per tiny eager op), only the trials whose pace is within
QUIET of the run's median pace count, and the case's figures are the median of those
trials ("quiet_trials" says how many). The lent machine's host switches between a fast and
a ~1.5x slower state for tens of seconds at a time (RESULTS.md, 2026-12-01): a host-bound
step measured in the slow state is the neighbour's noise, not PyTorch's cost.
Cases keep the order of their first appearance; env and cpu are the last run's. The light
traces' figures and the bucket hooks' (below) come, like the kernels, from the last run that
has them: a later run of steps alone keeps an earlier one's ready references.

Hook-free ready shares (ready_share): where a run traced light steps (measure_torch_step.py
--light-steps: the GPU's activities alone), each parameter's ready time as a share of that
trial's backward on the GPU, the median over the run's quiet trials; bwd_light_ms is that
backward. --ready-only RUN takes only those from RUN (a run whose host was in its slow
state throughout: its shares hold, its host-bound step times do not), except for the cases
named in --steps-too (model:batch:seq:precision), which take its step figures as well.
Bucket ready times (bucket_ready_ms, bwd_bucket_ms): where a run hooked each bucket's last
parameter alone (--gradsync), the quiet trials' median, taken like the shares.
A --ready-only run is one whose host was slow most of the time, so its quiet pace is its
fast state's (the probes within FAST of its fastest), not its median. A merged table passed
as a run keeps its figures as they are (merging it alone gives it back).
"""

import json
import statistics
import sys

from gradsync_plan import load_json


QUIET = 1.10
FAST = 1.25  # a probe within this of a run's fastest is in the host's fast state


def run_pace(r, fast=False):
    """The run's host pace (us per tiny op): the median probe of its trials, or with fast
    the median of those in the fast state alone (within FAST of the fastest): a run whose
    host was in its slow state most of the time (its median is the slow state) still has
    a few fast trials, and only those are the quiet host. None where no trial has a probe."""
    p = [t[4] for c in r["cases"] for t in c.get("trials", []) if len(t) >= 5]
    if fast and p:
        p = [x for x in p if x <= FAST * min(p)]
    return statistics.median(p) if p else None


def key(c):
    return (c["model"], c["batch"], c["seq"], c["precision"])


def quiet_figures(c, pace):
    """Refigure c from its quiet trials (in place); returns the number kept."""
    tr = [t for t in c.get("trials", []) if len(t) >= 5]
    if not tr or not pace:
        return None
    keep = [t for t in tr if t[4] <= QUIET * pace] or tr
    med = statistics.median
    c["fwd_ms"] = round(med(t[0] for t in keep), 4)
    c["step_ms"] = round(med(t[1] for t in keep), 4)
    c["bwd_ms"] = round(med(t[1] - t[0] for t in keep), 4)
    c["host_fwd_ms"] = round(med(t[2] for t in keep), 4)
    c["host_bwd_ms"] = round(med(t[3] for t in keep), 4)
    c["quiet_trials"] = len(keep)
    return len(keep)


def ready_shares(c, pace):
    """ready_share {name: share of backward} and bwd_light_ms from c's light trials, the
    quiet ones where a pace is known (in place); returns the number of trials used."""
    tr, rd = c.get("light_trials") or [], c.get("light_ready") or []
    if not tr or len(tr) != len(rd):
        return 0
    use = [i for i, t in enumerate(tr) if not pace or t[0] <= QUIET * pace] or \
        list(range(len(tr)))
    med = statistics.median
    order = c.get("light_order") or c["ready_order"]
    c["ready_share"] = {n: round(med(rd[i][k] / tr[i][2] for i in use), 5)
                        for k, n in enumerate(order)}
    c["bwd_light_ms"] = round(med(tr[i][2] for i in use), 4)
    c["bwd_start_ms"] = round(med(tr[i][3] for i in use), 4)
    c["light_kept"] = len(use)
    c["light_pace_us"] = round(med(tr[i][0] for i in use), 3)  # the host of these trials
    return len(use)


def bucket_figures(c, pace):
    """bucket_ready_ms {name: ms} and bwd_bucket_ms from c's bucket_trials (one cheap hook
    per bucket: measure_torch_step.py --gradsync), the quiet ones where a pace is known (in
    place); returns the number of trials used."""
    tr = c.get("bucket_trials") or []
    use = [t for t in tr if not pace or t[0] <= QUIET * pace] or tr
    if not use:
        return 0
    med = statistics.median
    c["bucket_ready_ms"] = {n: round(med(t[2][n] for t in use if n in t[2]), 4)
                            for n in use[0][2]}
    c["bwd_bucket_ms"] = round(med(t[1] for t in use), 4)
    c["bucket_pace_us"] = round(med(t[0] for t in use), 3)
    return len(use)


# what the light traces, the per-op diagnosis and the bucket hooks give a case: each group
# is taken whole from one run
LIGHT_GROUPS = (("ready_share", "bwd_light_ms", "bwd_start_ms", "light_kept", "light_trials",
                 "light_pace_us"), ("diag",),
                ("bucket_ready_ms", "bwd_bucket_ms", "bucket_trials", "bucket_pace_us"))
LIGHT_FIELDS = sum(LIGHT_GROUPS, ())


def drop_annotations(c):
    """The first 2026-12-01 host run counted kineto's GPU-side copies of the gs::forward /
    gs::backward annotations as kernels (fixed in measure_torch_step.py since): take them
    out of that run's kernel counts and busy times (in place)."""
    k = c.get("kernels") or {}
    for name, (n, us) in list((k.get("names") or {}).items()):
        ph, _, kname = name.partition("|")
        if kname.startswith("gs::") and ph in k:
            k[ph]["count"] -= n
            k[ph]["busy_us"] = round(k[ph]["busy_us"] - us, 1)
            other = k[ph]["by_class"].get("other")
            if other:
                other[0] -= n
                other[1] = round(other[1] - us, 1)
            del k["names"][name]


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    args, ready_only, steps_too = sys.argv[2:], [], set()
    if "--steps-too" in args:
        i = args.index("--steps-too")
        steps_too = {tuple(x.split(":")) for x in args[i + 1].split(",")}
        del args[i:i + 2]
    while "--ready-only" in args:
        i = args.index("--ready-only")
        ready_only.append(load_json(args[i + 1]))
        del args[i:i + 2]
    runs = [load_json(p) for p in args]
    order, by = [], {}
    for r in runs:
        table = isinstance(r.get("host_pace_us"), list)  # an earlier merge_steps.py output
        pace = None if table else run_pace(r)
        if pace:
            r["host_pace_us"] = round(pace, 3)
        for c in r["cases"]:
            drop_annotations(c)
            # a merged table's figures stay: they were made with its runs' own paces
            if not table:
                quiet_figures(c, pace)
                ready_shares(c, pace)
                bucket_figures(c, pace)
            k = key(c)
            if k not in by:
                order.append(k)
                by[k] = []
            by[k].append(c)
    cases = []
    for k in order:
        cs = by[k]
        m = dict(cs[-1])
        # a table's case brings its runs' list, a run its own step
        m["runs"] = sum((c.get("runs", [c["step_ms"]]) if i == 0 else [c["step_ms"]]
                         for i, c in enumerate(cs)), [])
        for c in reversed(cs):
            if c.get("kernels"):
                m["kernels"] = c["kernels"]
                break
        for c in reversed(cs):
            if c.get("ready_gpu_ms"):
                m["ready_gpu_ms"], m["bwd_gpu_ms"] = c["ready_gpu_ms"], c["bwd_gpu_ms"]
                break
        # the light traces' and the bucket hooks' figures, likewise: a later run of steps
        # alone keeps the references an earlier one traced (each carries its own pace)
        for group in LIGHT_GROUPS:
            if any(f in m for f in group):
                continue
            for c in reversed(cs):
                if any(f in c for f in group):
                    m.update({f: c[f] for f in group if f in c})
                    break
        cases.append(m)
    at = {key(c): c for c in cases}
    for r in ready_only:
        # a ready-only run is one whose host was mostly slow: its fast trials alone count
        pace = run_pace(r, fast=True)
        for c in r["cases"]:
            m = at.get(key(c))
            if m is None or not (ready_shares(c, pace) + bucket_figures(c, pace)):
                continue
            if tuple(str(x) for x in key(c)) in steps_too:
                quiet_figures(c, pace)
                for f in ("fwd_ms", "step_ms", "bwd_ms", "host_fwd_ms", "host_bwd_ms",
                          "quiet_trials", "trials", "kernels"):
                    if f in c:
                        m[f] = c[f]
                m["runs"] = m.get("runs", []) + [c["step_ms"]]
            for f in LIGHT_FIELDS:
                if f in c:
                    m[f] = c[f]
    paces = sum((r["host_pace_us"] if isinstance(r.get("host_pace_us"), list)
                 else [r.get("host_pace_us")] for r in runs), [])
    doc = {"env": runs[-1]["env"], "cpu": runs[-1].get("cpu"), "cases": cases,
           "host_pace_us": paces,
           "skipped": sum((r.get("skipped", []) for r in runs), [])}
    with open(sys.argv[1], "w") as f:
        json.dump(doc, f, indent=0)
    print("%s: %d cases from %d runs" % (sys.argv[1], len(cases), len(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
