#!/usr/bin/env python3
"""torch.add(a, b, out=c) bandwidth on this GPU (2 reads + 1 write counted), f32 and bf16,
64 MiB..1 GiB per tensor, CUDA events, median of 7 after 2 warm-ups: the peer that
tests/gpu/reduce_sweep.cu and gpu_bench's reduce rows are held against in the same call."""
import torch

for mib in (64, 256, 1024):
    for name, dt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        n = (mib << 20) // torch.tensor([], dtype=dt).element_size()
        a = torch.randn(n, device="cuda").to(dt)
        b = torch.randn(n, device="cuda").to(dt)
        c = torch.empty_like(a)
        for label, fn in (("out", lambda: torch.add(a, b, out=c)),
                          ("inplace", lambda: c.add_(b))):
            for _ in range(2):
                fn()
            ts = []
            for _ in range(7):
                e0 = torch.cuda.Event(enable_timing=True)
                e1 = torch.cuda.Event(enable_timing=True)
                e0.record()
                fn()
                e1.record()
                e1.synchronize()
                ts.append(e0.elapsed_time(e1))
            ms = sorted(ts)[3]
            print(f"torch.add {label} {name} {mib}MiB {3 * (mib << 20) / (ms * 1e-3) / 1e12:.3f} TB/s",
                  flush=True)
