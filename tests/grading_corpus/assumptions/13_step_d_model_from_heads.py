"""decode_step_cost that takes W_q and W_o to be d_model x d_model: it assumes d_model = h_q x d."""
CHECK = "decode_step_cost"
MESSAGE = ("d_model", "bytes: expected")
MARKS = "7/10"

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    cached, score, mix = 2 * n_kv_heads * head_dim, head_dim, head_dim
    keys = context + 1
    flops = n_layers * n_heads * keys * 2 * (score + mix)
    return flops, n_layers * (keys * cached + cached + n_heads * (score + mix)) * size


def decode_step_cost(n_layers, n_heads, n_kv_heads, head_dim, d_model, d_ff, vocab_size, context, batch, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    kv_width = d_model // n_heads * n_kv_heads  # h_kv heads of d_model / h_q each
    matrices = n_layers * (2 * d_model * d_model + 2 * d_model * kv_width + 3 * d_model * d_ff) + d_model * vocab_size
    norms = n_layers * 2 * d_model + d_model
    attention_flops, attention_bytes = decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, 0, 0, context, dtype)
    flops = 2 * matrices * batch + batch * attention_flops
    nbytes = (matrices + norms + batch * d_model) * size + batch * attention_bytes
    return flops, nbytes, flops / nbytes
