#!/usr/bin/env python3
"""Fit the h200 profile's fused-attention rates per precision and direction, or check them.

usage: fit_attn.py GRADSYNC_BINARY            fit; prints the profile lines
       fit_attn.py GRADSYNC_BINARY --check [--max-median 0.15]

The model (costmodel.c attn_share, cost_op_gpu_s): an attention op takes kernels x floor +
max(t0 + F / (matrix_tflops x share), bytes / HBM), share = attn_eff forward, attn_bwd_eff
backward, times attn_odd_gain / attn_bwd_odd_gain where the sequence is no multiple of 8
(ViT's 197 tokens take another kernel: at the same FLOPs its forward runs faster than
BERT's and GPT-2's, its backward slower). The reference: the profiler's attention kernels
per pass of each case (ref/h200_torch_steps.json, kernels.{fwd,bwd}.by_class.attention);
the model's ops (their FLOPs, bytes and kernels) come from the binary's own `plan --ops`.
Fitted by coordinate descent on the squared log errors of the cases of fit_cases.txt
alone, per precision; tf32 is no precision of its own here: PyTorch runs fp32's attention
kernels for it (its cases' rates equal fp32's in TFLOP/s), so its shares are fp32's scaled
by the matrix rates. Prints the held-out cases' median and worst |error| per direction
beside the binary's own rows; --check fits nothing and fails where the binary's rows miss
the held-out cases' median past the limit (the guard test_costmodel.sh runs).
"""

import argparse
import ast
import json
import math
import os
import statistics
import subprocess
import sys

from check_costmodel import fit_set, profile_row
from descent import descend

HERE = os.path.dirname(os.path.abspath(__file__))
MX = {"fp32": 0, "tf32": 1, "amp_bf16": 2}
FITTED = ("fp32", "amp_bf16")  # tf32 takes fp32's kernels


def cases(binary):
    """Per case with attention kernels: the model's attention ops and the real times (us)."""
    ref = json.load(open(os.path.join(HERE, "ref", "h200_torch_steps.json")))
    fits, out = fit_set(), []
    for c in ref["cases"]:
        if c["precision"] not in MX or not c.get("kernels"):
            continue
        k = c["kernels"]
        k = ast.literal_eval(k) if isinstance(k, str) else k
        real = {p: k[p]["by_class"].get("attention", [0, 0])[1] for p in ("fwd", "bwd")}
        if not real["fwd"] or not real["bwd"]:
            continue
        cmd = [binary, "plan", "--model", c["model"], "--batch", str(c["batch"]),
               "--precision", c["precision"], "--json", "--ops"]
        if c["seq"]:
            cmd += ["--seq-len", str(c["seq"])]
        p = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        ops = [o for o in p["ops"] if o["class"] == "attention"]
        out.append({"key": (c["model"], str(c["batch"]), str(c["seq"]), c["precision"]),
                    "prec": c["precision"], "fit": (c["model"], str(c["batch"]), str(c["seq"]),
                                                     c["precision"]) in fits,
                    "odd": p["seq_len"] % 8 != 0, "ops": ops, "real": real,
                    "binary": {ph: sum(o["gpu_s"] for o in ops if o["phase"] == ph) * 1e6
                               for ph in ("fwd", "bwd")}})
    return out


def model_us(c, phase, q, prof):
    """q: log attn_eff, log attn_bwd_eff, log odd gain forward, log odd gain backward."""
    mx = MX[c["prec"]]
    peak, t0 = prof["matrix_tflops"][mx] * 1e12, prof["matrix_t0_us"][mx]
    bwd = phase == "bwd"
    share = math.exp(q[1] if bwd else q[0])
    if c["odd"]:
        share *= math.exp(q[3] if bwd else q[2])
    wide = 1 if c["prec"] == "amp_bf16" else 0
    mem_eff = prof.get("mem_eff.attention", [0.8, 0.8])[wide]
    t = 0.0
    for o in c["ops"]:
        if o["phase"] != phase:
            continue
        mat = t0 + o["flops"] / (peak * share) * 1e6
        mem = o["bytes"] / (prof["hbm_gbps"][0] * 1e9 * mem_eff) * 1e6
        t += o["kernels"] * prof["floor_us"][0] + max(mat, mem)
    return t


def errors(group, f):
    return {ph: [f(c, ph) / c["real"][ph] - 1 for c in group] for ph in ("fwd", "bwd")}


def summary(e):
    return " ".join("%s median %4.1f%% worst %5.1f%%" % (
        ph, 100 * statistics.median(abs(x) for x in v), 100 * max(abs(x) for x in v))
        for ph, v in e.items())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--max-median", type=float, default=0.15)
    o = ap.parse_args()
    if not os.access(o.binary, os.X_OK):
        print("no binary %s" % o.binary)
        return 77
    prof = profile_row(o.binary)
    data = cases(o.binary)
    bad, rows = False, {}
    for prec in MX:
        fit = [c for c in data if c["prec"] == prec and c["fit"]]
        held = [c for c in data if c["prec"] == prec and not c["fit"]]
        own = errors(held, lambda c, ph: c["binary"][ph])
        print("# %-8s held-out (%d cases), the binary's rows: %s" % (prec, len(held),
                                                                    summary(own)))
        if o.check:
            if max(statistics.median(abs(x) for x in v) for v in own.values()) > o.max_median:
                print("FAIL: %s attention past the limit" % prec)
                bad = True
            continue
        if prec not in FITTED:
            continue

        def cost(q):
            return sum(math.log(model_us(c, ph, q, prof) / c["real"][ph]) ** 2
                       for c in fit for ph in ("fwd", "bwd"))

        mx = MX[prec]
        q = descend(cost, [math.log(prof["attn_eff"][mx])] * 2 + [0.0, 0.0])
        rows[prec] = [math.exp(x) for x in q]
        print("# %-8s fit (%d cases) objective %.3f; held-out: %s" % (
            prec, len(fit), cost(q), summary(errors(held, lambda c, ph: model_us(c, ph, q,
                                                                                  prof)))))
    if o.check:
        return 1 if bad else 0
    f32, b16 = rows["fp32"], rows["amp_bf16"]
    scale = prof["matrix_tflops"][0] / prof["matrix_tflops"][1]  # tf32: fp32's kernels
    for key, i in (("attn_eff", 0), ("attn_bwd_eff", 1), ("attn_odd_gain", 2),
                   ("attn_bwd_odd_gain", 3)):
        s = scale if i < 2 else 1
        print("%s = %.4g %.4g %.4g %.4g" % (key, f32[i], f32[i] * s, b16[i], b16[i]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
