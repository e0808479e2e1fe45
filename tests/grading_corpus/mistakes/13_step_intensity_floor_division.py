"""decode_step_cost dividing with // : an integer intensity."""
CHECK = "decode_step_cost"
MISTAKE = "intensity_floor_division"
MARKS = "0/10"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def decode_step_cost(n_layers, n_heads, n_kv_heads, head_dim, d_model, d_ff, vocab_size, context, batch, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    h_q, h_kv, d = n_heads, n_kv_heads, head_dim
    attention_matrices = d_model * h_q * d + 2 * d_model * h_kv * d + h_q * d * d_model
    matrices = n_layers * (attention_matrices + 3 * d_model * d_ff) + d_model * vocab_size
    norms = n_layers * 2 * d_model + d_model
    keys = context + 1
    cached = 2 * h_kv * d
    attention_flops = n_layers * h_q * keys * 4 * d
    attention_bytes = n_layers * (keys * cached + cached + h_q * 2 * d) * size
    flops = 2 * matrices * batch + batch * attention_flops
    nbytes = (matrices + norms + batch * d_model) * size + batch * attention_bytes
    return flops, nbytes, flops // nbytes
