"""decode_attention_cost counting bfloat16 numbers as four bytes, a float32's."""
CHECK = "decode_attention_cost"
MISTAKE = "bfloat16_as_four_bytes"
MARKS = "11/13"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = {"bfloat16": 4, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    if kv_lora_rank:
        cached = kv_lora_rank + qk_rope_head_dim
        score, mix = kv_lora_rank + qk_rope_head_dim, kv_lora_rank
    else:
        cached = 2 * n_kv_heads * head_dim
        score, mix = head_dim, head_dim
    keys = context + 1
    flops = n_layers * n_heads * keys * 2 * (score + mix)
    numbers = keys * cached + cached + n_heads * (score + mix)
    return flops, n_layers * numbers * size
