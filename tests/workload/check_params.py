#!/usr/bin/env python3
"""Compare gradsync's model tables with the PyTorch modules they describe.

usage: check_params.py GRADSYNC_BINARY [--models a,b,...] [--device meta|cpu]

For every model: `gradsync plan --model X --json --tensors` against the reference
module's named_parameters(): parameter count, tensor count, and each tensor's name and
shape in registration order. Modules are built on the meta device (shapes only, no
memory) and fall back to CPU. Prints a table ours vs theirs; exits 1 on any mismatch,
77 if torch is absent, 0 otherwise. Families whose package (torchvision, transformers)
is missing are reported as skipped.
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gradsync_plan import ALL_MODELS, run_plan, verdict  # noqa: E402


def reference(name, device):
    import reference_models as rm
    try:
        return rm.build(name, device)
    except rm.SkipModel:
        raise
    except Exception as e:  # meta device unsupported by an init function: try CPU
        if device == "cpu" or name.startswith("llama"):
            raise
        print("  %s: %s on %s, retrying on cpu" % (name, type(e).__name__, device))
        return rm.build(name, "cpu")


def first_difference(ours, theirs):
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a != b:
            return "tensor %d: ours %s %s, theirs %s %s" % (i, a[0], a[1], b[0], b[1])
    if len(ours) != len(theirs):
        return "lengths differ: ours %d, theirs %d" % (len(ours), len(theirs))
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gradsync")
    ap.add_argument("--models", default=",".join(ALL_MODELS))
    ap.add_argument("--device", default="meta", choices=["meta", "cpu"])
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("SKIP: torch is not importable")
        return 77
    import reference_models as rm

    print("torch %s" % torch.__version__)
    rows, failed, skipped = [], [], []
    for name in [m for m in args.models.split(",") if m]:
        try:
            model, note, extra = reference(name, args.device)
        except rm.SkipModel as e:
            skipped.append("%s: %s" % (name, e))
            continue
        plan = run_plan(args.gradsync, name, extra)
        theirs = [(n, list(p.shape)) for n, p in model.named_parameters()]
        ours = [(t["name"], t["shape"]) for t in plan["tensors"]]
        their_params = sum(p.numel() for _, p in model.named_parameters())
        diff = first_difference(ours, theirs)
        ok = not diff and plan["num_params"] == their_params and plan["num_tensors"] == len(theirs)
        rows.append((name, plan["num_params"], their_params, plan["num_tensors"], len(theirs),
                     "ok" if ok else "MISMATCH", note or diff))
        if not ok:
            failed.append(name)
        del model

    print("%-12s %15s %15s %7s %7s  %-8s %s" % ("model", "ours params", "torch params",
                                               "ours T", "torch T", "result", "note"))
    for r in rows:
        print("%-12s %15d %15d %7d %7d  %-8s %s" % r)
    for s in skipped:
        print("SKIP %s" % s)
    return verdict(rows, failed, "all %d checked models match")


if __name__ == "__main__":
    sys.exit(main())
