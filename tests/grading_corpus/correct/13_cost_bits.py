"""decode_attention_cost from bits per number, Python ints (right)."""
CHECK = "decode_attention_cost"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    bits = {"bfloat16": 16, "float8_e4m3fn": 8}.get(dtype) or np.dtype(dtype).itemsize * 8
    size = bits // 8
    L, H, T = n_layers, n_heads, context + 1
    if kv_lora_rank == 0:
        per_token = 2 * n_kv_heads * head_dim
        flops = L * H * T * 4 * head_dim
        reads = T * per_token + per_token + H * 2 * head_dim
    else:
        per_token = kv_lora_rank + qk_rope_head_dim
        flops = 2 * L * H * T * (2 * kv_lora_rank + qk_rope_head_dim)
        reads = (T + 1) * per_token + H * (2 * kv_lora_rank + qk_rope_head_dim)
    return int(flops), int(L * reads * size)
