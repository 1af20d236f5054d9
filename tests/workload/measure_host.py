#!/usr/bin/env python3
"""The host's own time per pass, by depth: what PyTorch eager spends issuing a step.

usage: measure_host.py --out FILE.json [--budget-s 200] [--rounds 3] [--pin 3]

Every family of the cost model at a tiny width (hidden 64, 4 heads, batch 2 x 16 tokens,
ResNets on 32 x 32 images), so each kernel is shorter than the host's call that launches it
and the GPU never holds the host back: the host's forward and backward time
(perf_counter around the calls, no sync inside, as measure_torch_step.py times them) is
the host alone, at 1, 2, 4, 8 and 16 layers (ResNet: 18 and 34, 8 and 16 basic blocks;
50, 101 and 152, 16, 33 and 50 bottlenecks), fp32 and autocast. The slope over the depth is the host's time per layer, the intercept its time
per pass outside the layers (the model's call before its first kernel, the loss, the
backward's start), both at the host's pace of the moment: the probe (us per tiny eager
op, measure_torch_step.host_probe_us) is taken before every trial, and the trials of all
cases are interleaved over the run, so a slow spell of the host moves one trial of each.
Each row names the `gradsync plan` arguments of the same shape, so the model's host time
per pass (the sum of `plan --ops`'s host column) is held against it layer for layer.
gpu_ms (CUDA events over the step) beside host_ms says whether the GPU kept up.
"""

import argparse
import json
import os
import statistics
import sys
import time

from measure_torch_step import autocast, host_probe_us, set_precision

WIDTH = dict(hidden=64, heads=4, ffn=256, vocab=1024, batch=2, seq=16, image=32)
DEPTHS = (1, 2, 4, 8, 16)
# a ResNet's depth is its residual blocks; the slope is over the models of one block kind
RESNETS = {"resnet18": ("resnet_basic", 8), "resnet34": ("resnet_basic", 16),
           "resnet50": ("resnet_bottleneck", 16), "resnet101": ("resnet_bottleneck", 33),
           "resnet152": ("resnet_bottleneck", 50)}


def group(family):
    """The family whose depths make one line: a ResNet's block kind, else itself."""
    return RESNETS[family][0] if family in RESNETS else family


def plan_args(family, layers, kv):
    """gradsync plan's arguments for the same module."""
    w = WIDTH
    if family.startswith("resnet"):
        return ["--model", family, "--batch", str(w["batch"]), "--image-size", str(w["image"])]
    a = ["--model", family, "--batch", str(w["batch"]), "--num-layers", str(layers),
         "--hidden-size", str(w["hidden"]), "--num-heads", str(w["heads"]),
         "--ffn-size", str(w["ffn"])]
    if family == "vit_b_16":
        return a + ["--image-size", str(w["image"])]
    a += ["--seq-len", str(w["seq"]), "--vocab-size", str(w["vocab"])]
    return a + (["--num-kv-heads", str(kv)] if kv else [])


def build(torch, family, layers, kv, dev):
    """(module, forward(model) -> loss) at the tiny width."""
    import torch.nn.functional as F
    w = WIDTH
    if family.startswith("resnet") or family == "vit_b_16":
        import torchvision
        if family == "vit_b_16":
            m = torchvision.models.VisionTransformer(
                image_size=w["image"], patch_size=16, num_layers=layers, num_heads=w["heads"],
                hidden_dim=w["hidden"], mlp_dim=w["ffn"])
        else:
            m = getattr(torchvision.models, family)(weights=None)
        x = torch.randn(w["batch"], 3, w["image"], w["image"], device=dev)
        y = torch.randint(0, 1000, (w["batch"],), device=dev)
        return m.to(dev).train(), lambda mod: F.cross_entropy(mod(x), y)
    import transformers as tf
    ids = torch.randint(0, w["vocab"], (w["batch"], w["seq"]), device=dev)
    if family == "bert_base":
        cfg = tf.BertConfig(vocab_size=w["vocab"], hidden_size=w["hidden"],
                            num_hidden_layers=layers, num_attention_heads=w["heads"],
                            intermediate_size=w["ffn"], max_position_embeddings=64,
                            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
        m = tf.BertForPreTraining(cfg)
        nsl = torch.zeros(w["batch"], dtype=torch.long, device=dev)
        return m.to(dev).train(), lambda mod: mod(input_ids=ids, labels=ids,
                                                  next_sentence_label=nsl).loss
    if family == "gpt2":
        cfg = tf.GPT2Config(vocab_size=w["vocab"], n_positions=64, n_embd=w["hidden"],
                            n_layer=layers, n_head=w["heads"], resid_pdrop=0.0,
                            embd_pdrop=0.0, attn_pdrop=0.0)
        m = tf.GPT2LMHeadModel(cfg)
    else:
        cfg = tf.LlamaConfig(vocab_size=w["vocab"], hidden_size=w["hidden"],
                             intermediate_size=w["ffn"], num_hidden_layers=layers,
                             num_attention_heads=w["heads"], num_key_value_heads=kv,
                             max_position_embeddings=64, tie_word_embeddings=False,
                             attention_dropout=0.0)
        m = tf.LlamaForCausalLM(cfg)
    return m.to(dev).train(), lambda mod: mod(input_ids=ids, labels=ids).loss


def cases():
    out = []
    for prec in ("amp_bf16", "fp32"):
        for fam, kv in (("bert_base", 0), ("gpt2", 0), ("vit_b_16", 0), ("llama2_7b", 4),
                        ("llama3_8b", 1)):
            out += [(fam, n, kv, prec) for n in DEPTHS]
        out += [(r, blocks, 0, prec) for r, (_, blocks) in RESNETS.items()]
    return out


def trial(torch, model, fwd, prec, iters, warmup, dev):
    """Medians of iters steps: host forward ms, host backward ms, GPU step ms (0 on a CPU)."""
    hf, hb, g = [], [], []
    cuda = dev == "cuda"
    if cuda:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for i in range(warmup + iters):
        model.zero_grad(set_to_none=True)
        if cuda:
            torch.cuda.synchronize()
            a.record()
        t0 = time.perf_counter()
        with autocast(torch, dev, prec):
            loss = fwd(model)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        if cuda:
            b.record()
            torch.cuda.synchronize()
        if i >= warmup:
            hf.append((t1 - t0) * 1e3)
            hb.append((t2 - t1) * 1e3)
            g.append(a.elapsed_time(b) if cuda else 0.0)
    return [round(statistics.median(x), 4) for x in (hf, hb, g)]


def call_costs(torch, dev, n=400):
    """us per call of single eager calls in a tight loop (median of 5 runs of n), beside the
    probe: what a view, a module's __call__ and autocast's casts add to an op's host time."""
    import torch.nn.functional as F
    x = torch.randn(32, 64, device=dev)
    lin = torch.nn.Linear(64, 64).to(dev)
    ident = torch.nn.Identity()
    calls = {"add_": lambda: x.add_(0), "mul": lambda: x * x, "view": lambda: x.view(-1),
             "transpose": lambda: x.transpose(0, 1), "module_identity": lambda: ident(x),
             "linear_module": lambda: lin(x),
             "linear_function": lambda: F.linear(x, lin.weight, lin.bias)}
    out = {}
    for prec in ("fp32", "amp_bf16"):
        for name, fn in calls.items():
            runs = []
            for _ in range(5):
                with autocast(torch, dev, prec):
                    t = time.perf_counter()
                    for _ in range(n):
                        fn()
                    runs.append((time.perf_counter() - t) * 1e6 / n)
            out["%s.%s" % (name, prec)] = round(statistics.median(runs), 3)
    if dev == "cuda":
        torch.cuda.synchronize()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=12)
    ap.add_argument("--pin", type=int, default=3)
    ap.add_argument("--only", default="", help="families, comma separated (all)")
    o = ap.parse_args()
    import torch
    if o.pin >= 0 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {o.pin % os.cpu_count()})
        torch.set_num_threads(1)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    t_start = time.time()
    built, rows = {}, []
    keys, skipped = [], {}
    for key in cases():
        fam, n, kv, prec = key
        if (o.only and fam not in o.only.split(",")) or fam in skipped:
            continue
        if (fam, n, kv) not in built:
            try:
                built[(fam, n, kv)] = build(torch, fam, n, kv, dev)
            except ImportError as e:  # no transformers / torchvision here: said, not hidden
                skipped[fam] = str(e)
                print("measure_host: %s skipped (%s)" % (fam, e), file=sys.stderr)
                continue
        keys.append(key)
        rows.append({"family": fam, "group": group(fam), "layers": n, "precision": prec,
                     "plan": plan_args(fam, n, kv) + ["--precision", prec], "trials": []})
    for r in range(o.rounds):
        for row, key in zip(rows, keys):
            fam, n, kv, prec = key
            set_precision(torch, prec)
            model, fwd = built[(fam, n, kv)]
            probe = host_probe_us(torch, dev)
            row["trials"].append(trial(torch, model, fwd, prec, o.iters, 3, dev) + [probe])
        print("round %d done at %.0f s" % (r + 1, time.time() - t_start), flush=True)
        spent = time.time() - t_start
        if spent + spent / (r + 1) > o.budget_s:  # another round would overrun
            break
    doc_calls = [dict(call_costs(torch, dev), probe_us=host_probe_us(torch, dev))
                 for _ in range(3)]
    for row in rows:
        t = row["trials"]
        for i, k in enumerate(("host_fwd_ms", "host_bwd_ms", "gpu_ms", "probe_us")):
            row[k] = round(statistics.median(x[i] for x in t), 4)
    doc = {"width": WIDTH, "torch": torch.__version__, "rows": rows, "calls": doc_calls,
           "skipped": skipped,
           "gpu": torch.cuda.get_device_name(0) if dev == "cuda" else "none"}
    try:
        import transformers
        doc["transformers"] = transformers.__version__
    except ImportError:
        pass
    with open(o.out, "w") as f:
        json.dump(doc, f, indent=1)
    for row in rows:
        print("%-10s %2d %-8s host %7.3f + %7.3f ms  gpu %7.3f ms  probe %.2f" % (
            row["family"], row["layers"], row["precision"], row["host_fwd_ms"],
            row["host_bwd_ms"], row["gpu_ms"], row["probe_us"]))
    for c in doc_calls:
        print(" ".join("%s %.2f" % kv for kv in sorted(c.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
