"""Transformer blocks exported as users export them (issue 15): torch.onnx.export, the dynamo
exporter at opset 23 (which writes the Attention op for scaled_dot_product_attention) and the
TorchScript exporter at opset 17 (which spells attention out in MatMul, Softmax and friends).

    python -m venv /tmp/export && /tmp/export/bin/pip install torch onnx onnxscript   # not aotc dependencies
    /tmp/export/bin/python examples/export_transformers.py tests/models

writes, into the given directory:

- vit_tiny.onnx: a ViT-style classifier on 3 x 32 x 32 images: a 4 x 4 patch embedding (Conv) to
  32 features, a class token and learned positions, two pre-norm blocks (LayerNorm, 4-head attention,
  GELU MLP),
  a Linear head of 10 classes; dynamo exporter, opset 23 (Attention);
- vit_tiny_ts.onnx: the same model through the TorchScript exporter, opset 17 (attention as
  MatMul / Softmax; LayerNormalization);
- gpt_tiny.onnx: a two-layer causal decoder (token and position embeddings, causal attention, tied
  head) on 16 tokens; dynamo, opset 23;
- gpt_tiny_cache.onnx: its decoding step, one token with the key/value cache of the 15 before it
  as graph inputs and the grown cache as graph outputs, grouped-query attention (4 query heads,
  2 key/value heads); dynamo, opset 23;
- encoder2.onnx: nn.TransformerEncoder with two layers (batch_first, 32 features, 4 heads, 20 tokens),
  TorchScript exporter, opset 17;
- convnext_block.onnx: a ConvNeXt block (7 x 7 depthwise conv, channels-last LayerNorm, GELU MLP,
  layer scale, residual) on 1 x 32 x 16 x 16; dynamo, opset 23;
- mobilevit_block.onnx: a MobileViT block (local convs, 2 x 2 patches unfolded into sequences, a
  transformer block with Attention, folded back, fused with the input) on 1 x 16 x 16 x 16; dynamo,
  opset 23;
- bert_tiny.onnx (with `bert` on the command line; needs `pip install transformers`): Hugging Face's
  BertModel with a small config (vocabulary 128, 32 features, 2 layers of 4 heads, feed-forward 64)
  taking input_ids, attention_mask and token_type_ids, exported with batch and sequence dynamic (as users
  export it for onnxruntime's transformer optimizer: examples/optimize_transformers.py), then fixed to 2 x 16
  by onnxruntime's tool for fixed-shape deployment (onnxruntime.tools.onnx_model_utils.make_dim_param_fixed,
  what `python -m onnxruntime.tools.make_dynamic_shape_fixed` runs); TorchScript, opset 17.

- gpt2_tiny_past_ort.onnx (with `gpt2`; needs `pip install 'transformers==4.36.2'`, the API onnxruntime's
  converter calls): Hugging Face's GPT2LMHeadModel with a small config (vocabulary 128, 32 features, 2 layers of
  4 heads) through onnxruntime's own GPT-2 converter with its optimizer
  (`python -m onnxruntime.transformers.models.gpt2.convert_to_onnx -m DIR -o -p fp32`, its parity check cut
  to 10 cases), which writes
  EmbedLayerNormalization with position_ids, Attention unidirectional with the [batch, total] attention_mask
  and past/present per layer, FastGelu and SkipLayerNormalization; fixed to one decoding step (batch 2,
  1 token, 7 past) as for bert_tiny.onnx.

Weights are seeded random: the files test the compiler, not a trained model.

    python examples/export_transformers.py tests/models bert    # bert_tiny.onnx only
    python examples/export_transformers.py tests/models gpt2    # gpt2_tiny_past_ort.onnx only
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx
import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812 - torch's own spelling


class SelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, kv_heads: int | None = None, causal: bool = False):
        super().__init__()
        self.heads, self.kv_heads, self.causal = heads, kv_heads or heads, causal
        self.head_dim = dim // heads
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * self.kv_heads * self.head_dim)
        self.proj = nn.Linear(dim, dim)

    def split(self, x: torch.Tensor, heads: int) -> torch.Tensor:
        b, n, _ = x.shape
        return x.reshape(b, n, heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor] | None = None):
        q = self.split(self.q(x), self.heads)
        k, v = (self.split(t, self.kv_heads) for t in self.kv(x).chunk(2, dim=-1))
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        gqa = self.kv_heads != self.heads
        a = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal and past is None, enable_gqa=gqa)
        b, _, n, _ = a.shape
        return self.proj(a.transpose(1, 2).reshape(b, n, -1)), (k, v)


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, kv_heads: int | None = None, causal: bool = False):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads, kv_heads, causal)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor, past=None):
        a, cache = self.attn(self.n1(x), past)
        x = x + a
        return x + self.mlp(self.n2(x)), cache


class ViT(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4, depth: int = 2, classes: int = 10):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, 4, stride=4)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, 65, dim) * 0.02)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        x = self.patch(img).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        for blk in self.blocks:
            x, _ = blk(x)
        return self.head(self.norm(x[:, 0]))


class GPT(nn.Module):
    def __init__(self, vocab: int = 96, dim: int = 32, heads: int = 4, kv_heads: int = 4, depth: int = 2,
                 context: int = 16):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(context, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, kv_heads, causal=True) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)

    def forward(self, tokens: torch.Tensor, positions: torch.Tensor, *past: torch.Tensor):
        x = self.tok(tokens) + self.pos(positions)
        present = []
        for k, blk in enumerate(self.blocks):
            x, cache = blk(x, (past[2 * k], past[2 * k + 1]) if past else None)
            present += cache
        logits = self.norm(x) @ self.tok.weight.t()
        return (logits, *present) if past else logits


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int = 32):
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.pw1, self.pw2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(torch.full((dim,), 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.gamma * self.pw2(F.gelu(self.pw1(self.norm(y))))
        return x + y.permute(0, 3, 1, 2)


class MobileViTBlock(nn.Module):
    """Local 3 x 3 conv, 1 x 1 to the transformer width, 2 x 2 patches unfolded into sequences
    (reshape and permute), a transformer block over each pixel position's patch sequence, folded
    back, 1 x 1 back, concatenated with the input, a 3 x 3 fusion conv."""

    def __init__(self, channels: int = 16, dim: int = 32, patch: int = 2):
        super().__init__()
        self.patch = patch
        self.local = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.SiLU(), nn.Conv2d(channels, dim, 1))
        self.block = Block(dim, 4)
        self.back = nn.Conv2d(dim, channels, 1)
        self.fuse = nn.Sequential(nn.Conv2d(2 * channels, channels, 3, padding=1), nn.SiLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.local(x)
        b, d, h, w = y.shape
        p = self.patch
        y = y.reshape(b, d, h // p, p, w // p, p).permute(0, 3, 5, 2, 4, 1).reshape(b * p * p, (h // p) * (w // p), d)
        y, _ = self.block(y)
        y = y.reshape(b, p, p, h // p, w // p, d).permute(0, 5, 3, 1, 4, 2).reshape(b, d, h, w)
        return self.fuse(torch.cat([x, self.back(y)], dim=1))


def save(model: nn.Module, args: tuple, path: Path, *, dynamo: bool, opset: int, names: tuple = (),
         outputs: tuple = ()) -> None:
    model.eval()
    kw = {"input_names": list(names) or None, "output_names": list(outputs) or None}
    with torch.no_grad():
        if dynamo:
            torch.onnx.export(model, args, str(path), dynamo=True, opset_version=opset, external_data=False, **kw)
        else:
            torch.onnx.export(model, args, str(path), dynamo=False, opset_version=opset, **kw)
    m = onnx.load(str(path))
    ops = sorted({n.op_type for n in m.graph.node})
    print(f"wrote {path} ({path.stat().st_size // 1024} KB): {', '.join(ops)}")


def bert_tiny(out: Path) -> None:
    """Hugging Face's BertModel (eager attention, no pooler), its layer norms and biases drawn at random
    too (an untrained model's are ones and zeros, which the optimizer would merge), exported as its
    documentation shows (named inputs, batch and sequence dynamic), then fixed to 2 x 16."""
    here = Path(__file__).resolve().parent  # examples/transformers.py would shadow the package
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    from transformers import BertConfig, BertModel

    torch.manual_seed(51)
    config = BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=32, type_vocab_size=2,
                        attn_implementation="eager")
    bert = BertModel(config, add_pooling_layer=False).eval()
    with torch.no_grad():
        for name, p in bert.named_parameters():
            if name.endswith("LayerNorm.weight"):
                p.uniform_(0.5, 1.5)
            elif name.endswith("bias"):
                p.normal_(0.0, 0.1)

    class Encoder(nn.Module):  # BertModel's forward takes keywords; the export passes positions
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    ids = torch.randint(0, 128, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.int64)
    mask[1, 11:] = 0
    segments = (torch.arange(16) >= 8).long().expand(2, 16)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    path = out / "bert_tiny.onnx"
    with torch.no_grad():
        torch.onnx.export(Encoder().eval(), (ids, mask, segments), str(path), dynamo=False, opset_version=17,
                          input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes={k: {0: "batch", 1: "sequence"} for k in [*names, "last_hidden_state"]})
    _fixed(path, {"batch": 2, "sequence": 16})
    print(f"wrote {path} ({path.stat().st_size // 1024} KB)")


def _fixed(path: Path, dims: dict[str, int]) -> None:
    """The model at `path` with its named dims fixed (onnxruntime's make_dim_param_fixed), saved in place."""
    from onnxruntime.tools.onnx_model_utils import fix_output_shapes, make_dim_param_fixed

    model = onnx.load(str(path))
    for name, value in dims.items():
        make_dim_param_fixed(model.graph, name, value)
    fix_output_shapes(model)
    onnx.save(model, str(path))


def gpt2_tiny(out: Path) -> None:
    """GPT-2 as onnxruntime's GPT-2 converter exports and optimizes it (its documented path for GPT-2 with
    past state), from a model saved with save_pretrained; layer norms and biases drawn at random."""
    import shutil
    import subprocess
    import tempfile

    here = Path(__file__).resolve().parent  # examples/transformers.py would shadow the package
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(52)
    gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=128, n_embd=32, n_layer=2, n_head=4, n_positions=64))
    with torch.no_grad():
        for name, p in gpt2.named_parameters():
            if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
                p.uniform_(0.5, 1.5)
            elif name.endswith("bias"):
                p.normal_(0.0, 0.1)
    path = out / "gpt2_tiny_past_ort.onnx"
    with tempfile.TemporaryDirectory() as tmp:
        gpt2.save_pretrained(Path(tmp) / "tiny_gpt2")
        subprocess.run([sys.executable, "-m", "onnxruntime.transformers.models.gpt2.convert_to_onnx", "-m",
                        "./tiny_gpt2", "--output", "gpt2.onnx", "-o", "-p", "fp32", "--cache_dir", "cache",
                        "--test_cases", "10", "--test_runs", "1"],
                       cwd=tmp, check=True, capture_output=True)
        shutil.copy(Path(tmp) / "gpt2.onnx", path)
    _fixed(path, {"batch_size": 2, "seq_len": 1, "past_seq_len": 7, "total_seq_len": 8})
    print(f"wrote {path} ({path.stat().st_size // 1024} KB)")


def main(out: Path) -> None:
    torch.manual_seed(15)
    out.mkdir(parents=True, exist_ok=True)
    vit = ViT()
    img = torch.randn(1, 3, 32, 32)
    save(vit, (img,), out / "vit_tiny.onnx", dynamo=True, opset=23, names=("image",), outputs=("logits",))
    save(vit, (img,), out / "vit_tiny_ts.onnx", dynamo=False, opset=17, names=("image",), outputs=("logits",))
    gpt = GPT()
    tokens, positions = torch.randint(0, 96, (1, 16)), torch.arange(16)[None]
    save(gpt, (tokens, positions), out / "gpt_tiny.onnx", dynamo=True, opset=23, names=("tokens", "positions"),
         outputs=("logits",))
    gqa = GPT(kv_heads=2)
    past = tuple(torch.randn(1, 2, 15, 8) for _ in range(4))
    names = ("token", "position", "past_k0", "past_v0", "past_k1", "past_v1")
    save(gqa, (tokens[:, :1], torch.tensor([[15]]), *past), out / "gpt_tiny_cache.onnx", dynamo=True, opset=23,
         names=names, outputs=("logits", "present_k0", "present_v0", "present_k1", "present_v1"))
    torch.backends.mha.set_fastpath_enabled(False)  # the fused fast path has no ONNX export
    layer = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, batch_first=True, dropout=0.0)
    encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    save(encoder, (torch.randn(1, 20, 32),), out / "encoder2.onnx", dynamo=False, opset=17, names=("x",),
         outputs=("y",))
    save(ConvNeXtBlock(), (torch.randn(1, 32, 16, 16),), out / "convnext_block.onnx", dynamo=True, opset=23,
         names=("x",), outputs=("y",))
    save(MobileViTBlock(), (torch.randn(1, 16, 16, 16),), out / "mobilevit_block.onnx", dynamo=True, opset=23,
         names=("x",), outputs=("y",))


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/models")
    if sys.argv[2:] in (["bert"], ["gpt2"]):
        target.mkdir(parents=True, exist_ok=True)
        (bert_tiny if sys.argv[2] == "bert" else gpt2_tiny)(target)
    else:
        main(target)
