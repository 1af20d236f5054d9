"""The PyTorch reference module of every gradsync model (torchvision / transformers).

build(name, device, llama_layers=None, dropout=False) returns (module, note,
gradsync_extra_args) or raises SkipModel.
Modules are built in training mode with dropout off (dropout=True: each library's default
probabilities, as a user trains them); device may be "meta" (shapes
only, no memory), "cpu" or "cuda". Llama presets can be reduced to `llama_layers`
decoder layers (same family, same shapes per layer) to keep memory sane.
"""

import contextlib

from gradsync_plan import split_model


class SkipModel(Exception):
    """The reference for this model cannot be built here (missing package)."""


LLAMA = {
    "llama2_7b": dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                      num_attention_heads=32, num_key_value_heads=32, vocab_size=32000,
                      max_position_embeddings=4096, rope_theta=10000.0),
    "llama3_8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                      num_attention_heads=32, num_key_value_heads=8, vocab_size=128256,
                      max_position_embeddings=8192, rope_theta=500000.0),
}
BERT = {
    "bert_base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                      intermediate_size=3072),
    "bert_large": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                       intermediate_size=4096),
}
GPT2 = {
    "gpt2": dict(n_embd=768, n_layer=12, n_head=12),
    "gpt2_medium": dict(n_embd=1024, n_layer=24, n_head=16),
    "gpt2_large": dict(n_embd=1280, n_layer=36, n_head=20),
    "gpt2_xl": dict(n_embd=1600, n_layer=48, n_head=25),
}


def _device_ctx(device):
    import torch
    if hasattr(torch, "device") and hasattr(torch.device(device), "__enter__"):
        return torch.device(device)
    if device == "cpu":
        return contextlib.nullcontext()
    raise SkipModel("torch %s cannot build modules on device %s" % (torch.__version__, device))


def _transformers():
    try:
        import transformers  # noqa: F401
        return transformers
    except ImportError as e:
        raise SkipModel("transformers not importable (%s): BERT/GPT-2/Llama skipped" % e)


def build(name, device="cpu", llama_layers=None, dropout=False):
    """(module, note, extra gradsync plan arguments describing the same shape). A name
    NAME@N is NAME reduced to N decoder layers (gradsync_plan.split_model)."""
    note, extra = "", []
    name, at_layers = split_model(name)
    llama_layers = llama_layers or at_layers
    with _device_ctx(device):
        if name.startswith("resnet") or name.startswith("vit_"):
            try:
                import torchvision
            except ImportError as e:
                raise SkipModel("torchvision not importable (%s)" % e)
            model = getattr(torchvision.models, name)(weights=None)
        elif name in BERT:
            tf = _transformers()
            drop = {} if dropout else dict(hidden_dropout_prob=0.0,
                                           attention_probs_dropout_prob=0.0)
            cfg = tf.BertConfig(vocab_size=30522, max_position_embeddings=512,
                                type_vocab_size=2, **drop, **BERT[name])
            model = tf.BertForPreTraining(cfg)
        elif name in GPT2:
            tf = _transformers()
            drop = {} if dropout else dict(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
            cfg = tf.GPT2Config(vocab_size=50257, n_positions=1024, **drop, **GPT2[name])
            model = tf.GPT2LMHeadModel(cfg)
        elif name in LLAMA:
            tf = _transformers()
            kw = dict(LLAMA[name])
            if llama_layers:
                kw["num_hidden_layers"] = llama_layers
                note = "reduced to %d decoder layers" % llama_layers
                extra = ["--num-layers", str(llama_layers)]
            cfg = tf.LlamaConfig(tie_word_embeddings=False, attention_dropout=0.0, **kw)
            model = tf.LlamaForCausalLM(cfg)
        else:
            raise SkipModel("no reference module for %s" % name)
    model.train()
    return model, note, extra


def on_grad_ready(p, fn):
    """Call fn() when parameter p's gradient has been accumulated (the moment DDP's reducer
    fires); returns what the caller keeps while it wants the hook and whose members with a
    remove() it calls to drop it. torch >= 2.1: a post-accumulate-grad hook; older: the
    AccumulateGrad node's own hook (DDP's old way), the node kept alive with it.
    (record_op_trace.py has its own copy: it is meant to be copied out alone.)"""
    if hasattr(p, "register_post_accumulate_grad_hook"):
        return [p.register_post_accumulate_grad_hook(lambda *_: fn())]
    acc = p.expand_as(p).grad_fn.next_functions[0][0]
    return [acc.register_hook(lambda *_: fn()), acc]


def sample_batch(name, model, device, batch=2, seq=16):
    """(inputs kwargs or tensor, loss function of the output) for one training step."""
    import torch
    import torch.nn.functional as F
    name = split_model(name)[0]
    if name.startswith("resnet") or name.startswith("vit_"):
        x = torch.randn(batch, 3, 224, 224, device=device)
        y = torch.randint(0, 1000, (batch,), device=device)
        return (x,), {}, lambda out: F.cross_entropy(out, y)
    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (batch, seq), device=device)
    if name in BERT:
        kw = dict(input_ids=ids, labels=ids.clone(),
                  next_sentence_label=torch.zeros(batch, dtype=torch.long, device=device))
    else:
        kw = dict(input_ids=ids, labels=ids.clone())
    return (), kw, lambda out: out.loss
