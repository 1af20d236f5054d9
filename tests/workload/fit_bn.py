#!/usr/bin/env python3
"""Fit the h200 profile's BatchNorm constants per precision and pass, or check them.

usage: fit_bn.py GRADSYNC_BINARY            fit; prints the profile lines
       fit_bn.py GRADSYNC_BINARY --check [--max-median 0.08] [--max-worst 0.25]
       fit_bn.py GRADSYNC_BINARY --half RUN.json   bn_half_gain from one card's steps

The model (costmodel.c bn_s): kernels x floor + C x ns + bytes / (HBM x share x C / (C +
half)), per pass (forward: statistics and normalise, 2 e bytes an element; backward: 3 e)
with its own share, half and ns. Two sources, weighted alike: the micro run's eight shapes
per precision and pass (ref/h200_torch_micro.json: batchnorm_fwd / _bwd, 64-2048 channels,
batch 32-256) and, for each ResNet case of fit_cases.txt with a trace, the sum of its
BatchNorm kernels (cuDNN's bn_fw_tr / bn_bw for fp32, PyTorch's batch_norm_* under autocast)
against the sum of the model's BatchNorm ops (plan --ops, the layer names give the
channels). Coordinate descent on the squared log errors. Every other ResNet case with a
trace is held out: the fit prints its median and worst |log error| beside the binary's
own rows; --check fits nothing and fails where the binary's rows miss the held-out traces
past the limits (the guard test_costmodel.sh runs).
--half: cuDNN's BatchNorm over fp16 elements (fp16 autocast) against its fp32 kernels, from a
run with both precisions at the same ResNet shapes on one card (run_on_device.sh READY=15):
per shape and pass the ratio of the two BatchNorm kernel sums, and the share gain per pass
(bn_half_gain) that gives the model's amp_fp16 / fp32 ratio of its BatchNorm ops the least
squared log error; prints the line and each shape's error.
"""

import argparse
import math
import os
import statistics
import subprocess
import sys

from check_costmodel import fit_set, profile_row
from descent import descend
from fit_profile import read_profile, write_profile
from gradsync_plan import case_args, load_json, plan_case

HERE = os.path.dirname(os.path.abspath(__file__))
WIDTH = {"layer1": 64, "layer2": 128, "layer3": 256, "layer4": 512}
PRECS = (("fp32", "fp32", 4), ("bf16", "amp_bf16", 2))  # micro's name, the step's, bytes


def channels(model, layer):
    """A torchvision ResNet BatchNorm's channels from its name."""
    parts = layer.split(".")
    if parts == ["bn1"]:
        return 64
    width = WIDTH[parts[0]]
    wide = model != "resnet18" and (parts[-1] == "bn3" or parts[-2] == "downsample")
    return 4 * width if wide else width


def bn_ops(binary, c):
    """[(forward bytes, channels)] of the model's BatchNorm layers for case c."""
    out = subprocess.run([binary, "plan"] + case_args(c) + ["--ops"], check=True,
                         capture_output=True, text=True).stdout
    ops = []
    for line in out.splitlines():
        f = line.split()
        if len(f) > 8 and f[0] == "fwd" and f[3] == "batchnorm":
            ops.append((float(f[-3]) * 1e6, channels(c["model"], f[1])))
    return ops


def is_bn(kernel):
    return "bn_fw" in kernel or "bn_bw" in kernel or "batch_norm" in kernel


def op_us(fwd_bytes, ch, e, bwd, p, hbm, floor):
    share, half, ns = p
    kernels = 1 if bwd else (2 if e == 4 else 3)  # layers.c ly_batchnorm
    b = fwd_bytes * 1.5 if bwd else fwd_bytes
    return kernels * floor + ch * ns * 1e-3 + b / (hbm * 1e3 * share * ch / (ch + half))


def bn_kernel_us(c):
    """A measured case's BatchNorm kernels, forward and backward (us, the profiler's sums)."""
    names = (c.get("kernels") or {}).get("names") or {}
    return [sum(v[1] for k, v in names.items() if k.startswith(ph + "|") and is_bn(k))
            for ph in ("fwd", "bwd")]


def cases(binary, fits):
    ref = load_json(os.path.join(HERE, "ref", "h200_torch_steps.json"))
    out = []
    for c in ref["cases"]:
        names = (c.get("kernels") or {}).get("names") or {}
        if not c["model"].startswith("resnet") or not names:
            continue
        real = bn_kernel_us(c)
        key = (c["model"], str(c["batch"]), str(c["seq"]), c["precision"])
        out.append({"key": key, "prec": c["precision"], "fit": key in fits,
                    "ops": bn_ops(binary, c), "real": real})
    return out


def step_err(c, e, bwd, p, hbm, floor):
    t = sum(op_us(b, ch, e, bwd, p, hbm, floor) for b, ch in c["ops"])
    return math.log(t / c["real"][bwd])


def micro_err(r, e, bwd, p, hbm, floor):
    n, ch, h, w = r["shape"]
    return math.log(op_us(2 * e * n * ch * h * w, ch, e, bwd, p, hbm, floor) / r["gpu_us"])


def fit(micro, steps, e, bwd, hbm, floor):
    """(share, half, ns) by coordinate descent on log share, log half, ns."""
    w = len(micro) / max(1, len(steps))

    def cost(q):
        if q[2] < 0:
            return float("inf")
        p = (math.exp(q[0]), math.exp(q[1]), q[2])
        return sum(micro_err(r, e, bwd, p, hbm, floor) ** 2 for r in micro) + \
            w * sum(step_err(c, e, bwd, p, hbm, floor) ** 2 for c in steps)

    q = descend(cost, [math.log(0.5), math.log(200.0), 5.0], scale=lambda i: 10 if i == 2 else 1)
    return (math.exp(q[0]), math.exp(q[1]), q[2])


def rows(prof, w):
    """The binary's (share, half, ns) for width w (0 fp32, 1 16-bit), forward and backward."""
    fwd = (prof["mem_eff.batchnorm"][w], prof["bn_channels_half"][w], prof["bn_channel_ns"][w])
    bwd = (prof["bn_bwd_share"][w] or fwd[0], prof["bn_bwd_channels_half"][w] or fwd[1],
           prof["bn_bwd_channel_ns"][w])
    return fwd, bwd


def held_figures(held, e, bwd, p, hbm, floor):
    errs = [abs(step_err(c, e, bwd, p, hbm, floor)) for c in held]
    return statistics.median(errs), max(errs)


def model_bn_s(binary, c, precision, profile):
    """The model's BatchNorm GPU seconds (forward, backward) for case c at precision."""
    j = plan_case(binary, dict(c, precision=precision), ["--gpu-profile", profile, "--ops"])
    return [sum(o["gpu_s"] for o in j["ops"] if o["class"] == "batchnorm" and o["phase"] == ph)
            for ph in ("fwd", "bwd")]


def fit_half(binary, run):
    """bn_half_gain (forward, backward) from a run's amp_fp16 and fp32 ResNet steps."""
    import tempfile
    by = {}
    for c in load_json(run)["cases"]:
        if c["model"].startswith("resnet") and (c.get("kernels") or {}).get("names"):
            by.setdefault((c["model"], c["batch"], c["seq"]), {})[c["precision"]] = c
    pairs = [v for v in by.values() if "amp_fp16" in v and "fp32" in v]
    real = [[a / b for a, b in zip(bn_kernel_us(v["amp_fp16"]), bn_kernel_us(v["fp32"]))]
            for v in pairs]
    f32 = [model_bn_s(binary, v["fp32"], "fp32", "h200") for v in pairs]
    prof = read_profile(subprocess.run([binary, "gpu", "--profile", "h200", "--write", "-"],
                                       check=True, capture_output=True, text=True).stdout)
    fd, path = tempfile.mkstemp(suffix=".profile")
    os.close(fd)

    def errs(ph, gain):
        prof["bn_half_gain"] = [gain, gain]
        write_profile(prof, path)
        return [math.log(model_bn_s(binary, v["amp_fp16"], "amp_fp16", path)[ph] / m[ph] / r[ph])
                for v, m, r in zip(pairs, f32, real)]

    best = []
    for ph in (0, 1):
        q = descend(lambda q: sum(e * e for e in errs(ph, math.exp(q[0]))), [0.0], stop=0.01)
        best.append(round(math.exp(q[0]), 2))
        print("# %s: measured amp_fp16 / fp32 BatchNorm %s; gain %.2f, log errors %s" % (
            ("forward", "backward")[ph], " ".join("%.2f" % r[ph] for r in real), best[ph],
            " ".join("%+.3f" % e for e in errs(ph, best[ph]))))
    os.unlink(path)
    print("bn_half_gain = %g %g" % tuple(best))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--check", action="store_true", help="hold the binary's rows, fit nothing")
    ap.add_argument("--half", default=None, help="a run's amp_fp16 and fp32 steps: bn_half_gain")
    ap.add_argument("--max-median", type=float, default=0.08)
    ap.add_argument("--max-worst", type=float, default=0.25)
    o = ap.parse_args()
    if not os.access(o.binary, os.X_OK):
        print("no binary %s" % o.binary)
        return 77
    if o.half:
        return fit_half(o.binary, o.half)
    prof = profile_row(o.binary)
    hbm, floor = prof["hbm_gbps"][0], prof["floor_us"][0]
    micro = load_json(os.path.join(HERE, "ref", "h200_torch_micro.json"))
    allc = cases(o.binary, fit_set())
    bad = 0
    for w, (mname, sname, e) in enumerate(PRECS):
        for bwd in (0, 1):
            op = "batchnorm_bwd" if bwd else "batchnorm_fwd"
            mic = [r for r in micro if r["op"] == op and r["prec"] == mname]
            fits = [c for c in allc if c["prec"] == sname and c["fit"]]
            held = [c for c in allc if c["prec"] == sname and not c["fit"]]
            own = rows(prof, w)[bwd]
            om, ow = held_figures(held, e, bwd, own, hbm, floor)
            line = "# %-4s %-3s binary's (%.3g, %.4g, %.3g ns): held-out %d traces median " \
                   "%.3f worst %.3f" % (mname, "bwd" if bwd else "fwd", own[0], own[1], own[2],
                                        len(held), om, ow)
            if o.check:
                print(line)
                if om > o.max_median or ow > o.max_worst:
                    print("FAIL: BatchNorm %s %s past the limits" % (mname, op))
                    bad = 1
                continue
            p = fit(mic, fits, e, bwd, hbm, floor)
            nm, nw = held_figures(held, e, bwd, p, hbm, floor)
            print(line)
            print("# %-4s %-3s fitted (%.3g, %.4g, %.3g ns): held-out median %.3f worst %.3f; "
                  "fit cases %s" % (mname, "bwd" if bwd else "fwd", p[0], p[1], p[2], nm, nw,
                                    " ".join("%.2f" % math.exp(step_err(c, e, bwd, p, hbm, floor))
                                             for c in fits)))
    return bad


if __name__ == "__main__":
    sys.exit(main())
