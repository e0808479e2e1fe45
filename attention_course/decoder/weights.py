"""A decoder checkpoint's learned parameters, read from safetensors (book/decoding.ipynb).

Hugging Face stores each projection as a torch `Linear` weight of shape
(out, in); they are transposed once here so that, as everywhere in this
course, a projection is the row-vector product `x @ w`. bfloat16 checkpoints
(most published ones) are widened to float32 exactly through `ml_dtypes`: a
bfloat16 is the top 16 bits of a float32. Every tensor the configuration
implies (`layout.checkpoint_shapes`) must be there, and every tensor in the
file must be used: a checkpoint with parts this forward pass would ignore is
refused rather than run with wrong numbers.
"""

from __future__ import annotations

import json
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np

from . import checkpoint_gemma3n
from . import checkpoint_minimax_llama4 as minimax_llama4
from .config import DecoderConfig, UnsupportedConfigError
from .delta import DeltaWeights, canonical_names, read_delta_weights
from .layout import checkpoint_shapes

_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": ml_dtypes.bfloat16,
           "F8_E4M3": ml_dtypes.float8_e4m3fn, "F8_E5M2": ml_dtypes.float8_e5m2, "F8_E8M0": ml_dtypes.float8_e8m0fnu,
           "I64": np.int64, "I32": np.int32}  # integer tables: DeepSeek-V4's token -> experts map (tid2eid)
"""safetensors dtype names and the NumPy dtype that reads them; BF16 is then widened to float32, FP8 kept as stored
for `fp8.dequantize_fp8` (it needs its block scales)."""


@dataclass(frozen=True)
class LatentAttention:
    """Multi-head latent attention's projections (DeepSeek-V3), row-vector convention: y = x @ w + b."""

    w_kv_a: np.ndarray
    """(d_model, r + d_rope) kv_a_proj_with_mqa: the latent (first r columns) and the shared RoPE key."""
    kv_a_norm: np.ndarray
    """(r,) RMSNorm weight of the latent."""
    w_kv_b: np.ndarray
    """(r, h * (d_nope + d_v)) kv_b_proj: head i's key part and value, rebuilt from the latent."""
    w_q: np.ndarray | None = None
    """(d_model, h * (d_nope + d_rope)) q_proj, when q_lora_rank is null."""
    w_q_a: np.ndarray | None = None
    """(d_model, q_lora_rank) q_a_proj, the low-rank query path."""
    q_a_norm: np.ndarray | None = None
    """(q_lora_rank,) RMSNorm weight between q_a and q_b."""
    w_q_b: np.ndarray | None = None
    """(q_lora_rank, h * (d_nope + d_rope)) q_b_proj."""
    b_q_a: np.ndarray | None = None
    """(q_lora_rank,) or None (attention_bias)."""
    b_kv_a: np.ndarray | None = None
    """(r + d_rope,) or None (attention_bias)."""

    def absorbed(self, n_heads: int, d_nope: int) -> tuple[np.ndarray, np.ndarray]:
        """(W_UK (h, r, d_nope), W_UV (h, r, d_v)): w_kv_b split per head into its key and value parts."""
        r = self.w_kv_b.shape[0]
        per_head = self.w_kv_b.reshape(r, n_heads, -1).transpose(1, 0, 2)  # (r, h*(dn+dv)) -> (h, r, dn + dv)
        return per_head[..., :d_nope], per_head[..., d_nope:]


@dataclass(frozen=True)
class Indexer:
    """DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5), row-vector convention: y = x @ w."""

    w_q: np.ndarray
    """(q_lora_rank, h_I * d_I) wq_b: the indexer's queries, from the latent attention's normed low-rank query."""
    w_k: np.ndarray
    """(d_model, d_I) wk: one indexer key per token."""
    k_norm: np.ndarray
    """(d_I,) the gain of the LayerNorm on that key."""
    k_norm_bias: np.ndarray
    """(d_I,) its bias."""
    w_weights: np.ndarray
    """(d_model, h_I) weights_proj: each query's weight for each indexer head."""


@dataclass(frozen=True)
class Experts:
    """A mixture of experts' parameters, stacked over the experts: expert e uses index e of each."""

    router: np.ndarray
    """(d_model, E) router weight: a token's score for each expert."""
    w_gate: np.ndarray
    """(E, d_model, d_expert) each expert's gate projection."""
    w_up: np.ndarray
    """(E, d_model, d_expert) each expert's up projection."""
    w_down: np.ndarray
    """(E, d_expert, d_model) each expert's down projection."""
    router_bias: np.ndarray | None = None
    """(E,) gpt-oss: added to the router's logits."""
    correction_bias: np.ndarray | None = None
    """(E,) DeepSeek: e_score_correction_bias, added to the scores only to choose the experts."""
    b_gate: np.ndarray | None = None
    """(E, d_expert) gpt-oss."""
    b_up: np.ndarray | None = None
    """(E, d_expert) gpt-oss."""
    b_down: np.ndarray | None = None
    """(E, d_model) gpt-oss."""
    shared: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    """DeepSeek's shared experts as one MLP: (gate (d_model, s), up (d_model, s), down (s, d_model))."""
    shared_gate: np.ndarray | None = None
    """(d_model, 1) Qwen3-Next: the shared expert's output is multiplied by sigmoid(x @ shared_gate)."""


@dataclass(frozen=True)
class DecoderLayer:
    """The learned parameters of one decoder layer (row-vector convention: y = x @ w + b)."""

    attn_norm: np.ndarray | None
    """(d_model,) RMSNorm weight before attention (input_layernorm); None: OLMo hybrid's softmax layers."""
    mlp_norm: np.ndarray | None
    """(d_model,) RMSNorm weight before the feed-forward layer (post_attention_layernorm; Gemma:
    pre_feedforward_layernorm); None: OLMo hybrid's softmax layers."""
    w_o: np.ndarray | None
    """(h_q * d_v, d_model) output projection that mixes the heads (None in a delta-rule layer)."""
    w_q: np.ndarray | None = None
    """(d_model, h_q * d) query projection; head i uses columns i*d:(i+1)*d. None with latent attention."""
    w_k: np.ndarray | None = None
    """(d_model, h_kv * d) key projection."""
    w_v: np.ndarray | None = None
    """(d_model, h_kv * d) value projection."""
    w_gate: np.ndarray | None = None
    """(d_model, d_ff) gate projection of the dense MLP (None in a mixture-of-experts layer)."""
    w_up: np.ndarray | None = None
    """(d_model, d_ff) up projection."""
    w_down: np.ndarray | None = None
    """(d_ff, d_model) down projection."""
    b_q: np.ndarray | None = None
    """(h_q * d,) or None."""
    b_k: np.ndarray | None = None
    """(h_kv * d,) or None."""
    b_v: np.ndarray | None = None
    """(h_kv * d,) or None."""
    b_o: np.ndarray | None = None
    """(d_model,) or None."""
    b_gate: np.ndarray | None = None
    """(d_ff,) or None."""
    b_up: np.ndarray | None = None
    """(d_ff,) or None."""
    b_down: np.ndarray | None = None
    """(d_model,) or None."""
    q_norm: np.ndarray | None = None
    """(d,) QK-norm's RMSNorm weight for every query head (Qwen3, Gemma 3)."""
    k_norm: np.ndarray | None = None
    """(d,) the same for every key head."""
    sinks: np.ndarray | None = None
    """(h_q,) one sink logit per head (gpt-oss)."""
    post_attn_norm: np.ndarray | None = None
    """(d_model,) Gemma: RMSNorm weight on the attention's output (post_attention_layernorm)."""
    post_mlp_norm: np.ndarray | None = None
    """(d_model,) Gemma: RMSNorm weight on the MLP's output (post_feedforward_layernorm)."""
    latent: LatentAttention | None = None
    """Multi-head latent attention's projections (DeepSeek-V3), instead of w_q, w_k, w_v."""
    indexer: Indexer | None = None
    """The lightning indexer that picks the keys the latent attention reads (DeepSeek-V3.2, GLM-5), or None."""
    experts: Experts | None = None
    """The mixture of experts, instead of the dense MLP."""
    w_attn_gate: np.ndarray | None = None
    """(d_model, h_q * d_v) gated attention (Qwen3-Next, Qwen3.5): the output is multiplied by sigmoid(x @ w)
    before w_o (the files store it inside q_proj, each head's query followed by its gate)."""
    b_attn_gate: np.ndarray | None = None
    """(h_q * d_v,) its bias (attention_bias), or None."""
    delta: DeltaWeights | None = None
    """A delta-rule layer's parameters (Qwen3-Next, Qwen3.5, OLMo hybrid, Kimi Linear), instead of attention's."""


@dataclass(frozen=True)
class DecoderWeights:
    """Every learned parameter of a decoder."""

    config: DecoderConfig
    """Sizes and options."""
    embeddings: np.ndarray
    """(vocab_size, d_model) one row per token (embed_tokens)."""
    layers: tuple[DecoderLayer, ...]
    """The L layers, first to last."""
    final_norm: np.ndarray
    """(d_model,) RMSNorm weight after the last layer (model.norm)."""
    lm_head: np.ndarray
    """(d_model, vocab_size) output projection: embeddings.T when the two are tied."""
    gemma3n: checkpoint_gemma3n.Gemma3nExtras | None = None
    """Gemma 3n's AltUp, LAuReL and per-layer input tensors; None for the other families."""


def read_safetensors(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Every tensor of a .safetensors file as a NumPy array (bfloat16 widened to float32, exactly).

    The format is an 8-byte little-endian header length, a JSON header (each
    tensor's dtype, shape and byte offsets) and the bytes. Each tensor is read
    on its own: loading a bfloat16 checkpoint takes its float32 size in memory
    plus its largest tensor's bytes, not the whole file besides.
    """
    path = Path(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise ValueError(f"{path} is not a safetensors file: shorter than its 8-byte header length")
        size = struct.unpack("<Q", head)[0]
        try:
            header = json.loads(f.read(size))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise ValueError(f"{path} is not a safetensors file: its header is not JSON ({err})") from None
        length = f.seek(0, os.SEEK_END)
        return {name: _tensor(f, length, 8 + size, name, spec, path) for name, spec in header.items()
                if name != "__metadata__"}


def _tensor(f, length: int, start: int, name: str, spec: dict, path: Path) -> np.ndarray:
    """One tensor read from the open file (bfloat16 widened to float32)."""
    dtype = spec.get("dtype")
    if dtype not in _DTYPES:
        raise UnsupportedConfigError(f"{path}: tensor {name!r} is stored as {dtype}, which is not implemented "
                                     f"(only {', '.join(_DTYPES)})")
    item = np.dtype(_DTYPES[dtype]).newbyteorder("<")
    shape, (begin, end) = tuple(spec["shape"]), spec["data_offsets"]
    count = int(np.prod(shape, dtype=np.int64))
    if end - begin != count * item.itemsize or start + end > length:
        raise ValueError(f"{path}: tensor {name!r} of shape {shape} and dtype {dtype} does not fit its byte range "
                         f"[{begin}, {end})")
    stored = np.empty(shape, dtype=item)  # (shape) as stored, little-endian
    f.seek(start + begin)
    if f.readinto(stored.reshape(-1).view(np.uint8)) != stored.nbytes:  # its bytes, straight from the file
        raise ValueError(f"{path}: tensor {name!r} is cut short: the file ends inside it")
    if dtype == "BF16":
        return stored.astype(np.float32)  # exact: every bfloat16 is a float32
    return stored.astype(item.newbyteorder("="), copy=False)  # native byte order (a no-op on little-endian machines)


def read_checkpoint(folder: str | os.PathLike) -> dict[str, np.ndarray]:
    """The tensors of model.safetensors, or of every shard model.safetensors.index.json lists."""
    folder = Path(folder)
    single, index = folder / "model.safetensors", folder / "model.safetensors.index.json"
    if single.is_file():
        return read_safetensors(single)
    if index.is_file():
        shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        tensors = {}
        for shard in shards:
            tensors.update(read_safetensors(folder / shard))
        return tensors
    raise FileNotFoundError(f"{folder} holds neither model.safetensors nor model.safetensors.index.json")


def _frozen(arr: np.ndarray, dtype, copy: bool = True) -> np.ndarray:
    out = np.asarray(arr).astype(dtype, copy=copy)  # a copy the model owns, unless the arrays are ours already
    out.flags.writeable = False  # shared model parameters: nobody may change them by accident
    return out


class _Taker:
    """Takes tensors by name from a checkpoint, checking each shape against `checkpoint_shapes`."""

    def __init__(self, tensors: dict[str, np.ndarray], config: DecoderConfig, dtype, source: str, copy: bool = True):
        self.tensors, self.dtype, self.source, self.copy = tensors, dtype, source, copy
        self.shapes = checkpoint_shapes(config)
        self.offset = config.norm_offset
        self.used: set[str] = set()

    def raw(self, name: str) -> np.ndarray:
        if name not in self.tensors:
            raise UnsupportedConfigError(f"{self.source}: the tensor {name!r} that config.json implies is missing")
        shape = self.shapes[name]
        if tuple(self.tensors[name].shape) != shape:
            raise UnsupportedConfigError(f"{self.source}: {name!r} has shape {tuple(self.tensors[name].shape)}; "
                                         f"config.json implies {shape}")
        self.used.add(name)
        return self.tensors[name]

    def frozen(self, arr: np.ndarray) -> np.ndarray:
        """An array built from taken tensors (a stack, a slice), in the model's dtype and read-only."""
        return _frozen(arr, self.dtype, copy=False)

    def get(self, name: str) -> np.ndarray | None:
        """The tensor as stored (a bias, a sink, a stacked expert tensor), or None if the config implies none."""
        return _frozen(self.raw(name), self.dtype, self.copy) if name in self.shapes else None

    def linear(self, name: str) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(weight (in, out), bias or None), or (None, None) if the config implies no such projection."""
        if name + ".weight" not in self.shapes:
            return None, None
        w = _frozen(self.raw(name + ".weight").T, self.dtype, self.copy)  # (out, in) -> (in, out)
        return w, self.get(name + ".bias")

    def norm(self, name: str, offset: float | None = None) -> np.ndarray | None:
        """An RMSNorm weight, plus Gemma's 1 (its norm multiplies by 1 + weight)."""
        if name + ".weight" not in self.shapes:
            return None
        w = np.asarray(self.raw(name + ".weight"), dtype=self.dtype)
        return _frozen(w + (self.offset if offset is None else offset), self.dtype)


def _latent(t: _Taker, a: str) -> LatentAttention:
    (w_q, _), (w_q_a, b_q_a), (w_q_b, _) = t.linear(a + "q_proj"), t.linear(a + "q_a_proj"), t.linear(a + "q_b_proj")
    w_kv_a, b_kv_a = t.linear(a + "kv_a_proj_with_mqa")
    return LatentAttention(w_kv_a=w_kv_a, b_kv_a=b_kv_a, kv_a_norm=t.norm(a + "kv_a_layernorm"),
                           w_kv_b=t.linear(a + "kv_b_proj")[0], w_q=w_q, w_q_a=w_q_a, b_q_a=b_q_a,
                           q_a_norm=t.norm(a + "q_a_layernorm"), w_q_b=w_q_b)


def _indexer(t: _Taker, a: str) -> Indexer | None:
    """The indexer under the prefix a ("model.layers.i.self_attn."), or None for a layer without one."""
    if a + "indexer.wq_b.weight" not in t.shapes:
        return None
    return Indexer(w_q=t.linear(a + "indexer.wq_b")[0], w_k=t.linear(a + "indexer.wk")[0],
                   k_norm=t.get(a + "indexer.k_norm.weight"), k_norm_bias=t.get(a + "indexer.k_norm.bias"),
                   w_weights=t.linear(a + "indexer.weights_proj")[0])


def _experts(t: _Taker, c: DecoderConfig, m: str) -> Experts:
    """A layer's experts under the prefix m ("model.layers.i.mlp.")."""
    if c.moe.router == "softmax_top_k":  # gpt-oss: gate and up interleaved in one (in, out) tensor
        gate_up, b_gate_up = t.get(m + "experts.gate_up_proj"), t.get(m + "experts.gate_up_proj_bias")
        router = _frozen(t.raw(m + "router.weight").T, t.dtype, t.copy)  # (E, d_model) -> (d_model, E)
        return Experts(router=router, router_bias=t.get(m + "router.bias"),
                       w_gate=gate_up[..., 0::2], w_up=gate_up[..., 1::2], w_down=t.get(m + "experts.down_proj"),
                       b_gate=b_gate_up[..., 0::2], b_up=b_gate_up[..., 1::2], b_down=t.get(m + "experts.down_proj_bias"))
    experts = [[t.linear(f"{m}experts.{j}.{name}")[0] for j in range(c.moe.n_experts)]
               for name in ("gate_proj", "up_proj", "down_proj")]
    w_gate, w_up, w_down = (_frozen(np.stack(ws), t.dtype, copy=False) for ws in experts)  # E x (in, out) -> (E, in, out)
    qwen = c.moe.router == "softmax"  # Qwen3-Next: one shared expert, behind a gate
    shared_name = "shared_expert." if qwen else "shared_experts."
    shared = tuple(t.linear(m + shared_name + name)[0] for name in ("gate_proj", "up_proj", "down_proj"))
    shared = shared if c.moe.n_shared_experts else None  # stored with zero width when there are none
    router = _frozen(t.raw(m + "gate.weight").T, t.dtype, t.copy)  # (E, d_model) -> (d_model, E)
    return Experts(router=router, correction_bias=t.get(m + "gate.e_score_correction_bias"),
                   w_gate=w_gate, w_up=w_up, w_down=w_down, shared=shared,
                   shared_gate=t.linear(m + "shared_expert_gate")[0] if qwen else None)


def _delta_layer(t: _Taker, c: DecoderConfig, i: int) -> DecoderLayer:
    """A hybrid decoder's delta-rule layer: its norms, its Gated DeltaNet, its MLP or experts."""
    p = f"model.layers.{i}."
    (w_gate, _), (w_up, _), (w_down, _) = (t.linear(p + "mlp." + n) for n in ("gate_proj", "up_proj", "down_proj"))
    delta = read_delta_weights(c.delta, p + c.delta.module, t.raw, lambda a: _frozen(a, t.dtype, t.copy))
    return DecoderLayer(attn_norm=t.norm(p + "input_layernorm"), mlp_norm=t.norm(p + "post_attention_layernorm"),
                        w_o=None, w_gate=w_gate, w_up=w_up, w_down=w_down, delta=delta,
                        experts=_experts(t, c, p + "mlp.") if c.is_moe_layer(i) else None)


def _gated_query(w: np.ndarray | None, n_heads: int, d: int):
    """(query part, gate part) of a gated-attention q_proj, as (in, h*d) each: the file keeps per head [q_i, g_i]."""
    if w is None:
        return None, None
    per_head = w.reshape(*w.shape[:-1], n_heads, 2, d)  # (..., h*2d) -> (..., h, 2, d)
    return (_frozen(per_head[..., 0, :].reshape(*w.shape[:-1], n_heads * d), w.dtype),  # (..., h*d)
            _frozen(per_head[..., 1, :].reshape(*w.shape[:-1], n_heads * d), w.dtype))


def _layer(t: _Taker, c: DecoderConfig, i: int) -> DecoderLayer:
    if c.delta is not None and c.delta.is_delta_layer(i):
        return _delta_layer(t, c, i)
    p = f"model.layers.{i}."
    a = p + "self_attn."
    latent = _latent(t, a) if c.latent else None  # its q_proj, if any, is read there
    names = () if latent else ("q_proj", "k_proj", "v_proj")
    (w_q, b_q), (w_k, b_k), (w_v, b_v) = (*(t.linear(a + name) for name in names),) or ((None, None),) * 3
    w_o, b_o = t.linear(a + "o_proj")
    (w_gate, b_gate), (w_up, b_up), (w_down, b_down) = (t.linear(p + "mlp." + n) for n in ("gate_proj", "up_proj", "down_proj"))
    mlp_norm = "pre_feedforward_layernorm" if c.sandwich_norms else "post_attention_layernorm"
    family_mlp = minimax_llama4.read_mlp(t, c, i, p) if c.model_type in minimax_llama4.MODEL_TYPES else {}
    if family_mlp:
        w_gate, w_up, w_down = (family_mlp.get(n) for n in ("w_gate", "w_up", "w_down"))
    (w_q, w_attn_gate), (b_q, b_attn_gate) = ((_gated_query(w_q, c.n_heads, c.head_dim),
                                               _gated_query(b_q, c.n_heads, c.head_dim))
                                              if c.attn_output_gate else ((w_q, None), (b_q, None)))
    post_norms = c.delta is not None and c.delta.attention_post_norms  # OLMo hybrid: norms on the outputs alone
    if family_mlp:  # MiniMax-M2 and Llama 4 read their own feed-forward tensors
        experts = Experts(**family_mlp["experts"]) if "experts" in family_mlp else None
    else:
        experts = _experts(t, c, p + "mlp.") if c.is_moe_layer(i) else None
    return DecoderLayer(
        attn_norm=None if post_norms else t.norm(p + "input_layernorm"),
        mlp_norm=None if post_norms else t.norm(p + mlp_norm), w_o=w_o, b_o=b_o,
        w_attn_gate=w_attn_gate, b_attn_gate=b_attn_gate,
        w_q=w_q, w_k=w_k, w_v=w_v, b_q=b_q, b_k=b_k, b_v=b_v,
        w_gate=w_gate, w_up=w_up, w_down=w_down, b_gate=b_gate, b_up=b_up, b_down=b_down,
        q_norm=t.norm(a + "q_norm"), k_norm=t.norm(a + "k_norm"), sinks=t.get(a + "sinks"),
        post_attn_norm=t.norm(p + "post_attention_layernorm") if c.sandwich_norms or post_norms else None,
        post_mlp_norm=t.norm(p + "post_feedforward_layernorm"),
        latent=latent,
        indexer=_indexer(t, a),
        experts=experts,
    )


def _ignored(name: str, config: DecoderConfig) -> bool:
    """Tensors transformers does not load either: RoPE tables, the layers past n_layers of a multi-token predictor."""
    if name.endswith("rotary_emb.inv_freq"):
        return True
    if config.delta is not None and name.startswith("mtp."):  # Qwen3-Next's multi-token predictor
        return True
    found = re.match(r"model\.layers\.(\d+)\.", name)
    return bool(config.extra_layers and found and int(found.group(1)) >= config.n_layers)


def decoder_weights(tensors: dict[str, np.ndarray], config: DecoderConfig, dtype=np.float32,
                    source: str = "model.safetensors", copy: bool = True) -> DecoderWeights:
    """Build `DecoderWeights` from Hugging Face tensor names; refuse missing, misshapen or unused tensors.

    copy=False keeps the arrays of `tensors` that already have `dtype`
    (read-only from then on) instead of copying them: for tensors freshly
    read from a file, which nothing else holds.
    """
    c = config
    tensors = {("model." + k if k.split(".")[0] in ("layers", "embed_tokens", "norm") else k): v
               for k, v in tensors.items()}  # some files leave out the "model." prefix
    if c.delta is not None:
        tensors = canonical_names(tensors)  # OLMo hybrid's file names, Qwen3.5's language_model prefix
    t = _Taker(tensors, c, dtype, source, copy)
    layers = tuple(_layer(t, c, i) for i in range(c.n_layers))
    embeddings = t.get("model.embed_tokens.weight")
    final_norm = t.norm("model.norm")
    if c.tie_word_embeddings:
        lm_head = embeddings.T  # (d_model, vocab): the embedding matrix read the other way
        if "lm_head.weight" in tensors:  # some files store the tied copy anyway
            t.used.add("lm_head.weight")
    else:
        lm_head = t.linear("lm_head")[0]
    extras = checkpoint_gemma3n.read(t, c) if c.gemma3n is not None else None
    unused = sorted(k for k in set(tensors) - t.used if not _ignored(k, c))
    if unused:
        shown = ", ".join(map(repr, unused[:5])) + (f" and {len(unused) - 5} more" if len(unused) > 5 else "")
        raise UnsupportedConfigError(f"{source}: tensors this forward pass would not use: {shown}; "
                                     "the checkpoint has parts config.json does not describe")
    return DecoderWeights(config=config, embeddings=embeddings, layers=layers, final_norm=final_norm, lm_head=lm_head,
                          gemma3n=extras)
