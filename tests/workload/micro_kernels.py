"""Library kernel timings by shape (cuBLAS, cuDNN, ATen's memory-bound kernels).

run(torch, device, out_path) writes a JSON list of rows
  {"op", "prec", "shape", "flops", "bytes", "gpu_us", "kernels", "wall_us"}
gpu_us is the GPU time of one call (sum of its kernels, median over the profiled calls),
kernels the kernel count of one call, wall_us the time per call when issued back to back
(CUDA events over the repetitions: the eager launch rate shows where kernels are short).
flops / bytes are what the cost model charges for the same op (bytes read + written once),
so gpu_us against them is the efficiency the h200 profile holds. Used by
measure_torch_step.py --micro.

Run alone (`micro_kernels.py --out FILE --only conv_split,gemm_gap`) it times the groups
named: conv_split, every convolution shape of ResNet-18/50 at several batches with the
forward, the data gradient and the weight gradient apart (aten.convolution_backward with
one output_mask each: cuDNN picks an algorithm per pass, so each has its own rate), with the
kernels' names (the algorithm cuDNN chose); gemm_gap, BERT's fp32 linear shapes as torch.mm
and as F.linear with its bias, back to back and with the GPU left idle between calls (what a
host-bound forward does to it), and over distinct weights as in a model.
"""

import json
import statistics
import sys
import time

BPE = {"fp32": 4, "tf32": 4, "bf16": 2}


def _dtype(torch, prec):
    return torch.bfloat16 if prec == "bf16" else torch.float32


def _set(torch, prec):
    torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
    torch.backends.cudnn.allow_tf32 = prec == "tf32"


def measure(torch, fn, reps):
    """(gpu_us per call, kernels per call, wall_us per call)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(reps):
        fn()
    b.record()
    torch.cuda.synchronize()
    wall = a.elapsed_time(b) * 1e3 / reps
    try:
        res = profile_calls(torch, [fn] * reps)
    except RuntimeError:  # a call that launched no kernel
        return None, 0, wall
    return (statistics.median(r[0] for r in res), statistics.median(r[1] for r in res), wall)


def gemm_rows(torch, dev, quick):
    ms = [512, 2048] if quick else [512, 2048, 8192, 32768]
    nks = [(768, 768), (3072, 768), (768, 3072), (1024, 1024), (4096, 1024), (1024, 4096),
           (2304, 768), (3072, 1024)]
    shapes = [(m, n, k) for m in ms for n, k in nks]
    shapes += [(4096, 50257, 768), (8192, 50257, 1024), (4096, 30522, 1024), (256, 1000, 2048),
               (64, 1000, 512)]
    if quick:
        shapes = shapes[:3]
    for prec in ("fp32", "tf32", "bf16"):
        _set(torch, prec)
        dt = _dtype(torch, prec)
        for m, n, k in shapes:
            for layout in ("nt", "nn", "tn"):
                if layout != "nt" and m not in (2048, 8192):
                    continue  # backward layouts at two sizes only
                # nt: y = x W^T (forward); nn: dx = dy W (data grad); tn: dW = dy^T x
                if layout == "nt":
                    x = torch.randn(m, k, device=dev, dtype=dt)
                    w = torch.randn(n, k, device=dev, dtype=dt)
                    fn = lambda x=x, w=w: torch.mm(x, w.t())
                elif layout == "nn":
                    x = torch.randn(m, n, device=dev, dtype=dt)
                    w = torch.randn(n, k, device=dev, dtype=dt)
                    fn = lambda x=x, w=w: torch.mm(x, w)
                else:
                    x = torch.randn(m, n, device=dev, dtype=dt)
                    w = torch.randn(m, k, device=dev, dtype=dt)
                    fn = lambda x=x, w=w: torch.mm(x.t(), w)
                flops = 2.0 * m * n * k
                reps = max(3, min(50, int(2e12 / flops)))
                g, kc, wall = measure(torch, fn, reps)
                yield {"op": "gemm_" + layout, "prec": prec, "shape": [m, n, k],
                       "flops": flops, "bytes": BPE[prec] * (m * k + n * k + m * n),
                       "gpu_us": g, "kernels": kc, "wall_us": wall}
                del x, w


CONVS = [(3, 64, 7, 2, 224), (64, 64, 3, 1, 56), (64, 256, 1, 1, 56), (256, 64, 1, 1, 56),
         (128, 128, 3, 1, 28), (256, 256, 3, 1, 14), (512, 512, 3, 1, 7), (2048, 512, 1, 1, 7),
         (128, 128, 3, 2, 56), (1024, 2048, 1, 2, 14)]


def conv_rows(torch, dev, quick):
    batches = [8] if quick else [32, 128]
    convs = CONVS[:2] if quick else CONVS
    for prec in ("fp32", "tf32", "bf16"):
        _set(torch, prec)
        dt = _dtype(torch, prec)
        for b in batches:
            for cin, cout, k, s, hw in convs:
                x = torch.randn(b, cin, hw, hw, device=dev, dtype=dt, requires_grad=cin != 3)
                conv = torch.nn.Conv2d(cin, cout, k, s, k // 2, bias=False).to(dev, dt)
                out_hw = (hw + 2 * (k // 2) - k) // s + 1
                flops = 2.0 * b * cin * cout * k * k * out_hw * out_hw
                byts = BPE[prec] * (b * cin * hw * hw + cin * cout * k * k +
                                    b * cout * out_hw * out_hw)
                y = conv(x)
                gy = torch.randn_like(y)
                reps = max(3, min(30, int(1e12 / flops)))
                for op, fn in (("conv_fwd", lambda: conv(x)),
                               ("conv_bwd", lambda: torch.autograd.grad(
                                   y, [conv.weight] + ([x] if cin != 3 else []), gy,
                                   retain_graph=True))):
                    g, kc, wall = measure(torch, fn, reps)
                    f = flops if op == "conv_fwd" else flops * (2 if cin != 3 else 1)
                    yield {"op": op, "prec": prec, "shape": [b, cin, cout, k, s, hw],
                           "flops": f, "bytes": byts, "gpu_us": g, "kernels": kc,
                           "wall_us": wall}
                del x, conv, y, gy


def mem_rows(torch, dev, quick):
    import torch.nn.functional as F
    sizes = [1 << 12, 1 << 16, 1 << 20, 1 << 24] if quick else \
        [1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28]
    for prec in ("fp32", "bf16"):
        dt = _dtype(torch, prec)
        e = BPE[prec]
        for n in sizes:
            a = torch.randn(n, device=dev, dtype=dt)
            b = torch.randn(n, device=dev, dtype=dt)
            m = torch.rand(n, device=dev) > 0.5
            rows = [("add", lambda: a + b, 3 * e * n), ("relu", lambda: F.relu(a), 2 * e * n),
                    ("gelu", lambda: F.gelu(a), 2 * e * n),
                    ("relu_bwd", lambda: torch.ops.aten.threshold_backward(a, b, 0.0),
                     3 * e * n),
                    ("dropout", lambda: torch.native_dropout(a, 0.1, True), (2 * e + 1) * n),
                    ("cast", lambda: a.to(torch.float32 if prec == "bf16" else torch.bfloat16),
                     (e + (4 if prec == "bf16" else 2)) * n),
                    ("copy", lambda: a.clone(), 2 * e * n)]
            for op, fn, byts in rows:
                reps = 50 if n <= 1 << 24 else 10
                g, kc, wall = measure(torch, fn, reps)
                yield {"op": op, "prec": prec, "shape": [n], "flops": 0, "bytes": byts,
                       "gpu_us": g, "kernels": kc, "wall_us": wall}
            del a, b, m
    # normalisation, softmax, embedding, loss: shapes of the zoo
    for prec in ("fp32", "bf16"):
        dt = _dtype(torch, prec)
        e = BPE[prec]
        for rows_, h in ([(512, 768), (4096, 1024)] if quick else
                         [(512, 768), (4096, 768), (16384, 768), (4096, 1024), (16384, 1024),
                          (65536, 768), (32768, 1024)]):
            x = torch.randn(rows_, h, device=dev, dtype=dt, requires_grad=True)
            ln = torch.nn.LayerNorm(h).to(dev, dt)
            y = ln(x)
            gy = torch.randn_like(y)
            for op, fn, byts in (("layernorm_fwd", lambda: ln(x), 2 * e * rows_ * h),
                                 ("layernorm_bwd", lambda: torch.autograd.grad(
                                     y, [x, ln.weight, ln.bias], gy, retain_graph=True),
                                  3 * e * rows_ * h)):
                g, kc, wall = measure(torch, fn, 20)
                yield {"op": op, "prec": prec, "shape": [rows_, h], "flops": 0, "bytes": byts,
                       "gpu_us": g, "kernels": kc, "wall_us": wall}
            del x, ln, y, gy
        for b, c, hw in ([(8, 64, 56)] if quick else
                         [(32, 64, 112), (32, 256, 56), (32, 512, 28), (32, 2048, 7),
                          (128, 64, 112), (128, 256, 56), (128, 1024, 14), (256, 64, 56)]):
            x = torch.randn(b, c, hw, hw, device=dev, dtype=dt, requires_grad=True)
            bn = torch.nn.BatchNorm2d(c).to(dev, dt if prec == "fp32" else torch.float32)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=prec == "bf16"):
                y = bn(x)
            gy = torch.randn_like(y)
            n = b * c * hw * hw
            for op, fn, byts in (("batchnorm_fwd", lambda: bn(x), 2 * e * n),
                                 ("batchnorm_bwd", lambda: torch.autograd.grad(
                                     y, [x, bn.weight, bn.bias], gy, retain_graph=True),
                                  3 * e * n)):
                g, kc, wall = measure(torch, fn, 20)
                yield {"op": op, "prec": prec, "shape": [b, c, hw, hw], "flops": 0,
                       "bytes": byts, "gpu_us": g, "kernels": kc, "wall_us": wall}
            del x, bn, y, gy
        for rows_, cols in ([(256, 128)] if quick else
                            [(32 * 12 * 128, 128), (8 * 16 * 512, 512), (4 * 12 * 1024, 1024),
                             (4096, 50257), (8192, 30522), (128 * 12 * 197, 197)]):
            x = torch.randn(rows_, cols, device=dev, dtype=dt, requires_grad=True)
            y = torch.softmax(x, -1)
            gy = torch.randn_like(y)
            for op, fn, byts in (("softmax_fwd", lambda: torch.softmax(x, -1),
                                  2 * e * rows_ * cols),
                                 ("softmax_bwd", lambda: torch.autograd.grad(
                                     y, [x], gy, retain_graph=True), 3 * e * rows_ * cols)):
                g, kc, wall = measure(torch, fn, 10)
                yield {"op": op, "prec": prec, "shape": [rows_, cols], "flops": 0,
                       "bytes": byts, "gpu_us": g, "kernels": kc, "wall_us": wall}
            del x, y, gy


def profile_calls(torch, calls):
    """[(gpu_us, kernels, names, us)] per call of `calls` (a list of functions): its kernels'
    names and each one's time in the same order. All run in one profiler session, each
    call followed by a spin kernel that separates it from the next on the GPU timeline (one
    session instead of one per shape: the profiler's start-up would otherwise cost more than
    the kernels). A call that launched no kernel leaves no group,
    so a count that does not match is an error, not a silent shift."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for fn in calls:
            fn()
            torch.cuda._sleep(50)
        torch.cuda.synchronize()
    kern = [e for e in prof.events() if str(getattr(e, "device_type", "")).endswith("CUDA")]
    kern.sort(key=lambda k: k.time_range.start)
    groups, cur = [], []
    for k in kern:
        if "spin_kernel" in k.name:
            groups.append(cur)
            cur = []
        else:  # a memset of cuDNN's split-K workspace is part of the call's cost
            cur.append(k)
    if len(groups) != len(calls):
        raise RuntimeError("profile_calls: %d calls, %d groups" % (len(calls), len(groups)))
    return [(sum(k.time_range.end - k.time_range.start for k in g), len(g),
             [k.name[:90] for k in g], [k.time_range.end - k.time_range.start for k in g])
            for g in groups]


def resnet_convs(torch):
    """Every distinct convolution of torchvision's ResNet-18 and ResNet-50 at 224 x 224:
    (cin, cout, k, stride, pad, input side), from forward hooks on a batch of one."""
    import torchvision
    seen = []
    for name in ("resnet18", "resnet50"):
        m = getattr(torchvision.models, name)(weights=None).eval()
        hooks = []
        for mod in m.modules():
            if isinstance(mod, torch.nn.Conv2d):
                def hook(mod, inp, out):
                    key = (mod.in_channels, mod.out_channels, mod.kernel_size[0],
                           mod.stride[0], mod.padding[0], inp[0].shape[-1])
                    if key not in seen:
                        seen.append(key)
                hooks.append(mod.register_forward_hook(hook))
        with torch.no_grad():
            m(torch.zeros(1, 3, 224, 224))
        for h in hooks:
            h.remove()
    return seen


def conv_split_rows(torch, dev, quick, batches=(16, 32, 64, 128, 256), precs=("fp32", "bf16")):
    """Forward, data gradient and weight gradient of each ResNet convolution apart, per batch
    and precision (conv1's data gradient is never computed in training: left out)."""
    import torch.nn.functional as F
    convs = resnet_convs(torch)
    if quick:
        convs, batches, precs = convs[:3], (2,), ("fp32",)
    for prec in precs:
        _set(torch, prec)
        dt = _dtype(torch, prec)
        for b in batches:
            items = []
            for cin, cout, k, s, pad, hw in convs:
                x = torch.randn(b, cin, hw, hw, device=dev, dtype=dt)
                w = torch.randn(cout, cin, k, k, device=dev, dtype=dt)
                y = F.conv2d(x, w, None, s, pad)
                gy = torch.randn_like(y)
                ohw = y.shape[-1]
                flops = 2.0 * b * cin * cout * k * k * ohw * ohw
                e = BPE[prec]
                sizes = {"x": e * x.numel(), "w": e * w.numel(), "y": e * y.numel()}
                ops = [("conv_fwd", lambda x=x, w=w, s=s, pad=pad: F.conv2d(x, w, None, s, pad),
                        sizes["x"] + sizes["w"] + sizes["y"])]
                if cin != 3:
                    ops.append(("conv_dgrad", lambda x=x, w=w, gy=gy, s=s, pad=pad:
                                torch.ops.aten.convolution_backward(
                                    gy, x, w, None, [s, s], [pad, pad], [1, 1], False, [0, 0],
                                    1, [True, False, False]),
                                sizes["y"] + sizes["w"] + sizes["x"]))
                ops.append(("conv_wgrad", lambda x=x, w=w, gy=gy, s=s, pad=pad:
                            torch.ops.aten.convolution_backward(
                                gy, x, w, None, [s, s], [pad, pad], [1, 1], False, [0, 0],
                                1, [False, True, False]),
                            sizes["y"] + sizes["x"] + sizes["w"]))
                reps = max(3, min(20, int(1.5e11 / flops)))
                for op, fn, byts in ops:
                    items.append(({"op": op, "prec": prec, "shape": [b, cin, cout, k, s, hw],
                                   "out_hw": ohw, "flops": flops, "bytes": byts}, fn, reps))
            for _, fn, _ in items:  # cuDNN's first call per shape chooses; keep it out
                fn()
                fn()
            torch.cuda.synchronize()
            calls = [fn for _, fn, reps in items for _ in range(reps)]
            res = profile_calls(torch, calls)
            i = 0
            for row, fn, reps in items:
                mine = res[i:i + reps]
                i += reps
                row.update(gpu_us=statistics.median(r[0] for r in mine),
                           kernels=statistics.median(r[1] for r in mine), names=mine[0][2],
                           reps=reps)
                yield row
            del items, calls, res
            torch.cuda.empty_cache()


def gemm_gap_rows(torch, dev, quick):
    """BERT's fp32 linears (and ViT-B's) in the ways a small fp32 forward meets them: mm
    against F.linear with bias, back to back, after the GPU idled (gap_us of host wait with
    nothing queued), and over 12 distinct weights in turn (each a cold L2 like in a model).
    gpu_us is the median kernel time of one call; names the kernels cuBLAS chose."""
    import torch.nn.functional as F
    _set(torch, "fp32")
    shapes = [(1024, 768, 768), (1024, 3072, 768), (1024, 768, 3072), (2048, 768, 768),
              (2048, 3072, 768), (3152, 768, 768), (3152, 3072, 768), (4096, 768, 768)]
    if quick:
        shapes = shapes[:1]
    for m, n, k in shapes:
        x = torch.randn(m, k, device=dev)
        ws = [torch.randn(n, k, device=dev) for _ in range(12)]
        bs = [torch.randn(n, device=dev) for _ in range(12)]
        x3 = x.view(8, m // 8, k)  # [batch, seq, hidden] as a model's linear sees it
        variants = [("mm", lambda: torch.mm(x, ws[0].t()), 0, 1),
                    ("linear", lambda: F.linear(x, ws[0], bs[0]), 0, 1),
                    ("linear3d", lambda: F.linear(x3, ws[0], bs[0]), 0, 1),
                    ("linear_12w", None, 0, 12),
                    ("linear_gap20", lambda: F.linear(x, ws[0], bs[0]), 20, 1),
                    ("linear_gap200", lambda: F.linear(x, ws[0], bs[0]), 200, 1),
                    ("linear_gap2000", lambda: F.linear(x, ws[0], bs[0]), 2000, 1)]
        for name, fn, gap_us, nw in variants:
            if nw > 1:
                calls = [lambda j=j: F.linear(x, ws[j % 12], bs[j % 12]) for j in range(24)]
            else:
                calls = [fn] * 12
            for c in calls[:3]:
                c()
            torch.cuda.synchronize()
            if gap_us:
                def waited(c=None, fn=fn, gap_us=gap_us):
                    torch.cuda.synchronize()
                    t = time.perf_counter() + gap_us * 1e-6
                    while time.perf_counter() < t:
                        pass
                    fn()
                calls = [waited] * 12
            res = profile_calls(torch, calls)
            yield {"op": "gemm_gap", "variant": name, "prec": "fp32", "shape": [m, n, k],
                   "flops": 2.0 * m * n * k, "bytes": 4 * (m * k + n * k + m * n),
                   "gpu_us": statistics.median(r[0] for r in res),
                   "gpu_us_min": min(r[0] for r in res), "kernels": res[0][1],
                   "names": res[0][2], "gap_us": gap_us}
        del x, ws, bs, x3


def gemm_waves_rows(torch, dev, quick):
    """fp32 GEMMs of the transformers' linears over the rows M a step gives them (batch x
    seq: 1024 to 12608), each in the three ways a step runs it: the forward as F.linear with
    its bias (nt), the data gradient (nn: dy W) and the weight gradient (tn: dy^T x). Few
    rows leave cuBLAS's 128x128 output tiles short of one or two full waves over the 132
    SMs: the rate by M is what the cost model's forward GEMMs at M ~2000-3200 lacked
    (issue 13). names: the kernels cuBLAS chose."""
    import torch.nn.functional as F
    _set(torch, "fp32")
    ms = [1024, 1536, 2048, 2560, 3152, 4096, 5120, 6304, 8192, 12608]
    nks = [(768, 768), (2304, 768), (3072, 768), (768, 3072), (1024, 1024), (3072, 1024),
           (4096, 1024), (1024, 4096)]
    if quick:
        ms, nks = ms[:2], nks[:1]
    for m in ms:
        for n, k in nks:
            x = torch.randn(m, k, device=dev)
            w = torch.randn(n, k, device=dev)
            b = torch.randn(n, device=dev)
            dy = torch.randn(m, n, device=dev)
            for layout, fn in (("nt", lambda: F.linear(x, w, b)), ("nn", lambda: torch.mm(dy, w)),
                               ("tn", lambda: torch.mm(dy.t(), x))):
                for c in range(3):
                    fn()
                torch.cuda.synchronize()
                res = profile_calls(torch, [fn] * 8)
                yield {"op": "gemm_waves_" + layout, "prec": "fp32", "shape": [m, n, k],
                       "flops": 2.0 * m * n * k, "bytes": 4 * (m * k + n * k + m * n),
                       "gpu_us": statistics.median(r[0] for r in res), "kernels": res[0][1],
                       "names": res[0][2]}
            del x, w, b, dy


def attn_rows(torch, dev, quick):
    """Fused attention (F.scaled_dot_product_attention) forward and backward apart, by head
    width, mask and shape: q, k, v laid out as Hugging Face's modules pass them (a
    transposed view of [batch, seq, heads, head_dim]); bf16 as under autocast, fp32 with
    TF32 off. attn_us sums the kernels a step's profile counts as attention
    (measure_torch_step.kernel_class), gpu_us all of the call's."""
    import torch.nn.functional as F
    from measure_torch_step import kernel_class
    shapes = [(1, 32, 1024), (2, 16, 2048), (8, 12, 512), (16, 16, 256), (1, 32, 4096)]
    if quick:
        shapes = shapes[:1]
    configs = [("bf16", d, c, s, None) for d in (64, 80, 128) for c in (True, False)
               for s in shapes]
    configs += [("fp32", d, c, s, None) for d in (64, 128) for c in (True, False)
                for s in shapes]
    configs += [("bf16", 128, True, (1, 32, 2048), 8), ("bf16", 128, True, (4, 32, 1024), 8)]
    for prec, d, causal, (b, h, s), kvh in configs:
        _set(torch, prec)
        dt = _dtype(torch, prec)
        kv = kvh or h

        def t(heads):
            return torch.randn(b, s, heads, d, device=dev, dtype=dt).transpose(1, 2) \
                .requires_grad_()
        q, k, v = t(h), t(kv), t(kv)
        extra = {"enable_gqa": True} if kvh else {}
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, **extra)
        go = torch.randn_like(o)
        flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
        for ph, fn in (("fwd", lambda: F.scaled_dot_product_attention(
                            q, k, v, is_causal=causal, **extra)),
                       ("bwd", lambda: torch.autograd.grad(o, (q, k, v), go,
                                                           retain_graph=True))):
            for _ in range(2):
                fn()
            res = profile_calls(torch, [fn] * 5)
            per = [sum(us for n, us in zip(r[2], r[3]) if kernel_class(n) == "attention")
                   for r in res]
            yield {"op": "attn", "prec": prec, "pass": ph,
                   "shape": [b, h, s, d, int(causal), kv],
                   "flops": flops * (2.5 if ph == "bwd" else 1.0),
                   "gpu_us": statistics.median(r[0] for r in res),
                   "attn_us": statistics.median(per), "kernels": res[0][1],
                   "names": res[0][2]}
        del q, k, v, o, go


GROUPS = {"gemm": gemm_rows, "conv": conv_rows, "mem": mem_rows, "conv_split": conv_split_rows,
          "gemm_gap": gemm_gap_rows, "gemm_waves": gemm_waves_rows, "attn": attn_rows}


def run(torch, device, out_path, quick=False, budget_s=1e9, only=("gemm", "conv", "mem")):
    import time
    t0 = time.time()
    rows = []
    dev = device if device.startswith("cuda") else None
    if dev is None:
        print("micro: needs a GPU, skipped", flush=True)
        return
    for gen in (GROUPS[g] for g in only):
        try:
            for r in gen(torch, dev, quick):
                rows.append(r)
                if time.time() - t0 > budget_s:
                    rows.append({"op": gen.__name__, "error": "budget"})
                    break
        except Exception as e:
            rows.append({"op": gen.__name__, "error": str(e)[:300]})
            print("micro %s: %s" % (gen.__name__, str(e)[:300]), flush=True)
        with open(out_path, "w") as f:
            json.dump(rows, f, indent=0)
    print("micro: %d rows -> %s" % (len(rows), out_path), flush=True)
    _set(torch, "fp32")


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--only", default="conv_split,gemm_gap", help=",".join(GROUPS))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--budget-s", type=float, default=1e9)
    ap.add_argument("--batches", default=None,
                    help="conv_split's batches (default 16,32,64,128,256)")
    ap.add_argument("--precs", default=None,
                    help="conv_split's precisions (default fp32,bf16; tf32 as well)")
    opts = ap.parse_args()
    if opts.batches or opts.precs:
        bs = tuple(int(b) for b in opts.batches.split(",")) if opts.batches else \
            (16, 32, 64, 128, 256)
        ps = tuple(opts.precs.split(",")) if opts.precs else ("fp32", "bf16")
        bad = [p for p in ps if p not in BPE]
        if bad:
            print("micro_kernels: unknown precision %s (have %s)" % (bad[0], ",".join(BPE)),
                  file=sys.stderr)
            return 2
        GROUPS["conv_split"] = lambda torch, dev, quick: conv_split_rows(torch, dev, quick,
                                                                         bs, ps)
    import torch
    torch.manual_seed(0)
    only = [g for g in opts.only.split(",") if g]
    bad = [g for g in only if g not in GROUPS]
    if bad:
        print("micro_kernels: unknown group %s (have %s)" % (bad[0], ",".join(GROUPS)),
              file=sys.stderr)
        return 2
    run(torch, opts.device, opts.out, quick=opts.quick, budget_s=opts.budget_s, only=only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
