"""Decoders that generate text: the KV cache, grouped-query attention and a real checkpoint (book/decoding.ipynb).

- `cache`: `KVCache` (per layer, keys and values appended along the sequence
  axis) and `kv_cache_bytes` (what a cache takes, counted).
- `config`: what a Llama / Mistral / Qwen2 config.json says, checked.
- `weights`: the checkpoint's tensors, read from safetensors.
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

from .cache import KVCache, itemsize, kv_cache_bytes
from .config import DecoderConfig, UnsupportedConfigError
from .step import decode_step
from .model import DecoderModel, DecoderOutput, load_decoder, random_decoder, rms_norm, silu, swiglu
from .weights import DecoderLayer, DecoderWeights, read_checkpoint

__all__ = [
    "DecoderConfig",
    "DecoderLayer",
    "DecoderModel",
    "DecoderOutput",
    "DecoderWeights",
    "KVCache",
    "UnsupportedConfigError",
    "decode_step",
    "itemsize",
    "kv_cache_bytes",
    "load_decoder",
    "random_decoder",
    "read_checkpoint",
    "rms_norm",
    "silu",
    "swiglu",
]
