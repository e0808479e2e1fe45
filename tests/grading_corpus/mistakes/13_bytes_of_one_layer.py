"""decode_attention_cost whose bytes are one layer's (the FLOPs count every layer): on an empty cache of 5 layers
the bytes are a fifth, which a step that leaves out some traffic could give too."""
CHECK = "decode_attention_cost"
MISTAKE = "bytes_of_one_layer"
MARKS = "0/13"
ABSENT = ("Besides the cache it reads",)

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    if kv_lora_rank:
        cached, score, mix = kv_lora_rank + qk_rope_head_dim, kv_lora_rank + qk_rope_head_dim, kv_lora_rank
    else:
        cached, score, mix = 2 * n_kv_heads * head_dim, head_dim, head_dim
    keys = context + 1
    flops = n_layers * n_heads * keys * 2 * (score + mix)
    return flops, (keys * cached + cached + n_heads * (score + mix)) * size  # one layer's
