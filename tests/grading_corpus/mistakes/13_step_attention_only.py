"""decode_step_cost that counts the caches of the batch and no weight."""
CHECK = "decode_step_cost"
MISTAKE = "weights_left_out"
MARKS = "0/10"

import numpy as np


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    if kv_lora_rank:
        cached, score, mix = kv_lora_rank + qk_rope_head_dim, kv_lora_rank + qk_rope_head_dim, kv_lora_rank
    else:
        cached, score, mix = 2 * n_kv_heads * head_dim, head_dim, head_dim
    keys = context + 1
    flops = n_layers * n_heads * keys * 2 * (score + mix)
    return flops, n_layers * (keys * cached + cached + n_heads * (score + mix)) * size


def decode_step_cost(n_layers, n_heads, n_kv_heads, head_dim, d_model, d_ff, vocab_size, context, batch, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    h_q, h_kv, d = n_heads, n_kv_heads, head_dim
    attention_flops, attention_bytes = decode_attention_cost(n_layers, h_q, h_kv, d, 0, 0, context, dtype)
    flops, nbytes = batch * attention_flops, batch * attention_bytes
    return flops, nbytes, flops / nbytes
