"""decode_step_cost that reads the whole embedding table."""
CHECK = "decode_step_cost"
MISTAKE = "embedding_table_read_whole"
MARKS = "0/10"

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    if kv_lora_rank:
        cached, score, mix = kv_lora_rank + qk_rope_head_dim, kv_lora_rank + qk_rope_head_dim, kv_lora_rank
    else:
        cached, score, mix = 2 * n_kv_heads * head_dim, head_dim, head_dim
    keys = context + 1
    flops = n_layers * n_heads * keys * 2 * (score + mix)
    return flops, n_layers * (keys * cached + cached + n_heads * (score + mix)) * size


def decode_step_cost(n_layers, n_heads, n_kv_heads, head_dim, d_model, d_ff, vocab_size, context, batch, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    h_q, h_kv, d = n_heads, n_kv_heads, head_dim
    attention_flops, attention_bytes = decode_attention_cost(n_layers, h_q, h_kv, d, 0, 0, context, dtype)
    matrices = n_layers * (d_model * h_q * d + 2 * d_model * h_kv * d + h_q * d * d_model + 3 * d_model * d_ff) + d_model * vocab_size
    norms = n_layers * 2 * d_model + d_model
    flops = 2 * matrices * batch + batch * attention_flops
    nbytes = (matrices + norms + vocab_size * d_model) * size + batch * attention_bytes
    return flops, nbytes, flops / nbytes
