"""decode_attention_cost that counts in 32-bit integers: right until a count passes 2**31, then wrapped around."""
CHECK = "decode_attention_cost"
MESSAGE = "a long context"
MARKS = "10/13"

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    fields = np.array([n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, size],
                      dtype=np.int32)
    L, h, h_kv, d, r, rope, t, size = fields
    if r:
        cached, score, mix = r + rope, r + rope, r
    else:
        cached, score, mix = 2 * h_kv * d, d, d
    keys = t + 1
    flops = L * h * keys * 2 * (score + mix)  # int32 times int32: wraps past 2**31 - 1
    return flops, L * (keys * cached + cached + h * (score + mix)) * size
