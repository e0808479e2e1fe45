"""decode_attention_cost that counts MLA's keys and values rebuilt per head, as training computes them."""
CHECK = "decode_attention_cost"
MISTAKE = "latent_rebuilt_per_head"
MARKS = "10/13"

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    if kv_lora_rank:  # a key of head_dim + rope and a value of head_dim for every query head
        cached = n_heads * (2 * head_dim + qk_rope_head_dim)
        score, mix = head_dim + qk_rope_head_dim, head_dim
    else:
        cached, score, mix = 2 * n_kv_heads * head_dim, head_dim, head_dim
    keys = context + 1
    flops = n_layers * n_heads * keys * 2 * (score + mix)
    return flops, n_layers * (keys * cached + cached + n_heads * (score + mix)) * size
