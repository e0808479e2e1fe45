"""multi-head attention scaling each head's scores by sqrt(d_model), not sqrt(d_k)."""
CHECK = "multi_head_attention"
MISTAKE = None
MARKS = "4/14"
MESSAGE = 'expected'
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n = x.shape[0]
    split = lambda y: y.reshape(n, n_heads, -1).transpose(1, 0, 2)
    q, k, v = split(x @ w_q), split(x @ w_k), split(x @ w_v)
    s = q @ k.transpose(0, 2, 1) / math.sqrt(x.shape[-1])
    heads = softmax(s, axis=-1) @ v
    return heads.transpose(1, 0, 2).reshape(n, -1) @ w_o
