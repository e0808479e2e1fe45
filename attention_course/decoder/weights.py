"""A decoder checkpoint's learned parameters, read from safetensors (book/decoding.ipynb).

Hugging Face stores each projection as a torch `Linear` weight of shape
(out, in); they are transposed once here so that, as everywhere in this
course, a projection is the row-vector product `x @ w`. bfloat16 checkpoints
(most published ones) are widened to float32 exactly: a bfloat16 is the top
16 bits of a float32. Every weight the configuration needs must be there, and
every weight in the file must be used: a checkpoint with parts this forward
pass would ignore is refused rather than run with wrong numbers.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .config import DecoderConfig, UnsupportedConfigError

_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16}
"""safetensors dtype names NumPy reads as they are; "BF16" is widened to float32 (`_bf16_to_float32`)."""


@dataclass(frozen=True)
class DecoderLayer:
    """The learned parameters of one decoder layer (row-vector convention: y = x @ w + b)."""

    attn_norm: np.ndarray
    """(d_model,) RMSNorm weight before attention (input_layernorm)."""
    w_q: np.ndarray
    """(d_model, h_q * d) query projection; head i uses columns i*d:(i+1)*d."""
    w_k: np.ndarray
    """(d_model, h_kv * d) key projection."""
    w_v: np.ndarray
    """(d_model, h_kv * d) value projection."""
    w_o: np.ndarray
    """(h_q * d, d_model) output projection that mixes the heads."""
    mlp_norm: np.ndarray
    """(d_model,) RMSNorm weight before the feed-forward layer (post_attention_layernorm)."""
    w_gate: np.ndarray
    """(d_model, d_ff) SwiGLU gate projection."""
    w_up: np.ndarray
    """(d_model, d_ff) SwiGLU up projection."""
    w_down: np.ndarray
    """(d_ff, d_model) SwiGLU down projection."""
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


def _bf16_to_float32(raw: bytes | bytearray) -> np.ndarray:
    """bfloat16 bytes as float32, exactly: each value's 16 bits become the top half of a float32."""
    bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16  # (n,) bf16 bits moved to the top
    return bits.view(np.float32)


def read_safetensors(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Every tensor of a .safetensors file as a NumPy array (bfloat16 widened to float32)."""
    try:
        from safetensors import deserialize  # imported here: only the checkpoint readers need it
    except ImportError:
        raise ImportError('reading a checkpoint needs safetensors: pip install "attention-course[book]"') from None

    tensors = {}
    for name, spec in deserialize(Path(path).read_bytes()):
        dtype = spec["dtype"]
        if dtype == "BF16":
            arr = _bf16_to_float32(spec["data"])
        elif dtype in _DTYPES:
            arr = np.frombuffer(spec["data"], dtype=np.dtype(_DTYPES[dtype]).newbyteorder("<"))
        else:
            raise UnsupportedConfigError(f"{path}: tensor {name!r} is stored as {dtype}, which is not implemented "
                                         f"(only {', '.join(_DTYPES)} and BF16)")
        tensors[name] = arr.reshape(spec["shape"])
    return tensors


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


def _frozen(arr: np.ndarray, dtype) -> np.ndarray:
    out = np.array(arr, dtype=dtype)  # a copy the model owns
    out.flags.writeable = False  # shared model parameters: nobody may change them by accident
    return out


def decoder_weights(tensors: dict[str, np.ndarray], config: DecoderConfig, dtype=np.float32,
                    source: str = "model.safetensors") -> DecoderWeights:
    """Build `DecoderWeights` from Hugging Face tensor names; refuse missing, misshapen or unused tensors."""
    t = {k.removeprefix("model."): v for k, v in tensors.items()}
    stored = {k.removeprefix("model."): k for k in tensors}  # the names as the file spells them
    used: set[str] = set()
    c = config

    def take(name, shape):
        if name not in t:
            spelled = name if name == "lm_head.weight" else "model." + name
            raise UnsupportedConfigError(f"{source}: the tensor {spelled!r} that config.json implies is missing")
        if tuple(t[name].shape) != shape:
            raise UnsupportedConfigError(
                f"{source}: {stored[name]!r} has shape {tuple(t[name].shape)}; config.json implies {shape}")
        used.add(name)
        return t[name]

    def linear(name, d_in, d_out, bias):
        w = _frozen(take(name + ".weight", (d_out, d_in)).T, dtype)  # (out, in) -> (in, out)
        b = _frozen(take(name + ".bias", (d_out,)), dtype) if bias else None
        return w, b

    def norm(name):
        return _frozen(take(name + ".weight", (c.d_model,)), dtype)

    q_width, kv_width = c.n_heads * c.head_dim, c.n_kv_heads * c.head_dim
    layers = []
    for i in range(c.n_layers):
        p = f"layers.{i}."
        w_q, b_q = linear(p + "self_attn.q_proj", c.d_model, q_width, c.qkv_bias)
        w_k, b_k = linear(p + "self_attn.k_proj", c.d_model, kv_width, c.qkv_bias)
        w_v, b_v = linear(p + "self_attn.v_proj", c.d_model, kv_width, c.qkv_bias)
        w_o, b_o = linear(p + "self_attn.o_proj", q_width, c.d_model, c.o_bias)
        w_gate, b_gate = linear(p + "mlp.gate_proj", c.d_model, c.d_ff, c.mlp_bias)
        w_up, b_up = linear(p + "mlp.up_proj", c.d_model, c.d_ff, c.mlp_bias)
        w_down, b_down = linear(p + "mlp.down_proj", c.d_ff, c.d_model, c.mlp_bias)
        layers.append(DecoderLayer(
            attn_norm=norm(p + "input_layernorm"), w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o,
            mlp_norm=norm(p + "post_attention_layernorm"), w_gate=w_gate, w_up=w_up, w_down=w_down,
            b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o, b_gate=b_gate, b_up=b_up, b_down=b_down,
        ))
    embeddings = _frozen(take("embed_tokens.weight", (c.vocab_size, c.d_model)), dtype)
    final_norm = norm("norm")
    if c.tie_word_embeddings:
        lm_head = embeddings.T  # (d_model, vocab): the embedding matrix read the other way
        if "lm_head.weight" in t:  # some files store the tied copy anyway
            used.add("lm_head.weight")
    else:
        lm_head = _frozen(take("lm_head.weight", (c.vocab_size, c.d_model)).T, dtype)
    unused = sorted(stored[k] for k in set(t) - used if not k.endswith("rotary_emb.inv_freq"))
    if unused:
        shown = ", ".join(map(repr, unused[:5])) + (f" and {len(unused) - 5} more" if len(unused) > 5 else "")
        raise UnsupportedConfigError(f"{source}: tensors this forward pass would not use: {shown}; "
                                     "the checkpoint has parts config.json does not describe")
    return DecoderWeights(config=config, embeddings=embeddings, layers=tuple(layers), final_norm=final_norm,
                          lm_head=lm_head)
