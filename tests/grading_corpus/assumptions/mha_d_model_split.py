"""multi_head_attention that sizes each head by d_model // n_heads: it assumes d_model = n_heads * d_k."""
CHECK = "multi_head_attention"
MESSAGE = ('raised ValueError: cannot reshape array', 'cut down to the smallest input')
MARKS = "10/14"

import numpy as np

from attention_course import scaled_dot_product_attention


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n, d_model = x.shape
    d_k = d_model // n_heads
    q, k, v = (np.swapaxes((x @ w)[:, : n_heads * d_k].reshape(n, n_heads, d_k), 0, 1) for w in (w_q, w_k, w_v))
    heads = scaled_dot_product_attention(q, k, v)  # (h, n, d_k)
    return np.swapaxes(heads, 0, 1).reshape(n, n_heads * d_k) @ w_o[: n_heads * d_k]
