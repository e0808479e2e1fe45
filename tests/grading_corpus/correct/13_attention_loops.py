"""decode_attention_cost counted one layer and one query head at a time, the keys before the values."""
CHECK = "decode_attention_cost"

import numpy as np

BYTES = {"bfloat16": 2, "float8_e4m3fn": 1, "float8_e5m2": 1}


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = BYTES[dtype] if dtype in BYTES else np.dtype(dtype).itemsize
    flops = numbers = 0
    for layer in range(n_layers):
        if kv_lora_rank:  # one latent and one rotary key per token, every head reads them
            per_token = kv_lora_rank + qk_rope_head_dim
            q_len, v_len = kv_lora_rank + qk_rope_head_dim, kv_lora_rank
        else:
            per_token = n_kv_heads * head_dim + n_kv_heads * head_dim  # keys, then values
            q_len, v_len = head_dim, head_dim
        for head in range(n_heads):
            flops += (context + 1) * (2 * q_len + 2 * v_len)
            numbers += q_len + v_len  # its query in, its output out
        numbers += (context + 1) * per_token + per_token  # the cache read, the new token written
    return flops, numbers * size
