"""decode_attention_cost that reads the cache once for each query head that uses it."""
CHECK = "decode_attention_cost"
MISTAKE = "cache_read_per_query_head"
MARKS = "2/13"

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    if kv_lora_rank:
        cached, score, mix, readers = kv_lora_rank + qk_rope_head_dim, kv_lora_rank + qk_rope_head_dim, kv_lora_rank, n_heads
    else:
        cached, score, mix, readers = 2 * n_kv_heads * head_dim, head_dim, head_dim, n_heads // n_kv_heads
    keys = context + 1
    flops = n_layers * n_heads * keys * 2 * (score + mix)
    return flops, n_layers * (keys * cached * readers + cached + n_heads * (score + mix)) * size
