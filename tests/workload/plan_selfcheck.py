#!/usr/bin/env python3
"""Self-check of `gradsync plan` without torch (run by test_plan.sh).

For every model: the JSON parses, counts equal the published references, every tensor
appears once in the ready order and in exactly one bucket, and the buckets equal an
independent Python copy of DDP's compute_bucket_assignment_by_size over the plan's own
ready order, for several caps and gradient dtypes. Then the modelled step of every model
under every precision and GPU profile, at two batches: times finite and positive, bucket
ready times in bucket order and inside backward, the ready swing within backward's start-up,
and the larger batch no faster. Exit 0 pass, 1 fail.
"""

import math
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gradsync_plan import ALL_MODELS, plan_buckets, plan_json, reference_buckets_of_plan, run_plan  # noqa

EXPECT = {
    "resnet18": (11689512, 62), "resnet34": (21797672, 110), "resnet50": (25557032, 161),
    "resnet101": (44549160, 314), "resnet152": (60192808, 467),
    "vit_b_16": (86567656, 152), "vit_l_16": (304326632, 296), "vit_h_14": (632045800, 392),
    "bert_base": (110106428, 206), "bert_large": (336226108, 398),
    "gpt2": (124439808, 148), "gpt2_medium": (354823168, 292),
    "gpt2_large": (774030080, 436), "gpt2_xl": (1557611200, 580),
    "llama2_7b": (6738415616, 291), "llama3_8b": (8030261248, 291),
}
CONFIGS = [
    ["--bucket-cap", "25MiB"],
    ["--bucket-cap", "25MiB", "--first-bucket-cap", "1MiB"],
    ["--bucket-cap", "1MiB", "--grad-dtype", "bf16"],
    ["--bucket-cap", "100MiB", "--first-bucket-cap", "4MiB", "--grad-dtype", "f16"],
    ["--bucket-cap", "1KiB"],
]

# the built-in GPU profiles ([gpu] profile takes a FILE too, so no list of them is printed;
# config_test holds the key's help to the profile table)
PROFILES = ["h200", "h100", "a100", "b200"]
BATCHES = ["1", "8"]


def precisions(binary):
    """[workload] precision's values, as `gradsync keys workload` lists them."""
    out = subprocess.run([binary, "keys", "workload"], stdout=subprocess.PIPE, check=True)
    line = next(l for l in out.stdout.decode().splitlines() if l.split()[:1] == ["precision"])
    return line.split(" allowed ", 1)[1].split(" (")[0].split(", ")


def table_models(binary):
    """The model table's presets (`plan --list --json`), without trace and custom."""
    return [m["name"] for m in plan_json([binary, "plan", "--list", "--json"])
            if m["family"] not in ("trace", "custom")]


def step_problems(binary, model, precs):
    """What is wrong with the modelled step of model, every precision and profile (a list)."""
    problems = []
    for prec in precs:
        for prof in PROFILES:
            last = None
            for batch in BATCHES:
                where = "%s b%s %s %s" % (model, batch, prec, prof)
                p = run_plan(binary, model, ["--precision", prec, "--gpu-profile", prof,
                                             "--batch", batch])
                t = [p[k] for k in ("fwd_s", "bwd_s", "host_fwd_s", "gpu_fwd_s")]
                if not all(math.isfinite(x) and x > 0 for x in t):
                    problems.append("%s: times %s" % (where, t))
                    continue
                ready = [b["ready_s"] for b in p["buckets"]]
                if any(b < a for a, b in zip(ready, ready[1:])) or ready[0] <= 0 \
                        or ready[-1] > p["bwd_s"] * (1 + 1e-9):
                    problems.append("%s: bucket ready times %s outside backward %g"
                                    % (where, ready, p["bwd_s"]))
                if not 0 <= p["ready_swing_s"] <= p["bwd_start_s"] + 1e-12:
                    problems.append("%s: ready swing %g, start-up %g"
                                    % (where, p["ready_swing_s"], p["bwd_start_s"]))
                step = p["fwd_s"] + p["bwd_s"]
                if last is not None and step < last:
                    problems.append("%s: step %g s, faster than the smaller batch's %g"
                                    % (where, step, last))
                last = step
    return problems


def main():
    binary = sys.argv[1]
    bad = 0
    assert sorted(EXPECT) == sorted(ALL_MODELS)
    # a preset added to the model table needs its published counts here
    assert sorted(table_models(binary)) == sorted(ALL_MODELS), \
        "model table %s, references %s" % (table_models(binary), ALL_MODELS)
    precs = precisions(binary)
    assert "fp32" in precs and "amp_bf16" in precs, precs
    for model in ALL_MODELS:
        was = bad
        for cfg in CONFIGS:
            plan = run_plan(binary, model, cfg)
            n = plan["num_tensors"]
            problems = []
            if (plan["num_params"], n) != EXPECT[model]:
                problems.append("counts %s != %s" % ((plan["num_params"], n), EXPECT[model]))
            if sorted(plan["ready_order"]) != list(range(n)):
                problems.append("ready_order is not a permutation")
            members = sorted(i for b in plan["buckets"] for i in b["tensors"])
            if members != list(range(n)):
                problems.append("buckets do not cover every tensor once")
            if plan_buckets(plan) != [(i, b, lim) for i, b, lim in
                                      reference_buckets_of_plan(plan)]:
                problems.append("buckets differ from the DDP reference algorithm")
            if sum(b["bytes"] for b in plan["buckets"]) != plan["grad_bytes"]:
                problems.append("bucket bytes do not add up")
            for p in problems:
                print("FAIL %s %s: %s" % (model, " ".join(cfg), p))
            bad += bool(problems)
        problems = step_problems(binary, model, precs)
        for p in problems:
            print("FAIL %s" % p)
        bad += bool(problems)
        if bad == was:
            print("ok   %-12s %14d params %4d tensors" % (model, plan["num_params"], n))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
