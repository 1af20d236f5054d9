"""Helpers shared by the workload verification scripts.

- read a committed reference, gzipped or not (the raw runs under ref/runs/ are gzipped);
- run gradsync's plan verb and parse its JSON;
- the model table the scripts check (names as gradsync knows them);
- a pure-Python copy of PyTorch DDP's compute_bucket_assignment_by_size, as the
  Reducer calls it when it rebuilds buckets (tensors in gradient-ready order, limits
  [first_bucket_bytes_cap, bucket_bytes_cap]).
"""

import gzip
import json
import subprocess

DTYPE_SIZE = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8}


def load_json(path):
    """A JSON file as measure_torch_step.py, micro_kernels.py or measure_host.py wrote it, or
    gzipped (ref/runs/*.json.gz: the raw runs are kept compressed so that the tree stays small
    enough to travel to the device with the binary)."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


VISION = ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
          "vit_b_16", "vit_l_16", "vit_h_14"]
HF = ["bert_base", "bert_large", "gpt2", "gpt2_medium", "gpt2_large", "gpt2_xl",
      "llama2_7b", "llama3_8b"]
ALL_MODELS = VISION + HF


def split_model(name):
    """(gradsync model, decoder layers or None): a reference case names a Llama reduced to
    N decoder layers NAME@N (same shapes per layer, memory a GPU holds), gradsync's
    `--num-layers N` of the same preset."""
    base, _, layers = name.partition("@")
    return base, (int(layers) if layers else None)


def case_args(c):
    """plan's arguments for a reference case (dict with model, batch, seq, precision)."""
    base, layers = split_model(c["model"])
    args = ["--model", base, "--batch", str(c["batch"]), "--precision", c["precision"]]
    if layers:
        args += ["--num-layers", str(layers)]
    if c.get("seq"):
        args += ["--seq-len", str(c["seq"])]
    return args


def plan_json(cmd):
    """Run a `gradsync plan ... --json` command line -> its dict; a failure raises with
    plan's own error line."""
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if res.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), res.returncode,
                                                res.stderr.decode(errors="replace").strip()))
    return json.loads(res.stdout)


def run_plan(binary, model, extra=()):
    """gradsync plan --model MODEL --json --tensors [extra...] -> dict."""
    return plan_json([binary, "plan", "--model", model, "--json", "--tensors"] + list(extra))


def plan_case(binary, c, extra=()):
    """gradsync plan for a reference case (case_args) --json [extra...] -> dict."""
    return plan_json([binary, "plan"] + case_args(c) + ["--json"] + list(extra))


def verdict(rows, failed, ok_line):
    """The checks' ending as an exit status: 1 and the failed models, 77 (skip) when no
    model could be checked, else 0 and ok_line (its %d: the models checked)."""
    if failed:
        print("FAIL: %s" % " ".join(failed))
        return 1
    if not rows:
        print("SKIP: no model could be checked")
        return 77
    print(ok_line % len(rows))
    return 0


def ddp_buckets(sizes_in_ready_order, indices_in_ready_order, limits, dtypes=None):
    """Buckets as DDP's compute_bucket_assignment_by_size builds them.

    sizes_in_ready_order: bytes of each gradient, in gradient-ready order.
    indices_in_ready_order: the parameter index of each of them.
    limits: [first_cap, cap] (or [cap]); each dtype walks its own iterator over it.
    Returns a list of (indices, bytes, size_limit) in DDP's bucket order.
    """
    dtypes = dtypes or ["grad"] * len(sizes_in_ready_order)
    result = []
    open_buckets = {}   # dtype -> [indices, bytes, size_limit]
    limit_pos = {}
    order = []
    for size, idx, dt in zip(sizes_in_ready_order, indices_in_ready_order, dtypes):
        if dt not in open_buckets:
            open_buckets[dt] = [[], 0, 0]
            limit_pos[dt] = 0
            order.append(dt)
        b = open_buckets[dt]
        b[0].append(idx)
        b[1] += size
        b[2] = limits[limit_pos[dt]]
        if b[1] >= b[2]:
            result.append((b[0], b[1], b[2]))
            open_buckets[dt] = [[], 0, b[2]]
            if limit_pos[dt] + 1 < len(limits):
                limit_pos[dt] += 1
    for dt in order:
        b = open_buckets[dt]
        if b[0]:
            result.append((b[0], b[1], b[2]))
    return result


def plan_buckets(plan):
    """(indices, bytes, size_limit) per bucket of a gradsync plan JSON."""
    return [(b["tensors"], b["bytes"], b["size_limit"]) for b in plan["buckets"]]


def reference_buckets_of_plan(plan):
    """Recompute a plan's buckets with ddp_buckets() from its own ready order."""
    esize = DTYPE_SIZE[plan["grad_dtype"]]
    numel = [t["numel"] for t in plan["tensors"]]
    ready = plan["ready_order"]
    cap, first = plan["bucket_cap"], plan["first_bucket_cap"]
    limits = [first, cap] if first else [cap]
    return ddp_buckets([numel[i] * esize for i in ready], ready, limits)
