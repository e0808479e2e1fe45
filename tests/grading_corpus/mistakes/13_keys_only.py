"""decode_attention_cost that caches a key per key/value head but no value."""
CHECK = "decode_attention_cost"
MISTAKE = "keys_or_values_left_out"
MARKS = "3/13"

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    if kv_lora_rank:
        cached, score, mix = kv_lora_rank + qk_rope_head_dim, kv_lora_rank + qk_rope_head_dim, kv_lora_rank
    else:
        cached, score, mix = n_kv_heads * head_dim, head_dim, head_dim  # the keys only
    keys = context + 1
    flops = n_layers * n_heads * keys * 2 * (score + mix)
    return flops, n_layers * (keys * cached + cached + n_heads * (score + mix)) * size
