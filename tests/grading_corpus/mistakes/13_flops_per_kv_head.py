"""decode_attention_cost that does the products once per key/value head."""
CHECK = "decode_attention_cost"
MISTAKE = "flops_per_key_value_head"
MARKS = "2/13"

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    if kv_lora_rank:
        cached, score, mix = kv_lora_rank + qk_rope_head_dim, kv_lora_rank + qk_rope_head_dim, kv_lora_rank
    else:
        cached, score, mix = 2 * n_kv_heads * head_dim, head_dim, head_dim
    keys = context + 1
    flops = n_layers * n_kv_heads * keys * 2 * (score + mix)
    return flops, n_layers * (keys * cached + cached + n_heads * (score + mix)) * size
