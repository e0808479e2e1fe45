"""Decoders that generate text: the KV cache, grouped-query attention and a real checkpoint (book/decoding.ipynb).

- `cache`: `KVCache` (per layer, keys and values appended along the sequence
  axis) and `kv_cache_bytes` (what a cache takes, counted).
- `config`: what a Llama / Mistral / Qwen2 config.json says, checked.
- `weights`: the checkpoint's tensors, read from safetensors.
- `paged`: `PagedKVCache`, the keys and values in fixed blocks found through a
  block table, as vLLM keeps them (book/generating_cost.ipynb).
- `reserved`: `ReservedKVCache`, one buffer per layer for the longest sequence,
  written in place (book/generating_cost.ipynb).
- `quantized`: `QuantizedKVCache`, int8 or float8 codes with absmax scales
  (book/generating_cost.ipynb).
- `step`: `decode_step`, one new token's attention against the cache, by hand.
- `model`: `load_decoder(folder)`, `random_decoder(rng)` and the NumPy
  forward pass, `DecoderModel.forward(ids, cache)` and `.generate(ids, n)`.

>>> import numpy as np
>>> from attention_course.decoder import random_decoder
>>> model = random_decoder(np.random.default_rng(0))
>>> out = model.forward([1, 2, 3])
>>> out.logits.shape, out.attentions.shape        # (n, vocab), (L, h_q, n_q, n_k)
((3, 64), (2, 4, 3, 3))
"""

from .cache import KVCache, LayerCache, itemsize, kv_cache_bytes
from .config import DecoderConfig, UnsupportedConfigError
from .step import decode_step
from .paged import PagedKVCache
from .reserved import ReservedKVCache
from .quantized import QuantizedKVCache, attention_error_bound, quantize
from .model import DecoderModel, DecoderOutput, load_decoder, random_decoder, rms_norm, silu, swiglu
from .weights import DecoderLayer, DecoderWeights, read_checkpoint

__all__ = [
    "DecoderConfig",
    "DecoderLayer",
    "DecoderModel",
    "DecoderOutput",
    "DecoderWeights",
    "KVCache",
    "LayerCache",
    "PagedKVCache",
    "QuantizedKVCache",
    "ReservedKVCache",
    "UnsupportedConfigError",
    "attention_error_bound",
    "decode_step",
    "itemsize",
    "kv_cache_bytes",
    "load_decoder",
    "quantize",
    "random_decoder",
    "read_checkpoint",
    "rms_norm",
    "silu",
    "swiglu",
]
