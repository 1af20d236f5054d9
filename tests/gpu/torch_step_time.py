#!/usr/bin/env python3
"""PyTorch's real forward+backward time of a model on this GPU, to hold gradsync's
compute model (compute = gemm on calibrated TFLOP/s) against.

  tests/gpu/torch_step_time.py [--model resnet50|bert_large] [--batch N] [--seq-len N]
                               [--dtype bf16|f32] [--iters N]

Prints one JSON object per model: mean/min fwd and fwd+bwd milliseconds (CUDA events,
after warm-up) and the parameter count. BERT-large comes from transformers when installed,
else from torch.nn layers of the same shapes (24 x [1024 hidden, 16 heads, 4096 FFN],
30522-token embedding tied to the MLM head), noted in the output.
"""
import argparse
import json
import sys

import torch
import torch.nn as nn


class BertLargeNN(nn.Module):
    """BERT-large for masked LM from torch.nn: same parameter shapes and FLOPs."""

    def __init__(self, vocab=30522, hidden=1024, layers=24, heads=16, ffn=4096, max_pos=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.typ = nn.Embedding(2, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        layer = nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.1, activation="gelu",
                                           batch_first=True, layer_norm_eps=1e-12)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head_dense = nn.Linear(hidden, hidden)
        self.head_ln = nn.LayerNorm(hidden, eps=1e-12)
        self.decoder = nn.Linear(hidden, vocab)
        self.decoder.weight = self.tok.weight

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.ln(self.tok(ids) + self.pos(pos) + self.typ(torch.zeros_like(ids)))
        x = self.enc(x)
        x = self.head_ln(nn.functional.gelu(self.head_dense(x)))
        return self.decoder(x)


def build(name, batch, seq_len, dev):
    note = ""
    if name == "resnet50":
        import torchvision
        model = torchvision.models.resnet50()
        x = torch.randn(batch, 3, 224, 224, device=dev)
        y = torch.randint(0, 1000, (batch,), device=dev)
        loss_fn = nn.CrossEntropyLoss()
        return model.to(dev), lambda m: loss_fn(m(x), y), note
    try:
        from transformers import BertConfig, BertForMaskedLM
        model = BertForMaskedLM(BertConfig(vocab_size=30522, hidden_size=1024,
                                           num_hidden_layers=24, num_attention_heads=16,
                                           intermediate_size=4096))
        note = "transformers BertForMaskedLM"

        def step(m):
            return m(input_ids=ids, labels=labels).loss
    except ImportError:
        model = BertLargeNN()
        note = "transformers missing: torch.nn BERT-large of the same shapes"
        loss_fn = nn.CrossEntropyLoss()

        def step(m):
            return loss_fn(m(ids).reshape(-1, 30522), labels.reshape(-1))
    ids = torch.randint(0, 30522, (batch, seq_len), device=dev)
    labels = torch.randint(0, 30522, (batch, seq_len), device=dev)
    return model.to(dev), step, note


def timed(fn, iters):
    s = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    e = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        s[i].record()
        fn()
        e[i].record()
    torch.cuda.synchronize()
    return [s[i].elapsed_time(e[i]) for i in range(iters)]


def pinned_copies(dev):
    """The staged path's reference: one cudaMemcpyAsync each way between pinned host
    memory and the GPU, best of 5, per size."""
    size = 1 << 20
    while size <= 256 << 20:
        h = torch.empty(size, dtype=torch.uint8, pin_memory=True)
        d = torch.empty(size, dtype=torch.uint8, device=dev)
        res = {}
        for name, fn in (("d2h", lambda: h.copy_(d, non_blocking=True)),
                         ("h2d", lambda: d.copy_(h, non_blocking=True))):
            fn()
            res[name + "_GBps"] = size / (min(timed(fn, 5)) * 1e-3) / 1e9
        print(json.dumps({"copy_bytes": size, **res}), flush=True)
        size *= 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", action="append", choices=["resnet50", "bert_large"])
    ap.add_argument("--batch", type=int, default=0, help="0 = 32 for resnet50, 8 for bert")
    ap.add_argument("--seq-len", type=int, default=512)
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f32"])
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--copy", action="store_true",
                    help="also plain pinned-memory copies D2H and H2D, 1MiB..256MiB")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA GPU for torch", file=sys.stderr)
        return 77
    dev = torch.device("cuda")
    if a.copy:
        pinned_copies(dev)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    for name in a.model or ["resnet50", "bert_large"]:
        batch = a.batch or (32 if name == "resnet50" else 8)
        model, step, note = build(name, batch, a.seq_len, dev)
        model.train()
        amp = torch.autocast("cuda", dtype=torch.bfloat16, enabled=a.dtype == "bf16")

        def fwd():
            with torch.no_grad(), amp:
                step(model)

        def fwd_bwd():
            with amp:
                loss = step(model)
            loss.backward()

        for _ in range(5):
            fwd_bwd()
        model.zero_grad(set_to_none=False)
        f = timed(fwd, a.iters)
        fb = timed(fwd_bwd, a.iters)
        out = {
            "model": name, "batch": batch, "dtype": a.dtype, "gpu": torch.cuda.get_device_name(),
            "torch": torch.__version__, "params": sum(p.numel() for p in model.parameters()),
            "fwd_ms_mean": sum(f) / len(f), "fwd_ms_min": min(f),
            "fwd_bwd_ms_mean": sum(fb) / len(fb), "fwd_bwd_ms_min": min(fb), "note": note,
        }
        if name == "bert_large":
            out["seq_len"] = a.seq_len
        print(json.dumps(out), flush=True)
        del model
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
