#!/usr/bin/env python3
"""Fit the h200 profile's convolution table (conv_shape) on cuDNN's kernels by shape.

usage: fit_conv.py GRADSYNC_BINARY [--micro RUN.json,...] [--fit-batches 16,64,256] [--c]
       fit_conv.py GRADSYNC_BINARY --check [--max-shape-median 0.2] [--max-batch-sum 0.1]

The micro runs (micro_kernels.py --only conv_split; by default the two of 2026-12-01: batches
16, 32, 64, 128, 256 and 8, 24, 48, 96) timed every convolution of ResNet-18/50, forward, data
gradient and weight gradient apart, fp32 and bf16. For each
precision and pass this fits the conv_row of costmodel.h (per kind of window and stride a
peak share and the GEMM view's size at half the rate, and one GFLOP at half the rate) on the
batches of --fit-batches alone, with the cost model's own formula (matrix_t0_us and the
floor per kernel of the profile taken as they are; the output pixels at half the rate
among the free values: PIXELS_WHY), from a flat start and from the profile's own rows, the
lower objective of the two, by coordinate descent on the log error
of each shape's time and, weighted as much as all the shapes of a batch, of each batch's sum
over its shapes. It prints, for the batches left out, each pass's median and worst
|error| per shape and the error of the sum over the shapes of a batch (what a step feels),
against the same figures for the profile's one share per direction; then the profile lines
(or with --c the C initializer of the h200 row). bf16's row serves fp16 (the same tensor
cores). tf32 (the third run, 2026-12-03: batches 8-256) is fitted on the same batches, with
bf16's kinds and kernel counts (the tensor cores' NHWC kernels, no Winograd).
--check fits nothing: it holds the binary's own h200 rows against the batches left out and
exits 1 where a pass's median |error| per shape or a batch's sum is past the limits (the
guard test_costmodel.sh runs).
"""

import argparse
import math
import os
import statistics
import sys

from check_costmodel import profile_row
from descent import descend
from gradsync_plan import load_json

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ("1x1", "1x1/2", "3x3", "3x3/2", "7x7/2", "3x3@7", "1x1@7")
NK = len(KINDS)
# a 3x3 window at stride 1 over an output this small has too few of Winograd's tiles: in
# fp32 cuDNN runs plain kernels there (data gradient at 22-28 TFLOP/s at every batch, 57-106
# for the Winograd shapes), its own kind; the tensor cores' precisions use no Winograd, so
# their small 3x3 is the 3x3 kind (costmodel.c conv_rate: a row without it takes 3x3's)
SMALL_SIDE = 7
FALLBACK = {5: 2, 6: 0}  # 3x3@7 -> 3x3, 1x1@7 -> 1x1 (costmodel.c conv_rate)
PASSES = (("conv_fwd", "fwd"), ("conv_dgrad", "dgrad"), ("conv_wgrad", "wgrad"))
MX = {"fp32": 0, "tf32": 1, "bf16": 2}
# PIXELS_WHY: few output pixels (batch x side^2: the implicit GEMM's rows) starve cuDNN's
# kernels: every 16-bit and tf32 3x3 over a 7 x 7 output ran at 0.5-0.6 of its kind's rate
# at batch 8 and 1.3-1.8 times it at 256 without the term, the larger outputs within a few
# percent at every batch. pixels_half is free in every precision; the fit batches decide
# (fp32's weight gradients: none)
# kernels the model charges a pass (layers.c ly_conv_kernels): the floor per kernel
KERNELS = {"fp32": {1: {"fwd": 1, "dgrad": 2, "wgrad": 2}, 3: {"fwd": 1, "dgrad": 5, "wgrad": 4}},
           "bf16": {1: {"fwd": 3, "dgrad": 3, "wgrad": 2}, 3: {"fwd": 6, "dgrad": 6, "wgrad": 5}}}
# tf32 runs the tensor cores' NHWC kernels with their transposes, as bf16: the micro run
# launches as many per pass in both (1x1 2.2 / 2.3 / 3.1 against 2.3 / 2.5 / 3.0, 3x3 4.3 /
# 4.7 / 5.2 against 4.5 / 4.8 / 4.9), so the step's counts are bf16's (layers.c: fp32 alone
# counts its own)
KERNELS["tf32"] = KERNELS["bf16"]


def kernels(row):
    return KERNELS[row["prec"]][1 if row["kind"] in (0, 1, 6) else 3][row["pass"]]


def kind(k, s, side, prec):
    # the small 1x1 (ResNet-50's layer4): fp32's weight gradients there run at twice the
    # 1x1 row's rate; fp32 only, as the small 3x3
    if (k, s) == (3, 1) and side <= SMALL_SIDE and prec == "fp32":
        return 5
    if (k, s) == (1, 1) and side <= SMALL_SIDE and prec == "fp32":
        return 6
    if k in (1, 3) and s in (1, 2):
        return (0 if k == 1 else 2) + (s == 2)
    return 4 if (k, s) == (7, 2) else None


def rows(path):
    out = []
    for x in load_json(path):
        if not x.get("op", "").startswith("conv_") or "gpu_us" not in x:
            continue
        b, cin, cout, k, s, hw = x["shape"]
        kd = kind(k, s, hw // s, x["prec"])
        if kd is None:
            continue
        ps = dict(PASSES)[x["op"]]
        inner = {"fwd": cin * k * k, "dgrad": cout * k * k, "wgrad": cout * cin * k * k}[ps]
        out.append({"prec": x["prec"], "pass": ps, "b": b, "kind": kd, "F": x["flops"],
                    "inner": inner, "pixels": b * (hw // s) ** 2, "t": x["gpu_us"],
                    "shape": x["shape"]})
    return out


def model_us(row, peak_t, t0, floor, p):
    """The cost model's time (costmodel.c conv_rate, cost_op_gpu_s) for parameters p:
    [log share xNK, log inner_half xNK, log gflop_half, log pixels_half (-inf: none)]."""
    k = row["kind"]
    if k in FALLBACK and p[k] == float("-inf"):  # a row without the small kind: its base's
        k = FALLBACK[k]
    share, ih, gh = math.exp(p[k]), math.exp(p[NK + k]), math.exp(p[2 * NK])
    rate = peak_t * 1e12 * share * row["F"] / (row["F"] + gh * 1e9) * \
        row["inner"] / (row["inner"] + ih)
    if p[2 * NK + 1] > float("-inf"):
        rate *= row["pixels"] / (row["pixels"] + math.exp(p[2 * NK + 1]))
    return kernels(row) * floor + t0 + row["F"] / rate * 1e6


def old_us(row, prof):
    mx = MX[row["prec"]]
    eff = prof["conv_bwd_eff" if row["pass"] != "fwd" else "conv_eff"][mx]
    gain = prof["conv3_gain"][mx] if row["kind"] in (2, 3, 5) else 1
    rate = prof["matrix_tflops"][mx] * 1e12 * eff * gain
    return kernels(row) * prof["floor_us"][0] + \
        prof["matrix_t0_us"][mx] + row["F"] / rate * 1e6


def fit(group, peak_t, t0, floor, row):
    """Coordinate descent with halving steps on the sum of squared log errors, from a flat
    start and from the profile's row (its unset entries flat); the lower of the two.
    Returns (p, cost)."""
    flat = [math.log(0.5)] * NK + [math.log(64)] * NK + [math.log(1.0), math.log(1000)]
    warm = [math.log(x) if x > 0 else f for x, f in zip(row, flat)]
    used = {r["kind"] for r in group}

    batches = sorted({r["b"] for r in group})

    def cost(q):
        m = {r["b"]: 0.0 for r in group}
        c = 0.0
        for r in group:
            t = model_us(r, peak_t, t0, floor, q)
            m[r["b"]] += t
            c += math.log(t / r["t"]) ** 2
        # the sum over a batch's shapes (what a step feels) counts as much as the shapes
        return c + len(group) / len(batches) * sum(
            math.log(m[b] / sum(r["t"] for r in group if r["b"] == b)) ** 2 for b in batches)

    p = min((descend(cost, s, free=lambda i: i >= 2 * NK or i % NK in used)
             for s in (flat, warm)), key=cost)
    c = cost(p)
    for k in range(NK):  # a kind never measured: no row (conv_eff)
        if k not in used:
            p[k] = p[NK + k] = float("-inf")
    return p, c


def figures(group, f):
    e = [f(r) / r["t"] - 1 for r in group]
    by_b = {}
    for r in group:
        m, t = by_b.get(r["b"], (0, 0))
        by_b[r["b"]] = (m + f(r), t + r["t"])
    return (statistics.median(abs(x) for x in e), max(abs(x) for x in e),
            {b: m / t - 1 for b, (m, t) in sorted(by_b.items())})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--micro", default=",".join(os.path.join(HERE, "ref", "runs", f) for f in (
        "h200_2026-12-01_micro_conv_split.json.gz",
        "h200_2026-12-01_micro_conv_split_b8-96.json.gz",
        "h200_2026-12-03_micro_conv_split_tf32.json.gz")),
        help="micro runs, comma-separated")
    ap.add_argument("--fit-batches", default="16,64,256")
    ap.add_argument("--c", action="store_true", help="print the C initializer")
    ap.add_argument("--check", action="store_true", help="hold the profile's rows, fit nothing")
    ap.add_argument("--max-shape-median", type=float, default=0.20)
    ap.add_argument("--max-batch-sum", type=float, default=0.10)
    o = ap.parse_args()
    prof = profile_row(o.binary)
    fitb = {int(x) for x in o.fit_batches.split(",")}
    data = [r for path in o.micro.split(",") for r in rows(path)]
    out, bad = {}, False
    for prec in [p for p in ("fp32", "tf32", "bf16") if any(r["prec"] == p for r in data)]:
        mx = MX[prec]
        peak_t, t0, floor = prof["matrix_tflops"][mx], prof["matrix_t0_us"][mx], \
            prof["floor_us"][0]
        for _, ps in PASSES:
            g = [r for r in data if r["prec"] == prec and r["pass"] == ps]
            row = prof["conv_shape.%s.%s" % (prec, ps)]
            if o.check:
                p = [math.log(x) if x > 0 else float("-inf") for x in row]
            else:
                p, c = fit([r for r in g if r["b"] in fitb], peak_t, t0, floor, row)
                print("# %s %-5s fit objective %.3f" % (prec, ps, c))
            out[(prec, ps)] = p
            held = [r for r in g if r["b"] not in fitb]
            new = figures(held, lambda r: model_us(r, peak_t, t0, floor, p))
            old = figures(held, lambda r: old_us(r, prof))
            print("# %s %-5s held-out batches: per shape median %4.1f%% worst %5.1f%% "
                  "(one share: %4.1f%% / %5.1f%%); sum per batch %s (one share: %s)" % (
                      prec, ps, 100 * new[0], 100 * new[1], 100 * old[0], 100 * old[1],
                      " ".join("b%d %+.1f%%" % (b, 100 * v) for b, v in new[2].items()),
                      " ".join("b%d %+.1f%%" % (b, 100 * v) for b, v in old[2].items())))
            if o.check and (new[0] > o.max_shape_median or
                            max(abs(v) for v in new[2].values()) > o.max_batch_sum):
                print("FAIL: %s %s past the limits" % (prec, ps))
                bad = True
    if o.check:
        return 1 if bad else 0
    vals = {}
    for (prec, ps), p in out.items():
        vals[(prec, ps)] = [round(math.exp(x), 4) if i < NK else round(math.exp(x), 1)
                            if i < 2 * NK else round(math.exp(x), 3) if i == 2 * NK
                            else round(math.exp(x)) for i, x in enumerate(p)]
    for (prec, ps), v in vals.items():
        print("conv_shape.%s.%s = %s" % (prec, ps, " ".join("%g" % x for x in v)))
        if prec == "bf16":
            print("conv_shape.fp16.%s = %s" % (ps, " ".join("%g" % x for x in v)))
    if o.c:
        for prec in [p for p in ("fp32", "tf32", "bf16") if (p, "fwd") in vals]:
            for ps in ("fwd", "dgrad", "wgrad"):
                v = vals[(prec, ps)]
                print("/* %s %s */ { { %s }, { %s }, %g, %g }," % (
                    prec, ps, ", ".join("%g" % x for x in v[:NK]),
                    ", ".join("%g" % x for x in v[NK:2 * NK]), v[2 * NK], v[2 * NK + 1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
