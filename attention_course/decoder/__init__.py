"""Decoders that generate text: the KV cache, grouped-query and latent attention, real checkpoints (book/decoding.ipynb).

- `cache`: `KVCache` (per layer, keys and values appended along the sequence
  axis; a sliding-window layer keeps its window, a chunked layer its current
  chunk), `LatentCache` (latent attention: a latent and a shared RoPE key per
  token), and what they take, counted: `kv_cache_bytes`,
  `latent_cache_bytes`, `cache_bytes` (from a config).
- `config`, `config_json`, `options`: what a config.json says, checked and read per
  model family (Llama with its RoPE scalings, Mistral, Qwen2, Qwen3, Gemma 2,
  Gemma 3, SmolLM3, gpt-oss, DeepSeek-V3; `config_dsa`: DeepSeek-V3.2 and
  GLM-5; `config_minimax_llama4`: what MiniMax-M2 and Llama 4 (text) add;
  `config_gemma3n`: Gemma 3n's text model; `config_hybrid`: the hybrids
  Qwen3-Next, Qwen3.5, OLMo hybrid and Kimi Linear; `config_v4`: DeepSeek-V4).
- `layout`, `weights`: the tensors a checkpoint holds, read from safetensors
  (bfloat16 through ml_dtypes); `fp8`: FP8 weights with a scale per block
  (DeepSeek's and GLM's published format) widened to float32 at load, other
  stored formats (gpt-oss's MXFP4) refused with the reason;
  `checkpoint_minimax_llama4`: MiniMax-M2's and Llama 4's feed-forward
  tensors; `checkpoint_gemma3n`: Gemma 3n's; `checkpoint_v4`: DeepSeek-V4's
  (in DeepSeek's names).
- `attention`: grouped-query attention with QK-norm (per head, or over the
  whole projection), per-layer RoPE (whole or partial) or none, Llama 4's
  weightless QK-norm and NoPE temperature, soft-capping, sinks, sliding
  windows and chunks, and gated attention's output gate; `latent`: multi-head
  latent attention, expanded or absorbed; `indexer`: DeepSeek Sparse
  Attention's lightning indexer, which picks the keys each query's latent
  attention reads (`core.sparse`), and `IndexedLatentCache`, which keeps its
  keys; `mlp`: gated MLPs and mixtures of experts (softmax or sigmoid
  routers, shared experts); `delta`: a Gated DeltaNet layer
  (`core.delta_rule`), the hybrids' layers that keep a state instead of scores.
- `v4_attention`: DeepSeek-V4's attention, one key/value head over a
  sliding window plus compressed entries (`core.compress`'s gated pooling;
  an indexer picks some of them), a sink per head, the output's RoPE part
  rotated back; `V4Cache`, the window, the entries, the indexer's keys and
  the open windows' inputs; `deepseek_v4`: `DeepseekV4Model`, its forward
  pass (hyper-connections: several copies of the residual stream mixed by
  weights computed from them; experts chosen by a table of token ids in the
  first layers).
- `hybrid_cache`: `HybridCache`, the softmax layers' keys and values beside
  each delta-rule layer's state and last convolution inputs (constant in n).
- `paged`: `PagedKVCache`, the keys and values in fixed blocks found through a
  block table, as vLLM keeps them (book/generating_cost.ipynb).
- `reserved`: `ReservedKVCache`, one buffer per layer for the longest sequence,
  written in place (book/generating_cost.ipynb).
- `quantized`: `QuantizedKVCache`, int8 or float8 codes with absmax scales
  (book/generating_cost.ipynb).
- `step`: `decode_step`, one new token's attention against the cache, by hand.
- `load`: `load_decoder(folder)` and `random_decoder(rng)`, which hand the
  weights to the class that runs them; `model`: the NumPy forward pass,
  `DecoderModel.forward(ids, cache)` and `.generate(ids, n)`;
  `gemma3n`: `Gemma3nModel`, the same for Gemma 3n's text model (AltUp's
  copies of the residual stream, LAuReL, per-layer inputs, layers that read
  another layer's keys and values); `deepseek_v4.DeepseekV4Model`, the same
  for DeepSeek-V4.
- `size`, `published`: parameters, memory and cache per token of published
  configurations, computed from their config.json values.

A small real checkpoint runs here as it is: a Qwen3 0.6B or Gemma 3 270M
folder (config.json, model.safetensors, tokenizer.json) loads with
`load_decoder(folder)`. Its memory, computed from the published configuration
(`size.parameter_count`, `published.PUBLISHED_CONFIGS`), not measured on the
real files: 596 million parameters for Qwen3 0.6B, 2.4 GB once widened to
float32 (1.2 GB on disk in bfloat16); 268 million for Gemma 3 270M, 1.1 GB in
float32 (0.5 GB on disk). Loading reads one tensor at a time, so it needs
about the float32 size. A new token costs about 2 FLOPs (a multiply and an
add) per parameter it is multiplied by (`size.decode_flops_per_token`), and
its time is mostly the time to read those float32 weights from memory:
benchmarks/bench_published.py measures both on models of these shapes
(benchmarks/README.md).

Which published checkpoints fit a machine of 24 GiB, computed from their
configurations (`published.runs_here`, README.md's table): Gemma 3 270M, Qwen3
0.6B, Gemma 2 2B (9.7 GiB in float32) and SmolLM3 3B (11.5 GiB) do; Llama 3.1
8B and Qwen3 8B (about 30 GiB in float32) do not, nor Gemma 3 27B; DeepSeek-V3,
DeepSeek-V3.2 (672 billion parameters, about 2,500 GiB in float32) and GLM-5
(744 billion) are published in FP8 or bfloat16 but are held in float32 here,
far past it; gpt-oss-120b's experts are stored in MXFP4, which is refused.

>>> import numpy as np
>>> from attention_course.decoder import random_decoder
>>> model = random_decoder(np.random.default_rng(0))
>>> out = model.forward([1, 2, 3])
>>> out.logits.shape, out.attentions.shape        # (n, vocab), (L, h_q, n_q, n_k)
((3, 64), (2, 4, 3, 3))
"""

from .. import lazy_attributes

# `import attention_course.decoder` loads this module alone; each name, and each module, is imported on first use
# through the package's one mechanism: a student's check of `decode_step` needs the cache and the step, not the
# loaders of every checkpoint format.
__getattr__, __dir__ = lazy_attributes(__name__, {
    "cache": ("KVCache", "LatentCache", "LayerCache", "cache_bytes", "itemsize", "kv_cache_bytes",
              "latent_cache_bytes"),
    "config": ("DecoderConfig", "LatentAttentionConfig", "MoEConfig", "UnsupportedConfigError"),
    "step": ("decode_step",),
    "paged": ("PagedKVCache",),
    "reserved": ("ReservedKVCache",),
    "quantized": ("QuantizedKVCache", "attention_error_bound", "quantize"),
    "hybrid_cache": ("HybridCache",),
    "model": ("DecoderModel", "DecoderOutput", "rms_norm", "silu", "swiglu"),
    "load": ("load_decoder", "random_decoder"),
    "indexer": ("IndexedLatentCache",),
    "weights": ("DecoderLayer", "DecoderWeights", "read_checkpoint"),
}, {module: module for module in (
    "attention", "cache", "checkpoint_gemma3n", "checkpoint_minimax_llama4", "checkpoint_v4", "config", "config_dsa",
    "config_gemma3n", "config_hybrid", "config_json", "config_minimax_llama4", "config_rope", "config_v4",
    "deepseek_v4", "delta", "fp8", "gemma3n", "hybrid_cache", "indexer", "latent", "layout", "load", "mlp", "model",
    "options", "paged", "published", "quantized", "reserved", "size", "step", "stored", "v4_attention", "weights")})

__all__ = [
    "DecoderConfig",
    "DecoderLayer",
    "DecoderModel",
    "DecoderOutput",
    "DecoderWeights",
    "HybridCache",
    "IndexedLatentCache",
    "KVCache",
    "LatentAttentionConfig",
    "LatentCache",
    "LayerCache",
    "MoEConfig",
    "PagedKVCache",
    "QuantizedKVCache",
    "ReservedKVCache",
    "UnsupportedConfigError",
    "attention_error_bound",
    "cache_bytes",
    "decode_step",
    "itemsize",
    "kv_cache_bytes",
    "latent_cache_bytes",
    "load_decoder",
    "quantize",
    "random_decoder",
    "read_checkpoint",
    "rms_norm",
    "silu",
    "swiglu",
]
