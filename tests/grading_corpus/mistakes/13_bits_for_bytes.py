"""decode_attention_cost that takes the number in the type's name (its bits) as its bytes."""
CHECK = "decode_attention_cost"
MISTAKE = "bits_for_bytes"
MARKS = "0/13"

import re


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    size = int(re.search(r"\d+", dtype).group())  # 16 for bfloat16: bits, not bytes
    if kv_lora_rank:
        cached, score, mix = kv_lora_rank + qk_rope_head_dim, kv_lora_rank + qk_rope_head_dim, kv_lora_rank
    else:
        cached, score, mix = 2 * n_kv_heads * head_dim, head_dim, head_dim
    keys = context + 1
    flops = n_layers * n_heads * keys * 2 * (score + mix)
    return flops, n_layers * (keys * cached + cached + n_heads * (score + mix)) * size
