"""Library kernel timings by shape (cuBLAS, cuDNN, ATen's memory-bound kernels).

run(torch, device, out_path) writes a JSON list of rows
  {"op", "prec", "shape", "flops", "bytes", "gpu_us", "kernels", "wall_us"}
gpu_us is the GPU time of one call (sum of its kernels, median over the profiled calls),
kernels the kernel count of one call, wall_us the time per call when issued back to back
(CUDA events over the repetitions: the eager launch rate shows where kernels are short).
flops / bytes are what the cost model charges for the same op (bytes read + written once),
so gpu_us against them is the efficiency the h200 profile holds. Used by
measure_torch_step.py --micro.
"""

import json
import statistics

BPE = {"fp32": 4, "tf32": 4, "bf16": 2}


def _dtype(torch, prec):
    return torch.bfloat16 if prec == "bf16" else torch.float32


def _set(torch, prec):
    torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
    torch.backends.cudnn.allow_tf32 = prec == "tf32"


def measure(torch, fn, reps):
    """(gpu_us per call, kernels per call, wall_us per call)."""
    from torch.profiler import ProfilerActivity, profile
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
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
            torch.cuda._sleep(50)  # call separator on the GPU timeline
        torch.cuda.synchronize()
    kern = [e for e in prof.events() if str(getattr(e, "device_type", "")).endswith("CUDA")]
    kern.sort(key=lambda k: k.time_range.start)
    calls, cur = [], []
    for k in kern:
        if "spin_kernel" in k.name:
            calls.append(cur)
            cur = []
        else:
            cur.append(k.time_range.end - k.time_range.start)
    calls = [c for c in calls if c]
    if not calls:
        return None, 0, wall
    return (statistics.median(sum(c) for c in calls), statistics.median(len(c) for c in calls),
            wall)


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


def run(torch, device, out_path, quick=False, budget_s=1e9):
    import time
    t0 = time.time()
    rows = []
    dev = device if device.startswith("cuda") else None
    if dev is None:
        print("micro: needs a GPU, skipped", flush=True)
        return
    for gen in (gemm_rows, conv_rows, mem_rows):
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
