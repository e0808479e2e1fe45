"""decode_attention_cost that counts multiply-adds as FLOPs, one each."""
CHECK = "decode_attention_cost"
MISTAKE = "multiply_adds_not_flops"
MARKS = "0/13"

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    if kv_lora_rank:
        cached, score, mix = kv_lora_rank + qk_rope_head_dim, kv_lora_rank + qk_rope_head_dim, kv_lora_rank
    else:
        cached, score, mix = 2 * n_kv_heads * head_dim, head_dim, head_dim
    keys = context + 1
    flops = n_layers * n_heads * keys * (score + mix)
    return flops, n_layers * (keys * cached + cached + n_heads * (score + mix)) * size
