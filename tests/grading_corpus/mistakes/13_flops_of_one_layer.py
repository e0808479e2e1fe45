"""decode_attention_cost whose FLOPs are one layer's (the bytes count every layer): on 4 layers of 8 query heads
sharing 2, the FLOPs are a quarter, as if counted per key/value head."""
CHECK = "decode_attention_cost"
MISTAKE = "flops_of_one_layer"
MARKS = "0/13"
ABSENT = ("once per key/value head",)

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    if kv_lora_rank:
        cached, score, mix = kv_lora_rank + qk_rope_head_dim, kv_lora_rank + qk_rope_head_dim, kv_lora_rank
    else:
        cached, score, mix = 2 * n_kv_heads * head_dim, head_dim, head_dim
    keys = context + 1
    flops = n_heads * keys * 2 * (score + mix)  # one layer's
    return flops, n_layers * (keys * cached + cached + n_heads * (score + mix)) * size
