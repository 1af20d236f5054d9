#!/usr/bin/env python3
"""Fit the h200 profile's fused-attention rates per precision and direction, or check them.

usage: fit_attn.py GRADSYNC_BINARY            fit; prints the profile lines
       fit_attn.py GRADSYNC_BINARY --check [--max-median 0.15]

The model (costmodel.h attn_tiles_s, costmodel.c attn_tiles_gpu_s): an attention op takes
kernels x floor + max(its tiles' time, bytes / HBM). Its batch x heads rows of work split
the sequence into tiles of 128 queries (backward: keys), one per SM at a time; a tile walks
its blocks of 128 keys (all, or under a causal mask those before it) at
block_s = 4 x 128^2 x head_dim FLOPs (backward 2.5x) / (matrix_tflops x share / sm_count)
each, after tile_us of its own; each tile goes to the SM that frees first (a causal op's
in the grid's order, row after row, a row's longest first) and the op lasts as long as the
busiest SM. share = attn_eff forward, attn_bwd_eff backward, times
attn_odd_gain / attn_bwd_odd_gain where the sequence is no multiple of 8 (ViT's 197 tokens
take another kernel), and on an even sequence times (head_dim / 64)^attn_width_exp
(attn_bwd_width_exp): wider heads run at a higher share. The reference: the profiler's
attention kernels per pass of each case (ref/h200_torch_steps.json,
kernels.{fwd,bwd}.by_class.attention); the model's ops (their FLOPs, bytes, kernels and
tiles) come from the binary's own `plan --ops`. Fitted by
coordinate descent on the squared log errors of the cases of fit_cases.txt alone, per
precision and direction, from the profile's row and from a flat point (the lower objective);
tf32 is no precision of its own here: PyTorch runs fp32's attention kernels for it (its
cases' rates equal fp32's in TFLOP/s), so its shares are fp32's scaled by the matrix rates,
its tile times fp32's. Prints the held-out cases' median and worst |error| per direction
beside the binary's own rows; --check fits nothing and fails where the binary's rows miss
the held-out cases' median past the limit (the guard test_costmodel.sh runs).
"""

import argparse
import ast
import heapq
import math
import os
import statistics
import sys

from check_costmodel import fit_set, profile_row
from descent import descend
from gradsync_plan import load_json, plan_case

HERE = os.path.dirname(os.path.abspath(__file__))
MX = {"fp32": 0, "tf32": 1, "amp_bf16": 2}
FITTED = ("fp32", "amp_bf16")  # tf32 takes fp32's kernels


def cases(binary):
    """Per case with attention kernels: the model's attention ops and the real times (us)."""
    ref = load_json(os.path.join(HERE, "ref", "h200_torch_steps.json"))
    fits, out = fit_set(), []
    for c in ref["cases"]:
        if c["precision"] not in MX or not c.get("kernels"):
            continue
        k = c["kernels"]
        k = ast.literal_eval(k) if isinstance(k, str) else k
        real = {p: k[p]["by_class"].get("attention", [0, 0])[1] for p in ("fwd", "bwd")}
        if not real["fwd"] or not real["bwd"]:
            continue
        p = plan_case(binary, c, ["--ops"])
        ops = [o for o in p["ops"] if o["class"] == "attention"]
        out.append({"key": (c["model"], str(c["batch"]), str(c["seq"]), c["precision"]),
                    "prec": c["precision"], "fit": (c["model"], str(c["batch"]), str(c["seq"]),
                                                     c["precision"]) in fits,
                    "odd": p["seq_len"] % 8 != 0, "ops": ops, "real": real,
                    "binary": {ph: sum(o["gpu_s"] for o in ops if o["phase"] == ph) * 1e6
                               for ph in ("fwd", "bwd")}})
    return out


TILE = 128  # costmodel.h ATTN_TILE
GRID_TILES = 65536  # costmodel.h ATTN_GRID_TILES
WIDTH_REF = 64  # costmodel.h ATTN_WIDTH_REF


def tiles_s(bh, seq, causal, sms, tile_s, block_s):
    """costmodel.c attn_tiles_s: the busiest SM; causal rows in the grid's order, each row's
    tiles longest first, each tile to the SM that frees first (up to GRID_TILES tiles),
    else the longest tiles first over the whole op."""
    n = -(-seq // TILE)
    if causal and bh * n <= GRID_TILES:
        load = [0.0] * sms
        for _ in range(bh):
            for ln in range(n, 0, -1):
                heapq.heapreplace(load, load[0] + tile_s + ln * block_s)
        return max(load)
    load = [0.0] * sms
    for ln in range(n, 0 if causal else n - 1, -1):
        count = bh if causal else bh * n
        t = tile_s + ln * block_s
        rounds, rest = divmod(count, sms)
        load = [x + rounds * t for x in load]
        for i in range(rest):
            load[i] += t
        if rest:
            load.sort()
    return max(load)


def model_us(c, phase, q, prof):
    """q, per direction: log share, log tile microseconds, log odd gain, and the head
    width's exponent (costmodel.c attn_share: the share times (d / 64)^exponent)."""
    mx = MX[c["prec"]]
    peak, sms = prof["matrix_tflops"][mx] * 1e12, int(prof["sm_count"][0])
    base = math.exp(q[0]) * (math.exp(q[2]) if c["odd"] else 1.0)
    wexp = q[3] if len(q) > 3 else 0.0
    tile = math.exp(q[1]) * 1e-6
    wide = 1 if c["prec"] == "amp_bf16" else 0
    mem_eff = prof.get("mem_eff.attention", [0.8, 0.8])[wide]
    t = 0.0
    for o in c["ops"]:
        if o["phase"] != phase:
            continue
        pairs = o["attn_bh"] * o["seq"] ** 2 * (0.5 if o["causal"] else 1.0)
        share = base * (o["head_dim"] / WIDTH_REF) ** wexp \
            if o.get("head_dim") and not c["odd"] else base
        block = o["flops"] / pairs * TILE * TILE / (peak * share / sms)
        mat = tiles_s(o["attn_bh"], o["seq"], o["causal"], sms, tile, block) * 1e6
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

        mx = MX[prec]
        rows[prec] = {}
        for ph, eff, tile, odd, wx in (
                ("fwd", "attn_eff", "attn_tile_us", "attn_odd_gain", "attn_width_exp"),
                ("bwd", "attn_bwd_eff", "attn_bwd_tile_us", "attn_bwd_odd_gain",
                 "attn_bwd_width_exp")):
            def cost(q, ph=ph):
                return sum(math.log(model_us(c, ph, q, prof) / c["real"][ph]) ** 2
                           for c in fit)

            # from the profile's row and from a flat point (a tile of 2 us, no odd gain):
            # the lower objective (a tile time the descent drove to 0 is a valley's edge)
            share, odd_gain = math.log(prof[eff][mx]), math.log(prof[odd][mx] or 1.0)
            q = min((descend(cost, start) for start in (
                [share, math.log(max(prof[tile][mx], 0.5)), odd_gain, prof[wx][mx]],
                [share, math.log(2.0), 0.0, prof[wx][mx]])), key=cost)
            rows[prec][ph] = [math.exp(x) for x in q[:3]] + [q[3]]
            e = [model_us(c, ph, q, prof) / c["real"][ph] - 1 for c in held]
            print("# %-8s %s fit (%d cases) objective %.3f; held-out median %4.1f%% worst %5.1f%%"
                  % (prec, ph, len(fit), cost(q),
                     100 * statistics.median(abs(x) for x in e), 100 * max(abs(x) for x in e)))
    if o.check:
        return 1 if bad else 0
    f32, b16 = rows["fp32"], rows["amp_bf16"]
    scale = prof["matrix_tflops"][0] / prof["matrix_tflops"][1]  # tf32: fp32's kernels
    for key, ph, i in (("attn_eff", "fwd", 0), ("attn_bwd_eff", "bwd", 0),
                       ("attn_tile_us", "fwd", 1), ("attn_bwd_tile_us", "bwd", 1),
                       ("attn_odd_gain", "fwd", 2), ("attn_bwd_odd_gain", "bwd", 2),
                       ("attn_width_exp", "fwd", 3), ("attn_bwd_width_exp", "bwd", 3)):
        s = scale if i == 0 else 1
        print("%s = %.4g %.4g %.4g %.4g" % (key, f32[ph][i], f32[ph][i] * s, b16[ph][i],
                                            b16[ph][i]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
