#!/usr/bin/env python3
"""Compare gradsync's DDP bucket plans with the buckets PyTorch DDP really builds.

usage: check_ddp_buckets.py GRADSYNC_BINARY [--models a,b,...] [--device cpu|cuda]
                            [--bucket-cap-mb MB] [--iters N] [--llama-layers N]
                            [--precision fp32|tf32|amp_bf16|amp_fp16|bf16]

Runs torch DistributedDataParallel with 2 ranks (gloo) on CPU (or both ranks on the
one GPU), a few training iterations so the Reducer rebuilds its buckets in
gradient-ready order, then reads _get_ddp_logging_data(): rebuilt_bucket_sizes,
rebuilt_per_bucket_param_indices and prev_iteration_grad_ready_order_indices. Each is
compared with `gradsync plan --model X --json --tensors --precision P`, with plan's own
bucket rules: bucket_cap_mb unset -> no cap flags (plan's defaults: 25 MiB, 1 MiB first,
as dist._DEFAULT_FIRST_BUCKET_BYTES); set -> --bucket-cap C alone, and plan's first-bucket
rule must give what this DDP version used (a first bucket of the same cap on versions
that have bucket_bytes_cap_default; older versions always use 1 MiB, then
--first-bucket-cap 1MiB is passed). --precision amp_bf16 runs forward under
torch.autocast(bfloat16) (on the CPU too), amp_fp16 under torch.autocast(float16) (where
this torch's autocast has float16 on the device: not on the CPU before torch 2.x, where it
is skipped rather than run as fp32), tf32 turns TF32 on: the ready order then follows
autocast's cast nodes; bf16 casts the model and its inputs to bf16, so DDP buckets
bf16 gradients (plan's grad_dtype is left to it: auto, the parameters' dtype).

Memory: fp32 parameters + gradients (gradient_as_bucket_view) per rank, two ranks.
Llama presets are reduced to --llama-layers decoder layers (default 2; same shapes
per layer, full embeddings and head) and compared with gradsync's --num-layers of the
same value; everything else runs at full size (gpt2_xl: ~13 GB per rank).

Prints a table ours vs DDP; exits 1 on any mismatch, 77 if torch (or its distributed
gloo backend) is absent, 0 otherwise.
"""

import argparse
import contextlib
import datetime
import gc
import json
import os
import socket
import sys
import tempfile
import traceback
import warnings

sys.dont_write_bytecode = True  # keep the source tree clean

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from gradsync_plan import ALL_MODELS, run_plan, verdict  # noqa: E402

MIB = 1024 * 1024
DEFAULT_CAP_MB = 25  # DDP's bucket_cap_mb default
AMP_DTYPES = {"amp_bf16": "bfloat16", "amp_fp16": "float16"}  # autocast's dtype per precision


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def autocast_ctx(torch, device, precision):
    """The autocast region precision trains under on device (a null context without one)."""
    if precision not in AMP_DTYPES:
        return contextlib.nullcontext()
    return torch.autocast(device_type="cuda" if device.startswith("cuda") else "cpu",
                          dtype=getattr(torch, AMP_DTYPES[precision]))


def autocast_works(torch, device, precision):
    """Whether this torch's autocast runs in precision's dtype on device: one that lacks it
    warns and runs the region without autocast, which would check fp32's ready order."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with autocast_ctx(torch, device, precision):
                return (torch.is_autocast_enabled() if device.startswith("cuda")
                        else torch.is_autocast_cpu_enabled())
        except (RuntimeError, AttributeError):
            return False


def parse_list(s):
    return [int(x) for x in s.split(",") if x.strip()]


def ddp_caps(ddp, bucket_cap_mb):
    """(cap, first_cap) in bytes the Reducer used when it rebuilt its buckets."""
    import torch.distributed as dist
    cap = int(ddp.bucket_bytes_cap)
    default_first = int(getattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES", MIB))
    if bucket_cap_mb is None:
        return cap, default_first
    if hasattr(ddp, "bucket_bytes_cap_default"):
        return cap, (default_first if ddp.bucket_bytes_cap_default else cap)
    return cap, default_first


def bf16_buckets(torch, model, args, kw, loss_of, iters):
    """A bf16 model's rebuilt buckets without a process group (this torch's gloo broadcasts
    no bf16, so DDP cannot be built over it): the ready order from AccumulateGrad hooks over
    plain steps, then DDP's own assignment, dist._compute_bucket_assignment_by_size, called
    as the Reducer's rebuild calls it: the parameters in ready order, their indices, the
    limits {first bucket, cap} at DDP's defaults."""
    import torch.distributed as dist
    import reference_models as rm
    params = list(model.parameters())
    order, hooks = [], []
    for i, p in enumerate(params):
        hooks += rm.on_grad_ready(p, lambda i=i: order.append(i))
    for _ in range(iters):
        order.clear()
        model.zero_grad(set_to_none=True)
        loss_of(model(*args, **kw)).backward()
    cap = DEFAULT_CAP_MB * MIB
    first = int(getattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES", MIB))
    indices, _ = dist._compute_bucket_assignment_by_size(
        [params[i] for i in order], [first, cap], [False] * len(order), list(order))
    sizes = [sum(params[i].numel() * params[i].element_size() for i in b) for b in indices]
    return dict(cap=cap, first_cap=first, has_rebuilt=1, sizes=sizes,
                indices=[list(b) for b in indices], ready=list(order), hook_ready=list(order))


def one_model(name, opts, rank, device):
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP
    import reference_models as rm

    model, note, extra = rm.build(name, device, llama_layers=opts["llama_layers"])
    names = [n for n, _ in model.named_parameters()]
    if opts["precision"] == "bf16":  # a bf16 model: DDP buckets bf16 gradients
        model = model.to(torch.bfloat16)
        torch.manual_seed(1234 + rank)
        args, kw, loss_of = rm.sample_batch(name, model, device)
        args = tuple(a.to(torch.bfloat16) if a.is_floating_point() else a for a in args)
        res = bf16_buckets(torch, model, args, kw, loss_of, opts["iters"])
        return dict(res, model=name, note=note, extra=extra, names=names)
    kwargs = dict(gradient_as_bucket_view=True)
    if opts["bucket_cap_mb"] is not None:  # older DDP versions do not accept None
        kwargs["bucket_cap_mb"] = opts["bucket_cap_mb"]
    if device.startswith("cuda"):
        kwargs["device_ids"] = [torch.device(device).index or 0]
    ddp = DDP(model, **kwargs)
    torch.manual_seed(1234 + rank)
    args, kw, loss_of = rm.sample_batch(name, model, device)
    hook_order = []
    hooks = []
    for i, p in enumerate(model.parameters()):
        hooks += rm.on_grad_ready(p, lambda i=i: hook_order.append(i))
    if hasattr(torch.backends, "cuda"):
        torch.backends.cuda.matmul.allow_tf32 = opts["precision"] == "tf32"
    torch.backends.cudnn.allow_tf32 = opts["precision"] == "tf32"
    for _ in range(opts["iters"]):
        hook_order.clear()
        with autocast_ctx(torch, device, opts["precision"]):
            loss = loss_of(ddp(*args, **kw))
        loss.backward()
    # The logger records rebuilt buckets in forward 2 and the previous backward's ready
    # order in each later forward: with 3 iterations, the order of backward 2.
    data = ddp._get_ddp_logging_data()
    cap, first = ddp_caps(ddp, opts["bucket_cap_mb"])
    for h in hooks:
        if hasattr(h, "remove"):
            h.remove()
    result = dict(model=name, note=note, extra=extra, cap=cap, first_cap=first, names=names,
                  has_rebuilt=int(data.get("has_rebuilt_buckets", 0)),
                  sizes=parse_list(data.get("rebuilt_bucket_sizes", "")),
                  indices=[[int(i) for i in grp.split()]
                           for grp in data.get("rebuilt_per_bucket_param_indices", "").split(",")
                           if grp.strip()],
                  ready=parse_list(data.get("prev_iteration_grad_ready_order_indices", "")),
                  hook_ready=list(hook_order))
    del ddp, model, args, kw
    gc.collect()
    return result


def worker(rank, opts, port, outfile):
    import torch
    import torch.distributed as dist
    import reference_models as rm

    torch.set_num_threads(max(1, (os.cpu_count() or 2) // 2))
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=2, timeout=datetime.timedelta(minutes=30))
    device = "cuda:0" if opts["device"] == "cuda" else "cpu"
    results = []
    for name in opts["models"]:
        try:
            res = one_model(name, opts, rank, device)
        except rm.SkipModel as e:
            res = dict(model=name, skip=str(e))
        except Exception as e:  # report and go on with the next model
            res = dict(model=name, error="%s: %s" % (type(e).__name__, e),
                       trace=traceback.format_exc())
        results.append(res)
        dist.barrier()
    if rank == 0:
        with open(outfile, "w") as f:
            json.dump(results, f)
    dist.destroy_process_group()


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def compare(gradsync, res, opts):
    """Returns (row, problems) for one model's DDP result."""
    caps = []
    if opts["bucket_cap_mb"] is not None:
        caps = ["--bucket-cap", str(res["cap"])]
        if res["first_cap"] != res["cap"]:  # an older DDP: always 1 MiB first
            caps += ["--first-bucket-cap", str(res["first_cap"])]
    # grad_dtype left to plan (auto: the parameters' dtype, bf16 for a bf16 model)
    plan = run_plan(gradsync, res["model"], res["extra"] + caps + [
        "--precision", opts["precision"]])
    problems = []
    if plan["bucket_cap"] != res["cap"] or plan["first_bucket_cap"] != res["first_cap"]:
        problems.append("caps differ: ours %d/%d, DDP %d/%d" % (
            plan["bucket_cap"], plan["first_bucket_cap"], res["cap"], res["first_cap"]))
    ours_sizes = [b["bytes"] for b in plan["buckets"]]
    ours_idx = [b["tensors"] for b in plan["buckets"]]
    ours_ready = plan["ready_order"]
    names = res["names"]
    if not res["has_rebuilt"] or not res["sizes"]:
        problems.append("DDP did not report rebuilt buckets")
    if ours_sizes != res["sizes"]:
        i = first_diff(ours_sizes, res["sizes"])
        problems.append("bucket sizes differ from bucket %s: ours %s, DDP %s" % (
            i, ours_sizes[i:i + 3], res["sizes"][i:i + 3]))
    if ours_idx != res["indices"]:
        i = first_diff(ours_idx, res["indices"])
        problems.append("bucket %s members differ: ours %s, DDP %s" % (
            i, ours_idx[i][:6] if i < len(ours_idx) else "-",
            res["indices"][i][:6] if i < len(res["indices"]) else "-"))
    theirs_ready = res["ready"] or res["hook_ready"]
    if theirs_ready and ours_ready != theirs_ready:
        i = first_diff(ours_ready, theirs_ready)
        ctx = lambda order: [names[j] for j in order[i:i + 3]]  # noqa: E731
        problems.append("ready order differs at %s: ours %s, autograd %s" % (
            i, ctx(ours_ready), ctx(theirs_ready)))
    row = (res["model"], len(ours_sizes), len(res["sizes"]),
           "ok" if ours_sizes == res["sizes"] else "DIFF",
           "ok" if ours_idx == res["indices"] else "DIFF",
           "ok" if not theirs_ready or ours_ready == theirs_ready else "DIFF",
           res["note"])
    return row, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gradsync")
    ap.add_argument("--models", default=",".join(ALL_MODELS))
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--bucket-cap-mb", type=float, default=None,
                    help="DDP bucket_cap_mb (default: unset, DDP's 25 MiB + 1 MiB first)")
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--llama-layers", type=int, default=2)
    ap.add_argument("--precision", default="fp32",
                    choices=["fp32", "tf32", "amp_bf16", "amp_fp16", "bf16"])
    args = ap.parse_args()
    if args.precision == "bf16" and args.bucket_cap_mb is not None:
        print("check_ddp_buckets.py: --precision bf16 takes DDP's default caps "
              "(no process group: bf16_buckets), not --bucket-cap-mb")
        return 2
    try:
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp
    except ImportError as e:
        print("SKIP: torch is not importable (%s)" % e)
        return 77
    if not dist.is_available() or not dist.is_gloo_available():
        print("SKIP: torch.distributed with the gloo backend is not available")
        return 77
    if args.device == "cuda" and not torch.cuda.is_available():
        print("SKIP: --device cuda but no CUDA device")
        return 77
    if args.precision in AMP_DTYPES and not autocast_works(torch, args.device, args.precision):
        print("SKIP: torch %s's autocast on %s has no %s (it would run the model in fp32)"
              % (torch.__version__, args.device, AMP_DTYPES[args.precision]))
        return 77
    print("torch %s, 2 ranks, gloo, %s, %s" % (torch.__version__, args.device, args.precision))
    opts = dict(models=[m for m in args.models.split(",") if m], device=args.device,
                bucket_cap_mb=args.bucket_cap_mb, iters=max(3, args.iters),
                llama_layers=args.llama_layers, precision=args.precision)
    fd, outfile = tempfile.mkstemp(prefix="gradsync_ddp_", suffix=".json")
    os.close(fd)
    try:
        mp.spawn(worker, args=(opts, free_port(), outfile), nprocs=2, join=True)
        with open(outfile) as f:
            results = json.load(f)
    finally:
        os.unlink(outfile)

    rows, failed = [], []
    for res in results:
        if "skip" in res:
            print("SKIP %s: %s" % (res["model"], res["skip"]))
            continue
        if "error" in res:
            print("ERROR %s: %s\n%s" % (res["model"], res["error"], res.get("trace", "")))
            failed.append(res["model"])
            continue
        row, problems = compare(args.gradsync, res, opts)
        rows.append(row)
        for p in problems:
            print("  %s: %s" % (res["model"], p))
        if problems:
            failed.append(res["model"])
    print("%-12s %8s %8s  %-6s %-7s %-6s %s" % ("model", "ours", "DDP", "sizes", "members",
                                                "ready", "note"))
    for r in rows:
        print("%-12s %8d %8d  %-6s %-7s %-6s %s" % r)
    return verdict(rows, failed, "all %d checked models match DDP")


if __name__ == "__main__":
    sys.exit(main())
