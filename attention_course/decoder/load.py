"""A decoder built from a checkpoint folder or drawn at random: `load_decoder`, `random_decoder` (book/decoding.ipynb).

Both hand the weights to the class that runs them: `model.DecoderModel`, or
`gemma3n.Gemma3nModel` for Gemma 3n's text model and
`deepseek_v4.DeepseekV4Model` for DeepSeek-V4, which build on it.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from .config import DecoderConfig
from .deepseek_v4 import DeepseekV4Model, read_v4_weights
from .fp8 import dequantize_fp8
from .gemma3n import Gemma3nModel
from .layout import checkpoint_shapes
from .model import DecoderModel
from .weights import DecoderWeights, decoder_weights, read_checkpoint

__all__ = ["load_decoder", "random_decoder", "random_tensors"]


def load_decoder(folder: str | os.PathLike, dtype=np.float32) -> DecoderModel:
    """Read a Hugging Face decoder checkpoint folder and run it in NumPy.

    Model types: Llama (RoPE scaling included), Mistral, Qwen2, Qwen3, Gemma 2,
    Gemma 3 (text), SmolLM3, gpt-oss, DeepSeek-V3, DeepSeek-V3.2, GLM-5, MiniMax-M2, Llama 4 (text:
    Llama4ForCausalLM, model_type llama4_text), Gemma 3n (text:
    Gemma3nForCausalLM, model_type gemma3n_text, run by `gemma3n.Gemma3nModel`),
    the hybrids whose layers mostly keep a state instead of scores (Gated
    DeltaNet): Qwen3-Next, Qwen3.5 (text), OLMo hybrid and Kimi Linear, and
    DeepSeek-V4 (compressed keys beside a sliding window, hyper-connections:
    run by `deepseek_v4.DeepseekV4Model`, its tensors in DeepSeek's names)
    (`config_json.MODEL_TYPES`).

    The folder holds config.json and model.safetensors (or its shards and
    model.safetensors.index.json), and optionally tokenizer.json for text in
    and out. Weights stored in FP8 with a scale per block (quantization_config
    with quant_method "fp8") are widened to float32 (`fp8.dequantize_fp8`);
    other stored formats (MXFP4) are refused with the reason. `dtype` is float32 (transformers' default) or float64 for a
    reference run. Raises UnsupportedConfigError, naming the key, for an
    option this forward pass does not implement.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder; load_decoder needs a checkpoint folder with config.json")
    if np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"dtype must be float32 or float64; got {np.dtype(dtype)}")
    config = DecoderConfig.from_json(folder / "config.json")
    tensors = dequantize_fp8(read_checkpoint(folder), config.weight_blocks, str(folder))  # FP8 widened, if any
    if config.v4 is not None:  # DeepSeek-V4: its own tensors and model class
        weights = read_v4_weights(tensors, config, dtype, source=str(folder))
    else:
        weights = decoder_weights(tensors, config, dtype, source=str(folder), copy=False)
    tokenizer = None
    if (folder / "tokenizer.json").is_file():
        try:
            from tokenizers import Tokenizer  # imported here: only text in and out needs it
        except ImportError:
            raise ImportError(f'{folder / "tokenizer.json"} needs tokenizers: pip install "attention-course[book]"') from None

        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.no_truncation()
    return _model(weights, tokenizer, name=folder.name)


def _model(weights: DecoderWeights, tokenizer=None, name: str = "decoder") -> DecoderModel:
    """A `DecoderModel`, or the `gemma3n.Gemma3nModel` that runs Gemma 3n's text model, or DeepSeek-V4's."""
    if weights.config.v4 is not None:
        return DeepseekV4Model(weights, tokenizer, name)
    if weights.config.gemma3n is not None:
        return Gemma3nModel(weights, tokenizer, name)
    return DecoderModel(weights, tokenizer, name)


def random_tensors(rng: np.random.Generator, config: DecoderConfig, dtype=np.float64) -> dict[str, np.ndarray]:
    """A checkpoint's tensors for `config`, drawn: matrices normal / sqrt(fan-in), norms neutral, biases and sinks 0.

    The embeddings are drawn first (standard normal), then the output
    projection, then every other matrix in `checkpoint_shapes` order.
    """
    shapes = checkpoint_shapes(config)
    order = ["model.embed_tokens.weight", *(["lm_head.weight"] if "lm_head.weight" in shapes else [])]
    order += [name for name in shapes if name not in order]
    tensors = {}
    for name in order:
        shape = shapes[name]
        if name == "model.embed_tokens.weight":
            tensors[name] = rng.standard_normal(shape).astype(dtype)
        elif name.endswith("gate.tid2eid"):  # DeepSeek-V4's hashed layers: each token id's experts
            tensors[name] = rng.integers(0, config.v4.n_experts, shape)
        elif len(shape) >= 2:  # (out, in) Linear weights; gpt-oss's stacked experts are (E, in, out)
            fan_in = shape[-1] if len(shape) == 2 else shape[-2]
            tensors[name] = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(dtype)
        elif "norm" in name and not name.endswith(".bias"):  # a LayerNorm's bias (the indexer's) is drawn 0
            # a gain of 1 (Gemma and Qwen3-Next store gain - 1, but for the gated norm)
            tensors[name] = np.full(shape, 1.0 - (0.0 if ".linear_attn." in name else config.norm_offset), dtype)
        else:
            tensors[name] = np.zeros(shape, dtype)
    return tensors


def random_decoder(rng: np.random.Generator, *, config: DecoderConfig | dict | None = None, vocab_size: int = 64,
                   d_model: int = 32, n_layers: int = 2, n_heads: int = 4, n_kv_heads: int = 2,
                   head_dim: int | None = None, d_ff: int | None = None, window: int | None = None,
                   rope_theta: float = 10000.0, dtype=np.float64) -> DecoderModel:
    """A decoder with random weights (`random_tensors`), for examples and measurements.

    Without `config`: a Llama-architecture model of the sizes given, every
    layer with `window` (None: full causal attention). With `config` (a
    `DecoderConfig`, or a config.json dict such as `published.PUBLISHED_CONFIGS`
    gives), a model of that architecture and those sizes; the other size
    arguments are then not used. The weights come from `rng`, so the same seed
    gives the same model.
    """
    if config is None:
        head_dim = head_dim or d_model // n_heads
        cfg = {"model_type": "llama", "vocab_size": vocab_size, "hidden_size": d_model, "num_hidden_layers": n_layers,
               "num_attention_heads": n_heads, "num_key_value_heads": n_kv_heads, "head_dim": head_dim,
               "intermediate_size": d_ff or 2 * d_model, "rms_norm_eps": 1e-6, "rope_theta": rope_theta}
        config = replace(DecoderConfig.from_dict(cfg, "random_decoder"), windows=(window,) * n_layers)
    elif isinstance(config, dict):
        config = DecoderConfig.from_dict(config, "random_decoder")
    elif not isinstance(config, DecoderConfig):
        raise TypeError(f"config must be a DecoderConfig, a config.json dict or None; got {type(config).__name__}")
    tensors = random_tensors(rng, config, dtype)
    if config.v4 is not None:  # DeepSeek-V4: its own tensors and model class
        weights = read_v4_weights(tensors, config, dtype, source="random_decoder")
    else:
        weights = decoder_weights(tensors, config, dtype, source="random_decoder", copy=False)  # drawn: ours already
    return _model(weights, name="random decoder")
