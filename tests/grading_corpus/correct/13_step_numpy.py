"""decode_step_cost with every count a NumPy int64, the matrices listed by their shapes, and the intensity a NumPy float64."""
CHECK = "decode_step_cost"

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = np.int64(2 if dtype == "bfloat16" else 1 if dtype.startswith("float8") else np.dtype(dtype).itemsize)
    if kv_lora_rank:
        cached, score, mix = kv_lora_rank + qk_rope_head_dim, kv_lora_rank + qk_rope_head_dim, kv_lora_rank
    else:
        cached, score, mix = 2 * n_kv_heads * head_dim, head_dim, head_dim
    layers, heads, keys = np.int64(n_layers), np.int64(n_heads), np.int64(context + 1)
    return layers * heads * keys * 2 * (score + mix), layers * ((keys + 1) * cached + heads * (score + mix)) * size


def decode_step_cost(n_layers, n_heads, n_kv_heads, head_dim, d_model, d_ff, vocab_size, context, batch, dtype):
    size = np.int64(2 if dtype == "bfloat16" else 1 if dtype.startswith("float8") else np.dtype(dtype).itemsize)
    shapes = [(d_model, n_heads * head_dim), (d_model, n_kv_heads * head_dim), (d_model, n_kv_heads * head_dim),
              (n_heads * head_dim, d_model), (d_model, d_ff), (d_model, d_ff), (d_ff, d_model)]
    per_layer = np.sum([np.prod(s, dtype=np.int64) for s in shapes])
    matrices = n_layers * per_layer + np.int64(d_model) * vocab_size
    norms = np.int64(2 * n_layers + 1) * d_model
    attention = np.array(decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, 0, 0, context, dtype))
    flops = 2 * matrices * batch + batch * attention[0]
    nbytes = (matrices + norms + batch * d_model) * size + batch * attention[1]
    return flops, nbytes, np.float64(flops) / nbytes
