#!/usr/bin/env python3
"""Measure real PyTorch eager training steps: the reference the cost model is checked against.

usage: measure_torch_step.py --out FILE.json [--device cuda|cpu] [--cases SPEC]
                             [--precisions fp32,amp_bf16,tf32] [--iters N] [--warmup N]
                             [--budget-s S] [--quick] [--micro FILE.json]

For every case (model, batch, seq) x precision it times, on one GPU with CUDA events:
  fwd_ms      forward + loss (median of --iters steps),
  step_ms     forward + loss + backward (same steps; zero_grad(set_to_none) before each),
  ready_ms    per parameter, when its gradient was accumulated, relative to the start of
              backward (post-accumulate-grad hooks recording an event; separate steps, so the
              hooks do not disturb fwd_ms / step_ms),
  kernels     from one profiled step: kernel count and GPU-busy time, forward and backward
              apart, and the busy time per kernel class (gemm, conv, norm, softmax/attention,
              elementwise, reduce, copy/cast, embedding, other),
  ready_gpu_ms per parameter, hook-free, from the same profiled step: when the GPU had
              finished every kernel launched before its AccumulateGrad ran (bwd_gpu_ms: that
              step's backward on the GPU). Python hooks stretch a host-bound backward by tens
              of microseconds per parameter; the profiler by a few per kernel.
Precisions: fp32 = no TF32 anywhere (cuBLAS and cuDNN), tf32 = TF32 on for both, amp_bf16 =
autocast(bfloat16) over fp32 parameters with TF32 off (what DDP reduces stays fp32).
Models are the references of reference_models.py (torchvision / transformers, random weights,
no downloads), built with each library's default dropout (BERT/GPT-2 0.1, ViT 0).
With --micro it also times library kernels by shape (matmul per precision, conv, and the
memory-bound classes over sizes) with the profiler: the data the h200 profile was fitted on.
--budget-s stops starting new cases after S seconds; results are written after every case.
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import reference_models as rm  # noqa: E402

# (model, batch, seq or 0). seq is the token count for transformers; images are 224.
DEFAULT_CASES = [
    ("resnet18", 32, 0), ("resnet18", 128, 0), ("resnet18", 256, 0),
    ("resnet50", 32, 0), ("resnet50", 64, 0), ("resnet50", 128, 0), ("resnet50", 256, 0),
    ("vit_b_16", 32, 0), ("vit_b_16", 64, 0), ("vit_b_16", 128, 0),
    ("vit_l_16", 16, 0), ("vit_l_16", 32, 0), ("vit_l_16", 64, 0),
    ("bert_base", 16, 128), ("bert_base", 32, 128), ("bert_base", 64, 128), ("bert_base", 8, 512),
    ("bert_large", 8, 128), ("bert_large", 32, 128), ("bert_large", 8, 512),
    ("bert_large", 16, 512),
    ("gpt2", 4, 1024), ("gpt2", 8, 1024), ("gpt2", 16, 512), ("gpt2", 8, 256),
    ("gpt2_medium", 2, 1024), ("gpt2_medium", 4, 1024), ("gpt2_medium", 8, 1024),
]
# TF32 is measured at one shape per model (it sits between fp32 and bf16).
TF32_CASES = {("resnet50", 128, 0), ("resnet18", 128, 0), ("vit_b_16", 64, 0),
              ("vit_l_16", 32, 0), ("bert_base", 32, 128), ("bert_large", 8, 512),
              ("gpt2", 8, 1024), ("gpt2_medium", 4, 1024)}
QUICK_CASES = [("resnet18", 2, 0), ("vit_b_16", 2, 0), ("bert_base", 2, 32), ("gpt2", 2, 32)]


def parse_cases(spec):
    out = []
    for item in spec.split(","):
        f = item.strip().split(":")
        if not f[0]:
            continue
        out.append((f[0], int(f[1]) if len(f) > 1 else 8, int(f[2]) if len(f) > 2 else 0))
    return out


class Clock:
    """CUDA events on a GPU, perf_counter on the CPU: mark() now, ms(a, b) later."""

    def __init__(self, torch, device):
        self.torch, self.cuda = torch, device.startswith("cuda")

    def mark(self):
        if self.cuda:
            e = self.torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def ms(self, a, b):
        return a.elapsed_time(b) if self.cuda else (b - a) * 1e3

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()


def set_precision(torch, precision):
    tf32 = precision == "tf32"
    if hasattr(torch.backends, "cuda"):
        torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def autocast(torch, device, precision):
    import contextlib
    if precision != "amp_bf16":
        return contextlib.nullcontext()
    return torch.autocast(device_type="cuda" if device.startswith("cuda") else "cpu",
                          dtype=torch.bfloat16)


def add_ready_hooks(torch, model, clock, sink):
    """Call sink(name, mark) when each parameter's gradient has been accumulated."""
    handles = []
    for name, p in model.named_parameters():
        def hook(*_, n=name):
            sink(n, clock.mark())
        if hasattr(p, "register_post_accumulate_grad_hook"):
            handles.append(p.register_post_accumulate_grad_hook(hook))
        else:  # torch < 2.1: the AccumulateGrad node's own hook (DDP's old way)
            acc = p.expand_as(p).grad_fn.next_functions[0][0]
            handles.append(acc.register_hook(hook))
            handles.append(acc)  # keep the node alive
    return handles


KERNEL_CLASSES = [
    # (class, substrings of the lower-cased kernel name), first match wins
    ("attention", ("flash", "fmha", "attention", "_attn", "mem_eff", "cutlassf")),
    ("conv", ("conv", "implicit", "wgrad", "dgrad", "cudnn", "xmma_fprop", "sm90_xmma",
              "winograd", "fft", "precomputed")),
    ("gemm", ("gemm", "sgemm", "hgemm", "cublas", "cutlass", "nvjet", "sm90_", "sm80_",
              "ampere_", "hopper_", "splitk", "dot_kernel", "gemv")),
    ("norm", ("batch_norm", "batchnorm", "bn_", "layer_norm", "layernorm", "welford",
              "rms", "norm")),
    ("softmax", ("softmax",)),
    ("embedding", ("embedding", "index_select", "indexselect", "gather", "scatter",
                   "index_put", "indexing")),
    ("reduce", ("reduce", "sum", "mean", "nll", "cross_entropy", "max_pool", "avg_pool",
                "adaptive")),
    ("copy", ("copy", "cast", "convert", "to_copy", "memcpy", "memset", "fill", "cat")),
    ("elementwise", ("elementwise", "vectorized", "unrolled", "gelu", "relu", "add",
                     "mul", "dropout", "threshold", "tanh", "where")),
]


def kernel_class(name):
    low = name.lower()
    for cls, keys in KERNEL_CLASSES:
        if any(k in low for k in keys):
            return cls
    return "other"


def profile_step(torch, step, device):
    """One profiled step: kernel count and busy time of forward and backward apart.

    The split is on the GPU timeline: a spin kernel (torch.cuda._sleep) is launched between
    forward and backward, and every kernel after it on the stream is backward's.
    """
    from torch.profiler import ProfilerActivity, profile
    out = {"fwd": {"count": 0, "busy_us": 0.0, "by_class": {}},
           "bwd": {"count": 0, "busy_us": 0.0, "by_class": {}}, "names": {}}
    if not device.startswith("cuda"):
        return out
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step(split=lambda: torch.cuda._sleep(100))
        torch.cuda.synchronize()
    kern = [e for e in prof.events() if str(getattr(e, "device_type", "")).endswith("CUDA")]
    kern.sort(key=lambda k: k.time_range.start)
    ph = "fwd"
    for k in kern:
        if "spin_kernel" in k.name:
            ph = "bwd"
            continue
        d = k.time_range.end - k.time_range.start
        o = out[ph]
        o["count"] += 1
        o["busy_us"] += d
        c = o["by_class"].setdefault(kernel_class(k.name), [0, 0.0])
        c[0] += 1
        c[1] += d
        n = out["names"].setdefault("%s|%s" % (ph, k.name[:100]), [0, 0.0])
        n[0] += 1
        n[1] += d
    for p in ("fwd", "bwd"):
        out[p]["busy_us"] = round(out[p]["busy_us"], 1)
        for c in out[p]["by_class"].values():
            c[1] = round(c[1], 1)
    out["names"] = {k: [v[0], round(v[1], 1)] for k, v in
                    sorted(out["names"].items(), key=lambda kv: -kv[1][1])[:80]}
    try:
        out["ready_gpu_us"] = gpu_ready_times(prof)
    except Exception as e:  # an older or newer profiler API: hooks' times only
        out["ready_gpu_us"] = None
        out["ready_gpu_error"] = str(e)[:200]
    return out


def _ns(e, what):
    f = getattr(e, what + "_ns", None)
    return f() if f else getattr(e, what + "_us")() * 1000


def gpu_ready_times(prof):
    """When each gradient was ready on the GPU, hook-free, from the profiled step.

    Each AccumulateGrad the autograd engine ran (in the order it ran them) is ready when the
    GPU has finished every kernel the host had launched before it: on one stream, the
    latest end among the GPU activities whose launch call started earlier. Times are in us
    since the end of the spin kernel between forward and backward; the last entry is the
    end of the backward pass on the GPU.
    """
    ev = list(prof.profiler.kineto_results.events())
    gpu, launch, acc = {}, [], []
    spin_end = None
    for e in ev:
        dt = str(e.device_type())
        name = e.name()
        if dt.endswith("CUDA"):
            end = _ns(e, "start") + _ns(e, "duration")
            if "spin_kernel" in name:
                spin_end = end
            gpu[e.correlation_id()] = end
        elif name.startswith(("cudaLaunch", "cuLaunch", "cudaMemsetAsync", "cudaMemcpyAsync")):
            launch.append((_ns(e, "start"), e.correlation_id()))
        elif name == "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad":
            acc.append(_ns(e, "start"))
    if spin_end is None or not acc:
        raise RuntimeError("no spin kernel or no AccumulateGrad in the trace")
    launch.sort()
    acc.sort()
    out, j, latest = [], 0, spin_end
    for t in acc:
        while j < len(launch) and launch[j][0] < t:
            end = gpu.get(launch[j][1])
            if end is not None and end > latest:
                latest = end
            j += 1
        out.append(round((latest - spin_end) / 1e3, 2))
    last = max(gpu.values())
    out.append(round((last - spin_end) / 1e3, 2))
    return out


_LAST = {}  # the model of the previous case, reused while the name stays the same


def run_case(torch, name, batch, seq, precisions, opts, clock):
    device = opts.device
    if _LAST.get("name") != name:
        _LAST.clear()
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
        torch.manual_seed(0)
        _LAST.update(name=name, built=rm.build(name, device, dropout=True))
    model, note, _ = _LAST["built"]
    n_params = sum(p.numel() for p in model.parameters())
    args, kwargs, loss_fn = rm.sample_batch(name, model, device, batch=batch, seq=seq or 16)
    attn = getattr(getattr(model, "config", None), "_attn_implementation", None)
    results = []
    for prec in precisions:
        set_precision(torch, prec)

        def step(split=None):
            model.zero_grad(set_to_none=True)
            m0 = clock.mark()
            with autocast(torch, device, prec):
                out = model(*args, **kwargs)
                loss = loss_fn(out)
            m1 = clock.mark()
            if split:
                split()
            loss.backward()
            m2 = clock.mark()
            return m0, m1, m2

        for _ in range(opts.warmup):
            step()
        clock.sync()
        fwd, tot = [], []
        walls = []
        for _ in range(opts.iters):
            w0 = time.perf_counter()
            m0, m1, m2 = step()
            clock.sync()
            walls.append((time.perf_counter() - w0) * 1e3)
            fwd.append(clock.ms(m0, m1))
            tot.append(clock.ms(m0, m2))
        # gradient-ready times: hooks on, separate steps
        ready_runs, order = [], None
        for it in range(max(3, opts.iters // 4)):
            seen = []
            hs = add_ready_hooks(torch, model, clock, lambda n, m: seen.append((n, m)))
            m0, m1, m2 = step()
            clock.sync()
            for h in hs:
                if hasattr(h, "remove"):
                    h.remove()
            ready_runs.append({n: clock.ms(m1, m) for n, m in seen})
            if order is None:
                order = [n for n, _ in seen]
        ready = {n: round(statistics.median(r[n] for r in ready_runs), 4) for n in order}
        prof = profile_step(torch, step, device) if not opts.no_profile else None
        r = {"model": name, "batch": batch, "seq": seq, "precision": prec,
             "params": n_params, "attn_implementation": attn, "note": note,
             "fwd_ms": round(statistics.median(fwd), 4),
             "step_ms": round(statistics.median(tot), 4),
             "bwd_ms": round(statistics.median(t - f for t, f in zip(tot, fwd)), 4),
             "step_ms_min": round(min(tot), 4), "step_ms_max": round(max(tot), 4),
             "wall_ms": round(statistics.median(walls), 4),
             "iters": opts.iters, "ready_order": order, "ready_ms": ready,
             "kernels": prof}
        rg = prof.get("ready_gpu_us") if prof else None
        if rg and len(rg) == len(order) + 1:
            # AccumulateGrad runs in the hooks' order: the k-th is order[k]'s
            r["ready_gpu_ms"] = {n: round(t / 1e3, 4) for n, t in zip(order, rg)}
            r["bwd_gpu_ms"] = round(rg[-1] / 1e3, 4)
        results.append(r)
        print("%-12s b%-4d s%-5d %-9s fwd %8.2f ms  fwd+bwd %8.2f ms  (%s..%s)" %
              (name, batch, seq, prec, r["fwd_ms"], r["step_ms"], r["step_ms_min"],
               r["step_ms_max"]), flush=True)
    del args, kwargs, loss_fn
    return results


def env_info(torch, device):
    info = {"torch": torch.__version__, "device": device, "python": sys.version.split()[0]}
    if device.startswith("cuda"):
        p = torch.cuda.get_device_properties(0)
        info.update(gpu=p.name, sm_count=p.multi_processor_count,
                    mem_gib=round(p.total_memory / 2**30, 1), cuda=torch.version.cuda,
                    cudnn=torch.backends.cudnn.version())
    try:
        import transformers
        info["transformers"] = transformers.__version__
    except ImportError:
        pass
    try:
        import torchvision
        info["torchvision"] = torchvision.__version__
    except ImportError:
        pass
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--cases", default=None, help="model:batch[:seq],... (default: the table)")
    ap.add_argument("--precisions", default="fp32,amp_bf16,tf32")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--budget-s", type=float, default=1e9)
    ap.add_argument("--quick", action="store_true", help="tiny CPU cases to test the script")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--micro", default=None, help="also write library kernel timings here")
    ap.add_argument("--micro-budget-s", type=float, default=1e9)
    opts = ap.parse_args()

    import torch
    torch.manual_seed(0)
    clock = Clock(torch, opts.device)
    cases = QUICK_CASES if opts.quick else (parse_cases(opts.cases) if opts.cases
                                            else DEFAULT_CASES)
    precs = [p for p in opts.precisions.split(",") if p]
    doc = {"env": env_info(torch, opts.device), "cases": [], "skipped": []}
    t0 = time.time()
    for name, batch, seq in cases:
        if time.time() - t0 > opts.budget_s:
            doc["skipped"].append("%s:%d:%d (budget)" % (name, batch, seq))
            continue
        ps = [p for p in precs if p != "tf32" or opts.quick or (name, batch, seq) in TF32_CASES]
        try:
            doc["cases"].extend(run_case(torch, name, batch, seq, ps, opts, clock))
        except rm.SkipModel as e:
            doc["skipped"].append("%s: %s" % (name, e))
            print("skip %s: %s" % (name, e), flush=True)
        except Exception as e:  # out of memory and the like: say so, go on
            doc["skipped"].append("%s:%d:%d: %s" % (name, batch, seq, str(e)[:200]))
            print("fail %s b%d s%d: %s" % (name, batch, seq, str(e)[:200]), flush=True)
            if opts.device.startswith("cuda"):
                torch.cuda.empty_cache()
        with open(opts.out + ".tmp", "w") as f:
            json.dump(doc, f, indent=0)
        os.replace(opts.out + ".tmp", opts.out)
    print("wrote %s: %d results in %.0f s" % (opts.out, len(doc["cases"]), time.time() - t0))
    if opts.micro:
        import micro_kernels
        micro_kernels.run(torch, opts.device, opts.micro, quick=opts.quick,
                          budget_s=opts.micro_budget_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
