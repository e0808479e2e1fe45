"""multi-head attention reshaping straight to (n_heads, n, d) and back, with no transpose."""
CHECK = "multi_head_attention"
MISTAKE = 'heads_reshaped_wrongly'
MARKS = "3/14"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n = x.shape[0]
    split = lambda y: y.reshape(n_heads, n, -1)
    heads = scaled_dot_product_attention(split(x @ w_q), split(x @ w_k), split(x @ w_v))
    return heads.reshape(n, -1) @ w_o
