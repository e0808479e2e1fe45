"""decode_attention_cost adding up layer by layer."""
CHECK = "decode_attention_cost"

import math

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = 2 if dtype == "bfloat16" else 1 if dtype == "float8_e4m3fn" else np.dtype(dtype).itemsize
    flops = 0
    nbytes = 0
    for _ in range(n_layers):
        if kv_lora_rank:
            per_key = kv_lora_rank + qk_rope_head_dim
            flops += n_heads * (context + 1) * 2 * (2 * kv_lora_rank + qk_rope_head_dim)
            nbytes += ((context + 2) * per_key + n_heads * (2 * kv_lora_rank + qk_rope_head_dim)) * size
        else:
            flops += n_heads * (context + 1) * 4 * head_dim
            nbytes += ((context + 2) * 2 * n_kv_heads * head_dim + n_heads * 2 * head_dim) * size
    return int(flops), int(nbytes)
