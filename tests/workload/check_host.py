#!/usr/bin/env python3
"""Hold the cost model's host time per pass against measure_host.py's measurement.

usage: check_host.py GRADSYNC_BINARY HOST.json [--max-slope-err 0.15]

For every row of HOST.json (a family at a depth, a precision) it sums the host column of
`gradsync plan --ops` per pass for the same shape (the row's "plan" arguments) and sets
it beside the measured host time brought to the quiet host's pace (x QUIET_PACE_US /
the row's probe: the h200 row's host values describe that host). Per family and precision
(a ResNet's block kind) a least-squares line over the depths (layers; a ResNet's blocks)
splits each side into a time per layer (the slope) and a time per pass outside the layers
(the intercept): where the model's slope is off, its price per call does not fit that
family's Python; where the intercept is, the pass's own start (the model's call, the loss,
backward's start) is. Prints a line per row and per family; exits 1 when a family's slope
is off by more than --max-slope-err, 77 when the binary is missing.
"""

import argparse
import os
import sys

from check_costmodel import QUIET_PACE_US, host_per_pass_ms
from gradsync_plan import load_json, plan_json


def plan_host_ms(binary, args):
    """The model's host time per pass (ms) for `plan ARGS`: forward, backward."""
    return host_per_pass_ms(plan_json([binary, "plan"] + args + ["--json"]))


def line(xs, ys):
    """(slope, intercept) of the least-squares line; (0, mean) for a single depth."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if not sxx:
        return 0.0, my
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return b, my - b * mx


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("host_json")
    ap.add_argument("--max-slope-err", type=float, default=0.15)
    o = ap.parse_args()
    if not os.access(o.binary, os.X_OK):
        print("no binary %s" % o.binary)
        return 77
    doc = load_json(o.host_json)
    fams = {}
    print("%-10s %5s %-8s %17s %17s %11s" % ("model", "depth", "precision",
                                            "real fwd+bwd ms", "model fwd+bwd ms", "ratio"))
    for r in doc["rows"]:
        q = QUIET_PACE_US / r["probe_us"]
        real = (r["host_fwd_ms"] * q, r["host_bwd_ms"] * q)
        model = plan_host_ms(o.binary, r["plan"])
        print("%-10s %5d %-8s %8.3f %8.3f %8.3f %8.3f %5.2f %5.2f" % (
            r["family"], r["layers"], r["precision"], real[0], real[1], model[0], model[1],
            model[0] / real[0], model[1] / real[1]))
        fams.setdefault((r.get("group", r["family"]), r["precision"]), []).append(
            (r["layers"], real, model))
    bad = []
    for (fam, prec), rows in sorted(fams.items()):
        xs = [x[0] for x in rows]
        out = []
        for ph in (0, 1):
            rl = line(xs, [x[1][ph] for x in rows])
            ml = line(xs, [x[2][ph] for x in rows])
            out.append((rl, ml))
            if rl[0] > 0 and abs(ml[0] / rl[0] - 1) > o.max_slope_err:
                bad.append("%s %s %s" % (fam, prec, ("forward", "backward")[ph]))
        print("%-17s %-8s per layer fwd %.3f / model %.3f, bwd %.3f / %.3f ms; per pass "
              "fwd %.3f / %.3f, bwd %.3f / %.3f ms" % (
                  fam, prec, out[0][0][0], out[0][1][0], out[1][0][0], out[1][1][0],
                  out[0][0][1], out[0][1][1], out[1][0][1], out[1][1][1]))
    if bad:
        print("host per layer off by more than %.0f%%: %s" % (100 * o.max_slope_err,
                                                            ", ".join(bad)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
