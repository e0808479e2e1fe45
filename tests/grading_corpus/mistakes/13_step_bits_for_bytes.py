"""decode_step_cost that takes a type's bits for its bytes, in the weights and in attention."""
CHECK = "decode_step_cost"
MISTAKE = "bits_for_bytes"
MARKS = "0/10"

import re


def decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    return 0, 0  # not done yet


def decode_step_cost(n_layers, n_heads, n_kv_heads, head_dim, d_model, d_ff, vocab_size, context, batch, dtype):
    bits = int(re.search(r"\d+", dtype).group())
    h_q, h_kv, d = n_heads, n_kv_heads, head_dim
    matrices = n_layers * (d_model * h_q * d + 2 * d_model * h_kv * d + h_q * d * d_model + 3 * d_model * d_ff) + d_model * vocab_size
    norms = n_layers * 2 * d_model + d_model
    cached = 2 * h_kv * d
    attention_flops = n_layers * h_q * (context + 1) * 4 * d
    attention_numbers = n_layers * ((context + 2) * cached + 2 * h_q * d)
    flops = 2 * matrices * batch + batch * attention_flops
    nbytes = (matrices + norms + batch * d_model + batch * attention_numbers) * bits
    return flops, nbytes, flops / nbytes
