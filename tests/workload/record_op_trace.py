#!/usr/bin/env python3
"""Record a training step of a real model as a gradsync op_trace ([workload] op_trace = FILE).

usage: record_op_trace.py --model NAME --out FILE [--batch B] [--seq S]
                          [--precision fp32|tf32|amp_bf16] [--device cuda|cpu] [--iters N]
       or, from your own code:
           import record_op_trace as rot
           rot.record(model, step_fn, out_path, note="my model", batch=B)
       where step_fn() runs forward + loss and returns the loss (record calls backward).

The trace is the median of --iters steps (after warm-up), timed on the GPU with CUDA
events (on the CPU with the wall clock):
  - forward: one segment per leaf module, from the previous mark to the end of that
    module's forward (forward hooks), then "loss" up to the loss;
  - backward: one segment per parameter gradient, from the previous mark to the moment
    that gradient was accumulated (post-accumulate-grad hooks), then "tail" up to the end
    of backward. A segment's duration therefore includes everything the GPU did between
    the marks, so the segments add up to the real forward and backward times.

Format (text, one record a line, '#' starts a comment, fields separated by blanks):
    gradsync_op_trace 1                      first line: format and version
    batch N                                  optional: the step's per-rank batch (samples/s
                                             in the report; without it, [workload] batch
                                             where given, else samples/s is unknown)
    param NAME DIM[,DIM...] [DTYPE]          every parameter in registration order
                                             (model.parameters()); DTYPE f32 (default),
                                             bf16 or f16 as the gradient DDP reduces
    fwd US LABEL                             a forward segment of US microseconds
    bwd US LABEL [PARAM...]                  a backward segment; the PARAMs' gradients are
                                             ready at its end
Forward segments come in execution order, then backward segments in execution order;
every parameter appears in exactly one bwd line (unused parameters: never, and gradsync
says so). Durations are decimal microseconds >= 0.
"""

import argparse
import statistics
import sys
import time

sys.dont_write_bytecode = True


class Clock:
    """CUDA events on a GPU, perf_counter on the CPU: mark() now, us(a, b) or ms(a, b) later.
    (measure_torch_step.py uses this one.)"""

    def __init__(self, torch, cuda):
        self.torch, self.cuda = torch, cuda

    def mark(self):
        if self.cuda:
            e = self.torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def us(self, a, b):
        return a.elapsed_time(b) * 1e3 if self.cuda else (b - a) * 1e6

    def ms(self, a, b):
        return a.elapsed_time(b) if self.cuda else (b - a) * 1e3

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()


def _one_step(model, step_fn, clock, leaves, params):
    fwd, bwd = [], []
    hooks = []
    for name, mod in leaves:
        hooks.append(mod.register_forward_hook(
            lambda *_a, n=name: fwd.append((n, clock.mark()))))
    for name, p in params:
        def done(*_a, n=name):
            bwd.append((n, clock.mark()))
        if hasattr(p, "register_post_accumulate_grad_hook"):
            hooks.append(p.register_post_accumulate_grad_hook(done))
        else:  # torch < 2.1
            acc = p.expand_as(p).grad_fn.next_functions[0][0]
            hooks.append(acc.register_hook(done))
            hooks.append(acc)
    model.zero_grad(set_to_none=True)
    m0 = clock.mark()
    loss = step_fn()
    m1 = clock.mark()
    loss.backward()
    m2 = clock.mark()
    clock.sync()
    for h in hooks:
        if hasattr(h, "remove"):
            h.remove()
    f_seg, prev = [], m0
    for n, m in fwd:
        f_seg.append((n, clock.us(prev, m)))
        prev = m
    f_seg.append(("loss", clock.us(prev, m1)))
    b_seg, prev = [], m1
    for n, m in bwd:
        b_seg.append((n, clock.us(prev, m)))
        prev = m
    b_seg.append(("tail", clock.us(prev, m2)))
    return f_seg, b_seg


def record(model, step_fn, out_path, note="", iters=5, warmup=3, cuda=None, dtypes=None,
           batch=None):
    """Time iters steps of model, write the median trace to out_path; returns (fwd, bwd) us.
    batch: the step's per-rank batch, written as the trace's batch line (None: not written)."""
    import torch
    if cuda is None:
        cuda = next(model.parameters()).is_cuda
    clock = Clock(torch, cuda)
    leaves = [(n, m) for n, m in model.named_modules() if n and not list(m.children())]
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    for _ in range(warmup):
        model.zero_grad(set_to_none=True)
        step_fn().backward()
    clock.sync()
    runs = [_one_step(model, step_fn, clock, leaves, params) for _ in range(iters)]
    # the same structure every step (same modules, same ready order) is the norm; a step
    # that differs is dropped rather than mixed in
    ref = runs[0]
    same = [r for r in runs if [n for n, _ in r[0]] == [n for n, _ in ref[0]]
            and [n for n, _ in r[1]] == [n for n, _ in ref[1]]]
    fwd = [(n, statistics.median(r[0][i][1] for r in same)) for i, (n, _) in enumerate(ref[0])]
    bwd = [(n, statistics.median(r[1][i][1] for r in same)) for i, (n, _) in enumerate(ref[1])]
    owner = {}
    for n, _ in params:
        owner[n] = n.rsplit(".", 1)[0] if "." in n else n
    with open(out_path, "w") as f:
        f.write("gradsync_op_trace 1\n")
        f.write("# %s; torch %s; %s; median of %d steps\n" %
                (note or type(model).__name__, torch.__version__,
                 torch.cuda.get_device_name(0) if cuda else "cpu", len(same)))
        if batch:
            f.write("batch %d\n" % batch)
        for n, p in params:
            dt = (dtypes or {}).get(n, "f32")
            f.write("param %s %s %s\n" % (n, ",".join(str(d) for d in p.shape) or "1", dt))
        for n, us in fwd:
            f.write("fwd %.3f %s\n" % (us, n))
        for n, us in bwd[:-1]:
            f.write("bwd %.3f %s %s\n" % (us, owner[n], n))
        f.write("bwd %.3f %s\n" % (bwd[-1][1], bwd[-1][0]))
    return sum(u for _, u in fwd), sum(u for _, u in bwd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--iters", type=int, default=5)
    o = ap.parse_args()
    import os
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch
    import reference_models as rm
    from measure_torch_step import autocast, set_precision
    torch.manual_seed(0)
    set_precision(torch, o.precision)
    model, _, _ = rm.build(o.model, o.device, dropout=True)
    args, kwargs, loss_fn = rm.sample_batch(o.model, model, o.device, batch=o.batch, seq=o.seq)

    def step():
        with autocast(torch, o.device, o.precision):
            return loss_fn(model(*args, **kwargs))

    f, b = record(model, step, o.out, iters=o.iters, batch=o.batch,
                  note="%s batch %d%s %s" % (o.model, o.batch,
                                            "" if o.model.startswith(("resnet", "vit"))
                                            else " seq %d" % o.seq, o.precision))
    print("%s: forward %.1f us, backward %.1f us -> %s" % (o.model, f, b, o.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
