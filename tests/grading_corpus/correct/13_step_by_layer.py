"""decode_step_cost adding up layer by layer (right)."""
CHECK = "decode_step_cost"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def decode_step_cost(n_layers, n_heads, n_kv_heads, head_dim, d_model, d_ff, vocab_size, context, batch, dtype):
    size = {"bfloat16": 2, "float8_e4m3fn": 1}.get(dtype) or np.dtype(dtype).itemsize
    flops = nbytes = 0
    for _ in range(n_layers):
        weights = d_model * n_heads * head_dim * 2 + 2 * d_model * n_kv_heads * head_dim + 3 * d_model * d_ff
        flops += 2 * weights * batch + batch * n_heads * (context + 1) * 4 * head_dim
        cached = 2 * n_kv_heads * head_dim
        nbytes += (weights + 2 * d_model) * size
        nbytes += batch * ((context + 2) * cached + n_heads * 2 * head_dim) * size
    flops += 2 * d_model * vocab_size * batch
    nbytes += (d_model * vocab_size + d_model + batch * d_model) * size
    return int(flops), int(nbytes), float(flops / nbytes)
