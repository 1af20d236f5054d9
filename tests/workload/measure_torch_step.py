#!/usr/bin/env python3
"""Measure real PyTorch eager training steps: the reference the cost model is checked against.

usage: measure_torch_step.py --out FILE.json [--device cuda|cpu] [--cases SPEC]
                             [--precisions fp32,amp_bf16,tf32] [--trials N] [--iters N]
                             [--warmup N] [--case-time-s S] [--pin CORE] [--budget-s S]
                             [--quick] [--micro FILE.json] [--light-steps N]
                             [--gradsync BIN [--bucket-steps N]] [--diag CASES]

Method (the host-bound steps are what it is built for: their Python dispatch and kernel
launches set the pace, so the host's own noise is the figure's noise). Every case is built
first (each model once, all kept on the GPU); then --trials rounds run every case in turn,
--iters steps each (fewer for slow cases: at most --case-time-s timed seconds per case over
all trials), after --warmup steps in the first round and 3 in later ones; each trial's median
is kept and the case's figure is the median of its trials, so a slow spell of the host (a
neighbour, a clock change) moves one trial, not the figure. --pin puts the process and every
thread torch starts on one core (no migrations); the CPU's model and clock, the core and the
GPU's SM clock after each trial are recorded. For every case:
  fwd_ms      forward + loss (CUDA events),
  step_ms     forward + loss + backward (same steps; zero_grad(set_to_none) before each),
  host_fwd_ms, host_bwd_ms  the host's own time to issue forward and backward (perf_counter
              around the calls, no sync inside: the host timeline the cost model plays),
  trials      per trial [fwd, step, host fwd, host bwd] medians and the host's pace before
              it (host_probe_us: us per tiny eager op),
  ready_ms    per parameter, when its gradient was accumulated, relative to the start of
              backward (post-accumulate-grad hooks recording an event: when the GPU had done
              what was launched before the hook; separate steps, so the hooks do not disturb
              fwd_ms / step_ms); ready_host_ms the same hooks' host time,
  kernels     from one profiled step: kernel count and GPU-busy time, forward and backward
              apart, and the busy time per kernel class (gemm, conv, norm, softmax/attention,
              elementwise, reduce, copy/cast, embedding, other); kernels.host: the host side
              of the same step (host_counts: top-level ATen ops, autocast casts, launches,
              autograd nodes, GPU idle time per pass, ops by name with their CPU time),
  ready_gpu_ms per parameter, hook-free, from the same profiled step: when the GPU had
              finished every kernel launched before its AccumulateGrad ran (bwd_gpu_ms: that
              step's backward on the GPU). Python hooks stretch a host-bound backward by tens
              of microseconds per parameter; the profiler by a few per kernel.
  light_trials, light_ready (--light-steps N): per trial, N steps traced with the GPU's
              activities alone, ready times replayed from the full trace's counts (light_ready)
  bucket_trials (--gradsync BIN): per trial [probe, hooked backward, {name: ready ms}] from
              --bucket-steps steps with one cheap hook per bucket (its last parameter)
  diag        (--diag CASES): forward's and backward's kernels by the ATen op that launched them
Precisions: fp32 = no TF32 anywhere (cuBLAS and cuDNN), tf32 = TF32 on for both, amp_bf16 =
autocast(bfloat16) over fp32 parameters with TF32 off (what DDP reduces stays fp32),
amp_fp16 = autocast(float16) the same, its loss scaled as GradScaler.scale does before
backward (one multiply by the scale on the device, 2^16, inside fwd_ms), bf16 = a bf16 copy of
the model and bf16 inputs, no autocast (gradients bf16).
Models are the references of reference_models.py (torchvision / transformers, random weights,
no downloads), built with each library's default dropout (BERT/GPT-2 0.1, ViT 0).
With --micro it also times library kernels by shape (matmul per precision, conv, and the
memory-bound classes over sizes) with the profiler: the data the h200 profile was fitted on.
--budget-s stops starting new trials after S seconds (a case keeps the trials it has);
results are written after every case.
"""

import argparse
import contextlib
import gc
import json
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import reference_models as rm  # noqa: E402
from gradsync_plan import case_args  # noqa: E402
from record_op_trace import Clock  # noqa: E402

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
    """model:batch[:seq[:precision]],... (a precision given runs that one alone)."""
    out = []
    for item in spec.split(","):
        f = item.strip().split(":")
        if not f[0]:
            continue
        out.append((f[0], int(f[1]) if len(f) > 1 else 8, int(f[2]) if len(f) > 2 else 0,
                    f[3] if len(f) > 3 else None))
    return out


def set_precision(torch, precision):
    tf32 = precision == "tf32"
    if hasattr(torch.backends, "cuda"):
        torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


AMP_DTYPE = {"amp_bf16": "bfloat16", "amp_fp16": "float16"}


def autocast(torch, device, precision):
    import contextlib
    if precision not in AMP_DTYPE:
        return contextlib.nullcontext()
    return torch.autocast(device_type="cuda" if device.startswith("cuda") else "cpu",
                          dtype=getattr(torch, AMP_DTYPE[precision]))


def precision_model(torch, models, name, prec):
    """The model a precision trains: the fp32 one (autocast casts on the fly), or for bf16 a
    bf16 copy of it, made once (the fp32 one stays for the other precisions)."""
    import copy
    if prec != "bf16" or not models.get(name):
        return models.get(name)
    key = (name, prec)
    if key not in models:
        model, note, extra = models[name]
        models[key] = (copy.deepcopy(model).to(torch.bfloat16), note, extra)
    return models[key]


def add_ready_hooks(torch, model, clock, sink):
    """Call sink(name, mark) when each parameter's gradient has been accumulated."""
    handles = []
    for name, p in model.named_parameters():
        handles += rm.on_grad_ready(p, lambda n=name: sink(n, clock.mark()))
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
    from torch.profiler import record_function
    cuda = device.startswith("cuda")
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=acts) as prof:
        step(split=(lambda: torch.cuda._sleep(100)) if cuda else None, marks=record_function)
        if cuda:
            torch.cuda.synchronize()
    # kernels only: kineto puts the gs:: annotations on the GPU's timeline too
    kern = [e for e in prof.events() if _on_gpu(e) and not e.name.startswith("gs::")]
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
        out["host"] = host_counts(prof)
    except Exception as e:
        out["host_error"] = str(e)[:200]
    try:
        out["ready_gpu_us"], out["ready_k"], out["bwd_acts"] = gpu_ready_times(prof)
    except Exception as e:  # an older or newer profiler API: hooks' times only
        out["ready_gpu_us"] = None
        out["ready_gpu_error"] = str(e)[:200]
    return out


LAUNCHES = ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernelEx",
            "cudaMemsetAsync", "cudaMemcpyAsync")


def _on_gpu(e):
    return str(getattr(e, "device_type", "")).endswith("CUDA")


def host_counts(prof):
    """What the host did in each pass of the profiled step (the cost model's host timeline).

    fwd: top-level ATen ops (dispatcher calls from Python, not counting the ops they call),
    the casts autocast inserted (aten::_to_copy anywhere inside them), kernel launches;
    bwd: autograd nodes the engine ran, launches. Per pass the profiled host span, the GPU's
    span and busy time (span - busy: the GPU idle, waiting for the host), and the top-level
    ops / nodes by name with their count and inclusive CPU time (the profiler adds a few us
    per op: shares, not absolute times).
    """
    evs = prof.events()
    rng = {}
    for e in evs:
        # the host's range: kineto also records each annotation on the GPU's timeline
        if e.name in ("gs::forward", "gs::backward") and not _on_gpu(e):
            rng["fwd" if e.name == "gs::forward" else "bwd"] = (e.time_range.start,
                                                                e.time_range.end)
    out = {}
    kern = [e for e in evs if _on_gpu(e) and not e.name.startswith("gs::")]
    for ph, (a, b) in rng.items():
        o = {"host_span_us": round(b - a, 1), "ops": 0, "casts": 0, "launches": 0,
             "nodes": 0, "by_name": {}}
        for e in evs:
            st = e.time_range.start
            if not (a <= st < b) or _on_gpu(e):
                continue
            n = e.name
            if n in LAUNCHES:
                o["launches"] += 1
                continue
            if ph == "bwd" and n.startswith("autograd::engine::evaluate_function: "):
                o["nodes"] += 1
                key = n.split(": ", 1)[1]
            elif ph == "fwd" and n.startswith("aten::"):
                if n == "aten::_to_copy":
                    o["casts"] += 1
                par, top = e.cpu_parent, True
                while par is not None:
                    if par.name.startswith("aten::"):
                        top = False
                        break
                    par = par.cpu_parent
                if not top:
                    continue
                o["ops"] += 1
                key = n
            else:
                continue
            x = o["by_name"].setdefault(key, [0, 0.0])
            x[0] += 1
            x[1] += e.time_range.end - st
        o["by_name"] = {k: [v[0], round(v[1], 1)] for k, v in
                        sorted(o["by_name"].items(), key=lambda kv: -kv[1][1])[:40]}
        out[ph] = o
    # GPU span of each pass: from its first kernel's start to its last kernel's end
    kern.sort(key=lambda k: k.time_range.start)
    ph, spans = "fwd", {"fwd": [None, None, 0.0], "bwd": [None, None, 0.0]}
    for k in kern:
        if "spin_kernel" in k.name:
            ph = "bwd"
            continue
        sp = spans[ph]
        sp[0] = k.time_range.start if sp[0] is None else sp[0]
        sp[1] = k.time_range.end
        sp[2] += k.time_range.end - k.time_range.start
    for p, (a, b, busy) in spans.items():
        if p in out and a is not None:
            out[p]["gpu_span_us"] = round(b - a, 1)
            out[p]["gpu_idle_us"] = round(b - a - busy, 1)
    return out


def _ns(e, what):
    f = getattr(e, what + "_ns", None)
    return f() if f else getattr(e, what + "_us")() * 1000


def gpu_ready_times(prof):
    """When each gradient was ready on the GPU, hook-free, from the profiled step.

    Each AccumulateGrad the autograd engine ran (in the order it ran them) is ready when the
    GPU has finished every kernel the host had launched before it ended (what DDP's
    reducer, firing from that node, makes its AllReduce wait for on the stream): on one
    stream, the latest end among the GPU activities whose launch call started earlier.
    Returns (times, ks, nbwd): times in us since the end of the spin kernel between forward
    and backward, the last entry the end of the backward pass on the GPU; ks[i]: how many
    of backward's GPU activities (in start order) the i-th AccumulateGrad waits for;
    nbwd: backward's GPU activities. ks replays on a lighter trace (light_steps: the GPU's
    activities alone, the host barely slowed) as the end of the ks[i]-th activity.
    """
    ev = list(prof.profiler.kineto_results.events())
    gpu, launch, acc = {}, [], []
    spin_end = spin_start = None
    starts = {}
    for e in ev:
        dt = str(e.device_type())
        name = e.name()
        if dt.endswith("CUDA"):
            if name.startswith("gs::"):
                continue  # an annotation's GPU range, not a kernel
            st = _ns(e, "start")
            end = st + _ns(e, "duration")
            if "spin_kernel" in name:
                if spin_end is None:
                    spin_start, spin_end = st, end
                continue
            gpu[e.correlation_id()] = end
            starts[e.correlation_id()] = st
        elif name.startswith(("cudaLaunch", "cuLaunch", "cudaMemsetAsync", "cudaMemcpyAsync")):
            launch.append((_ns(e, "start"), e.correlation_id()))
        elif name == "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad":
            acc.append(_ns(e, "start") + _ns(e, "duration"))
    if spin_end is None or not acc:
        raise RuntimeError("no spin kernel or no AccumulateGrad in the trace")
    bwd = sorted((st, c) for c, st in starts.items() if st >= spin_start)
    ordinal = {c: i + 1 for i, (_, c) in enumerate(bwd)}
    launch.sort()
    acc.sort()
    out, ks, j, latest, k = [], [], 0, spin_end, 0
    for t in acc:
        while j < len(launch) and launch[j][0] < t:
            c = launch[j][1]
            end = gpu.get(c)
            if end is not None and end > latest:
                latest = end
            k = max(k, ordinal.get(c, 0))
            j += 1
        out.append(round((latest - spin_end) / 1e3, 2))
        ks.append(k)
    last = max(gpu.values())
    out.append(round((last - spin_end) / 1e3, 2))
    return out, ks, len(bwd)


def light_steps(torch, step, steps):
    """`steps` steps under the profiler with the GPU's activities alone (no host ops
    recorded: the host runs at nearly its own pace, unlike a full trace, which doubles a
    host-bound backward). Spin kernels mark each pass: forward, spin, backward, spin.
    Returns per step: forward's GPU span and busy time (ms, first kernel to last),
    backward's start-up (ms from the spin's end to backward's first kernel) and the ends
    of backward's activities (ms since the spin's end, in start order)."""
    from torch.profiler import ProfilerActivity, profile
    spin = lambda: torch.cuda._sleep(100)  # noqa: E731
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step(split=spin, end=spin)
        torch.cuda.synchronize()
    acts = []
    for e in prof.profiler.kineto_results.events():
        if not str(e.device_type()).endswith("CUDA") or e.name().startswith("gs::"):
            continue
        st = _ns(e, "start")
        acts.append((st, st + _ns(e, "duration"), "spin_kernel" in e.name()))
    acts.sort()
    out, fwd, cur = [], [], None
    for st, en, is_spin in acts:
        if is_spin:
            if cur is None:
                busy = sum(b - a for a, b, _ in fwd)
                cur = {"fwd_span_ms": round((fwd[-1][1] - fwd[0][0]) / 1e6, 4) if fwd else 0,
                       "fwd_busy_ms": round(busy / 1e6, 4), "spin_end": en, "ends": [],
                       "fwd_idle_tenths": fwd_idle_tenths(fwd)}
            else:
                out.append(cur)
                cur, fwd = None, []
            continue
        if cur is None:
            fwd.append((st, en, 0))
        else:
            if not cur["ends"]:
                cur["bwd_start_ms"] = round((st - cur["spin_end"]) / 1e6, 4)
            cur["ends"].append((en - cur["spin_end"]) / 1e6)
    return out


def fwd_idle_tenths(fwd):
    """Where in forward the GPU waits for the host: the GPU's idle time (ms) before the
    kernels of each tenth of forward's kernels (in start order)."""
    idle, end = [0.0] * 10, None
    for i, (st, en, _) in enumerate(fwd):
        if end is not None:
            idle[i * 10 // len(fwd)] += max(0.0, st - end) / 1e6
        end = max(en, end or en)
    return [round(x, 4) for x in idle]


DIAG_GROUPS = 400  # ResNet's every convolution shape and pass fits


def diag_profile(torch, step):
    """Where each kernel of one step comes from (--diag): one profiled step with shapes,
    every GPU activity tied to the ATen op that launched it (the innermost op open on the
    launching thread, and the outermost: the call from Python). Grouped by (pass, outer
    op, inner op, inner op's input shapes, kernel): count, busy us, and GPU idle before
    them (us: the GPU waiting, for the host or a sync). Returns the DIAG_GROUPS groups with the
    most busy plus idle time."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 record_shapes=True) as prof:
        step(split=lambda: torch.cuda._sleep(100))
        torch.cuda.synchronize()
    ev = list(prof.profiler.kineto_results.events())
    by_thread, gpu = {}, []
    for e in ev:
        name = e.name()
        st = _ns(e, "start")
        if str(e.device_type()).endswith("CUDA"):
            if not name.startswith("gs::"):
                gpu.append((st, st + _ns(e, "duration"), e.correlation_id(), name))
            continue
        by_thread.setdefault(e.start_thread_id(), []).append(
            (st, st + _ns(e, "duration"), name, e))
    who = {}
    for evs in by_thread.values():
        evs.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for st, en, name, e in evs:
            while stack and stack[-1][1] <= st:
                stack.pop()
            if name.startswith(LAUNCHES):
                ops = [x for x in stack if x[2].startswith(("aten::", "autograd::"))]
                if ops:
                    inner = ops[-1]
                    try:
                        shp = str(inner[3].shapes())[:80]
                    except Exception:
                        shp = "?"
                    who[e.correlation_id()] = (ops[0][2][:60], inner[2][:60], shp)
                continue
            stack.append((st, en, name, e))
    gpu.sort()
    groups, ph, prev = {}, "fwd", None
    for st, en, corr, name in gpu:
        if "spin_kernel" in name:
            ph, prev = "bwd", en
            continue
        outer, inner, shp = who.get(corr, ("?", "?", "?"))
        g = groups.setdefault((ph, outer, inner, shp, name[:70]), [0, 0.0, 0.0])
        g[0] += 1
        g[1] += (en - st) / 1e3
        g[2] += max(0.0, st - prev) / 1e3 if prev is not None else 0.0
        prev = en
    rows = sorted(groups.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))[:DIAG_GROUPS]
    return [list(k) + [v[0], round(v[1], 1), round(v[2], 1)] for k, v in rows]


class Case:
    """One (model, batch, seq, precision) case: its inputs and one training step."""

    def __init__(self, torch, name, batch, seq, prec, built, device):
        self.torch, self.name, self.batch, self.seq, self.prec = torch, name, batch, seq, prec
        self.model, self.note, _ = built
        self.device = device
        self.args, self.kwargs, self.loss_fn = rm.sample_batch(name, self.model, device,
                                                                batch=batch, seq=seq or 16)
        if prec == "bf16":  # the images too (token ids stay integers)
            self.args = tuple(a.to(torch.bfloat16) if a.is_floating_point() else a
                              for a in self.args)
        # GradScaler.scale(loss): the loss times the scale, a tensor on the device
        self.loss_scale = torch.full((), 65536.0, device=device) if prec == "amp_fp16" else None
        self.trials = []      # per trial: medians of fwd, step, host fwd, host bwd (ms)
        self.fwd, self.tot, self.hfwd, self.hbwd, self.walls = [], [], [], [], []
        self.gpu_mhz = []
        self.light = []       # per trial: (probe, light_steps' steps)
        self.bucket_last = None  # the parameters bucket_steps hooks (bucket_last_params)
        self.bucket = []      # per trial: [probe, hooked backward ms, {name: ready ms}]

    def step(self, clock, split=None, marks=None, end=None):
        """One step; returns (m0, m1, m2) device marks and (t0, t1, t2) host times.
        split() runs between forward and backward, end() after backward (spin kernels
        that mark the passes on the GPU's timeline)."""
        torch, model = self.torch, self.model
        set_precision(torch, self.prec)
        model.zero_grad(set_to_none=True)
        rf = marks or (lambda _: contextlib.nullcontext())
        t0 = time.perf_counter()
        m0 = clock.mark()
        with rf("gs::forward"), autocast(torch, self.device, self.prec):
            out = model(*self.args, **self.kwargs)
            loss = self.loss_fn(out)
        if self.loss_scale is not None:
            loss = loss * self.loss_scale
        t1 = time.perf_counter()
        m1 = clock.mark()
        if split:
            split()
        with rf("gs::backward"):
            loss.backward()
        t2 = time.perf_counter()
        m2 = clock.mark()
        if end:
            end()
        return (m0, m1, m2), (t0, t1, t2)

    def trial(self, clock, iters, warmup, light=0, bucket_steps=0):
        for _ in range(warmup):
            self.step(clock)
        clock.sync()
        gc.collect()
        probe = host_probe_us(self.torch, self.device)
        f, s, hf, hb = [], [], [], []
        for _ in range(iters):
            (m0, m1, m2), (t0, t1, t2) = self.step(clock)
            clock.sync()
            self.walls.append((time.perf_counter() - t0) * 1e3)
            f.append(clock.ms(m0, m1))
            s.append(clock.ms(m0, m2))
            hf.append((t1 - t0) * 1e3)
            hb.append((t2 - t1) * 1e3)
        self.fwd += f
        self.tot += s
        self.hfwd += hf
        self.hbwd += hb
        self.trials.append([round(statistics.median(x), 4) for x in (f, s, hf, hb)] + [probe])
        if bucket_steps and self.bucket_last:
            self.bucket.append([probe] + bucket_ready(self, clock, self.bucket_last,
                                                      bucket_steps))
        if light and self.device.startswith("cuda"):
            try:
                self.light.append((probe, light_steps(self.torch,
                                                      lambda **kw: self.step(clock, **kw),
                                                      light)))
            except Exception as e:  # a profiler that cannot: the hooks' figures only
                self.light_error = str(e)[:200]
        mhz = gpu_clock_mhz(self.torch)
        if mhz:
            self.gpu_mhz.append(mhz)

    def result(self, clock, opts):
        torch, model = self.torch, self.model
        # gradient-ready times: hooks on, separate steps. ready_ms: CUDA events recorded in
        # the hook (when the GPU had done what was launched before it, or the hook ran,
        # whichever is later: what DDP's bucket copy waits for); ready_host_ms: the hook's
        # own host time since loss.backward() was called.
        ready_runs, host_runs, order = [], [], None
        for _ in range(max(3, opts.iters // 4)):
            seen = []
            hs = add_ready_hooks(torch, model, clock,
                                 lambda n, m: seen.append((n, m, time.perf_counter())))
            (m0, m1, m2), (t0, t1, t2) = self.step(clock)
            clock.sync()
            for h in hs:
                if hasattr(h, "remove"):
                    h.remove()
            ready_runs.append({n: clock.ms(m1, m) for n, m, _ in seen})
            host_runs.append({n: (t - t1) * 1e3 for n, _, t in seen})
            if order is None:
                order = [n for n, _, _ in seen]
        ready = {n: round(statistics.median(r[n] for r in ready_runs), 4) for n in order}
        rhost = {n: round(statistics.median(r[n] for r in host_runs), 4) for n in order}
        prof = None
        if not opts.no_profile:
            prof = profile_step(torch, lambda **kw: self.step(clock, **kw), self.device)
        attn = getattr(getattr(model, "config", None), "_attn_implementation", None)
        med = statistics.median
        tri = self.trials
        r = {"model": self.name, "batch": self.batch, "seq": self.seq, "precision": self.prec,
             "params": sum(p.numel() for p in model.parameters()),
             "attn_implementation": attn, "note": self.note,
             # the median of the trials' medians: trials are spread over the run, so a slow
             # spell of the host (a neighbour, a clock change) moves one trial, not the figure
             "fwd_ms": med(t[0] for t in tri), "step_ms": med(t[1] for t in tri),
             "bwd_ms": round(med(t[1] - t[0] for t in tri), 4),
             "host_fwd_ms": med(t[2] for t in tri), "host_bwd_ms": med(t[3] for t in tri),
             "trials": tri,
             "step_ms_min": round(min(self.tot), 4), "step_ms_max": round(max(self.tot), 4),
             "wall_ms": round(med(self.walls), 4),
             "iters": len(self.tot), "ready_order": order, "ready_ms": ready,
             "ready_host_ms": rhost, "gpu_mhz": self.gpu_mhz, "kernels": prof}
        if self.light and prof and prof.get("ready_k"):
            r.update(light_ready(self.light, prof["ready_k"], prof["bwd_acts"], order))
        if getattr(self, "light_error", None):
            r["light_error"] = self.light_error
        if self.bucket:
            r["bucket_trials"] = self.bucket
        if opts.diag and (self.name, self.batch, self.seq, self.prec) in opts.diag:
            try:
                r["diag"] = diag_profile(torch, lambda **kw: self.step(clock, **kw))
            except Exception as e:
                r["diag_error"] = str(e)[:200]
        rg = prof.get("ready_gpu_us") if prof else None
        if rg and len(rg) == len(order) + 1:
            # AccumulateGrad runs in the hooks' order: the k-th is order[k]'s
            r["ready_gpu_ms"] = {n: round(t / 1e3, 4) for n, t in zip(order, rg)}
            r["bwd_gpu_ms"] = round(rg[-1] / 1e3, 4)
        return r


def bucket_last_params(binary, name, batch, seq, prec):
    """The last parameter of each of DDP's buckets in the ready order, from `gradsync plan`
    (whose buckets and ready order equal DDP's: check_ddp_buckets.py): a bucket is ready when
    it is, so hooking these alone times every bucket. None when plan cannot say."""
    import subprocess
    cmd = [binary, "plan"] + case_args(dict(model=name, batch=batch, seq=seq, precision=prec)) \
        + ["--json", "--tensors"]
    try:
        p = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True,
                                      timeout=60).stdout)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    t = p["tensors"]
    return [t[max(b["tensors"], key=lambda i: t[i]["ready_pos"])]["name"] for b in p["buckets"]]


def bucket_ready(case, clock, names, steps):
    """Bucket ready times with few, cheap hooks: a post-accumulate-grad hook on each
    bucket's last parameter alone (names), recording an event made beforehand (no
    allocation, no Python beyond the record: a few us a hook, against the 47 of a hook that
    makes its event), so a host-bound backward of 400 parameters is stretched by tens of
    microseconds, not 19 ms. Returns [hooked backward ms, {name: ready ms}], medians over
    `steps` steps; ready ms are from the event after forward (the later of forward's kernels
    and the host's call of backward, as bwd_ms). The caller compares the hooked backward
    with the unhooked one before trusting them."""
    torch, model = case.torch, case.model
    want = set(names)
    params = [(n, p) for n, p in model.named_parameters() if n in want]
    marks, handles = {}, []
    for n, p in params:
        def hook(n=n):
            marks[n].record() if case.device.startswith("cuda") else \
                marks.__setitem__(n, time.perf_counter())
        handles += rm.on_grad_ready(p, hook)
    bwd, ready = [], {n: [] for n, _ in params}
    try:
        for _ in range(steps):
            for n, _ in params:
                marks[n] = torch.cuda.Event(enable_timing=True) \
                    if case.device.startswith("cuda") else None
            (m0, m1, m2), _ = case.step(clock)
            clock.sync()
            bwd.append(clock.ms(m1, m2))
            for n, _ in params:
                if marks[n] is not None:
                    ready[n].append(clock.ms(m1, marks[n]))
    finally:
        for h in handles:
            if hasattr(h, "remove"):
                h.remove()
    med = statistics.median
    return [round(med(bwd), 4), {n: round(med(v), 4) for n, v in ready.items() if v}]


def light_ready(light, ks, nbwd, order):
    """Per trial, hook-free ready times from the light traces (light_steps): the i-th
    AccumulateGrad (order[i]) is ready when backward's first ks[i] GPU activities are done
    (ks from the full trace: the engine runs its nodes in the same order every step).
    A step whose backward launched another number of activities than the full trace's is
    left out (and counted). Returns light_trials: per trial [probe, steps used, backward's
    GPU end, backward's start-up, forward's GPU span, forward's GPU busy, forward's GPU idle
    by tenths of its kernels (fwd_idle_tenths)] (ms, medians over the trial's steps) and
    light_ready: per trial the ready ms per parameter, in order."""
    med = statistics.median
    trials, ready, bad = [], [], 0
    for probe, steps in light:
        use = [s for s in steps if len(s["ends"]) == nbwd]
        bad += len(steps) - len(use)
        if not use:
            continue
        per = []
        for s in use:
            pre, m = [], 0.0
            for x in s["ends"]:
                m = max(m, x)
                pre.append(m)
            per.append([pre[k - 1] if k > 0 else 0.0 for k in ks] + [m])
        rd = [round(med(p[i] for p in per), 4) for i in range(len(ks) + 1)]
        trials.append([probe, len(use), rd[-1], round(med(s.get("bwd_start_ms", 0) for s in use), 4),
                       round(med(s["fwd_span_ms"] for s in use), 4),
                       round(med(s["fwd_busy_ms"] for s in use), 4),
                       [round(med(s["fwd_idle_tenths"][i] for s in use), 4) for i in range(10)]])
        ready.append(rd[:-1])
    return {"light_trials": trials, "light_ready": ready, "light_order": order,
            "light_mismatch": bad}


def host_probe_us(torch, device, n=400):
    """The host's pace now: us per tiny eager op (an in-place add: one Python call, one
    dispatch, one kernel launch), median of 5 runs of n. The GPU keeps up (1-element
    kernels), so this is host time alone; it moves with the host's speed, whatever the
    case."""
    x = torch.zeros(1, device=device)
    runs = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            x.add_(1)
        runs.append((time.perf_counter() - t) * 1e6 / n)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return round(statistics.median(runs), 3)


def gpu_clock_mhz(torch):
    try:
        return torch.cuda.clock_rate() if torch.cuda.is_available() else None
    except Exception:  # no NVML
        return None


def run_cases(torch, cases, precs, opts, clock, doc, save):
    """Every case in `opts.trials` rounds, interleaved: each round runs each case once."""
    models, live = {}, []
    t0 = time.time()
    for case in cases:
        name, batch, seq = case[:3]
        own = case[3] if len(case) > 3 else None
        if name not in models:
            torch.manual_seed(0)
            try:
                models[name] = rm.build(name, opts.device, dropout=True)
            except rm.SkipModel as e:
                doc["skipped"].append("%s: %s" % (name, e))
                models[name] = None
        if not models[name]:
            continue
        for prec in ([own] if own else precs):
            # TF32 is measured at one shape per model (it sits between fp32 and bf16)
            if prec == "tf32" and not own and not opts.quick and \
                    (name, batch, seq) not in TF32_CASES:
                continue
            live.append(Case(torch, name, batch, seq, prec,
                             precision_model(torch, models, name, prec), opts.device))
    failed = set()
    for rnd in range(opts.trials):
        for c in live:
            if id(c) in failed:
                continue
            if time.time() - t0 > opts.budget_s and c.trials:
                continue
            try:
                iters = opts.iters
                if c.tot and opts.case_time_s:
                    # slow GPU-bound cases: fewer steps, same trial count (their spread is small)
                    est = statistics.median(c.tot) / 1e3
                    iters = max(opts.min_iters, min(opts.iters,
                                                    int(opts.case_time_s / opts.trials / est)))
                if opts.gradsync and c.bucket_last is None:
                    c.bucket_last = bucket_last_params(opts.gradsync, c.name, c.batch, c.seq,
                                                       c.prec) or []
                c.trial(clock, iters, opts.warmup if rnd == 0 else 3, opts.light_steps,
                        opts.bucket_steps if opts.gradsync else 0)
            except Exception as e:  # out of memory and the like: say so, go on
                failed.add(id(c))
                doc["skipped"].append("%s:%d:%d:%s: %s" % (c.name, c.batch, c.seq, c.prec,
                                                           str(e)[:200]))
                print("fail %s b%d s%d %s: %s" % (c.name, c.batch, c.seq, c.prec, str(e)[:200]),
                      flush=True)
                if opts.device.startswith("cuda"):
                    torch.cuda.empty_cache()
        print("round %d done at %.0f s" % (rnd + 1, time.time() - t0), flush=True)
    for c in live:
        if id(c) in failed or not c.trials:
            continue
        r = c.result(clock, opts)
        doc["cases"].append(r)
        print("%-12s b%-4d s%-5d %-9s fwd %8.2f ms  fwd+bwd %8.2f ms  host %6.2f+%6.2f ms  "
              "trials %s" % (c.name, c.batch, c.seq, c.prec, r["fwd_ms"], r["step_ms"],
                             r["host_fwd_ms"], r["host_bwd_ms"],
                             " ".join("%.2f" % t[1] for t in c.trials)), flush=True)
        save()


def cpu_info(core):
    """The host CPU the references ran on (model, clock) and the core the process holds."""
    info = {"cores": os.cpu_count(), "pinned": sorted(os.sched_getaffinity(0))}
    try:
        with open("/proc/cpuinfo") as f:
            blocks = f.read().split("\n\n")
        for b in blocks:
            kv = dict(x.split(":", 1) for x in b.splitlines() if ":" in x)
            kv = {k.strip(): v.strip() for k, v in kv.items()}
            if core is None or kv.get("processor") == str(core):
                info["model"] = kv.get("model name")
                info["mhz"] = kv.get("cpu MHz")
                break
    except OSError:
        pass
    for what in ("scaling_cur_freq", "scaling_governor", "scaling_max_freq"):
        try:
            with open("/sys/devices/system/cpu/cpu%d/cpufreq/%s" % (core or 0, what)) as f:
                info[what] = f.read().strip()
        except OSError:
            pass
    return info


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
    ap.add_argument("--iters", type=int, default=20, help="steps per trial")
    ap.add_argument("--min-iters", type=int, default=5)
    ap.add_argument("--trials", type=int, default=5, help="rounds over all cases")
    ap.add_argument("--case-time-s", type=float, default=8.0,
                    help="timed seconds per case over all trials (fewer steps when slower)")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--pin", type=int, default=None,
                    help="pin the process (all its threads) to this core")
    ap.add_argument("--budget-s", type=float, default=1e9)
    ap.add_argument("--quick", action="store_true", help="tiny CPU cases to test the script")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--light-steps", type=int, default=0,
                    help="per trial, this many steps traced with the GPU's activities alone: "
                         "hook-free ready times (light_ready)")
    ap.add_argument("--gradsync", default=None,
                    help="gradsync binary: per trial, --bucket-steps steps with a cheap hook on "
                         "each bucket's last parameter (bucket_trials)")
    ap.add_argument("--bucket-steps", type=int, default=3)
    ap.add_argument("--diag", default="",
                    help="model:batch:seq:precision,...: where each kernel comes from (diag)")
    ap.add_argument("--micro", default=None, help="also write library kernel timings here")
    ap.add_argument("--micro-budget-s", type=float, default=1e9)
    opts = ap.parse_args()
    if opts.pin is not None:
        # before torch starts any thread: the threads it starts inherit the mask
        os.sched_setaffinity(0, {opts.pin})

    import torch
    torch.manual_seed(0)
    clock = Clock(torch, opts.device.startswith("cuda"))
    cases = QUICK_CASES if opts.quick else (parse_cases(opts.cases) if opts.cases
                                            else DEFAULT_CASES)
    precs = [p for p in opts.precisions.split(",") if p]
    opts.diag = {(m, b, q, p) for m, b, q, p in parse_cases(opts.diag)}
    doc = {"env": env_info(torch, opts.device), "cases": [], "skipped": [],
           "method": {"trials": opts.trials, "iters": opts.iters, "warmup": opts.warmup,
                      "case_time_s": opts.case_time_s, "pin": opts.pin},
           "cpu": cpu_info(opts.pin)}
    t0 = time.time()

    def save():
        with open(opts.out + ".tmp", "w") as f:
            json.dump(doc, f, indent=0)
        os.replace(opts.out + ".tmp", opts.out)

    run_cases(torch, cases, precs, opts, clock, doc, save)
    doc["cpu_after"] = cpu_info(opts.pin)
    save()
    print("wrote %s: %d results in %.0f s" % (opts.out, len(doc["cases"]), time.time() - t0))
    if opts.micro:
        import micro_kernels
        micro_kernels.run(torch, opts.device, opts.micro, quick=opts.quick,
                          budget_s=opts.micro_budget_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
