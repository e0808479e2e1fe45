"""decode_attention_cost whose query meets the context only, not the new token itself."""
CHECK = "decode_attention_cost"
MISTAKE = "new_token_left_out"
MARKS = "0/13"

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    if kv_lora_rank:
        cached, score, mix = kv_lora_rank + qk_rope_head_dim, kv_lora_rank + qk_rope_head_dim, kv_lora_rank
    else:
        cached, score, mix = 2 * n_kv_heads * head_dim, head_dim, head_dim
    keys = context  # the cache before the new token is appended
    flops = n_layers * n_heads * keys * 2 * (score + mix)
    return flops, n_layers * (keys * cached + cached + n_heads * (score + mix)) * size
