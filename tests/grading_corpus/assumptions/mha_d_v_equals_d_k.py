"""multi_head_attention that splits the values with the width of the queries: it assumes d_v = d_k."""
CHECK = "multi_head_attention"
MESSAGE = ('raised ValueError: cannot reshape array', 'cut down to the smallest input')
MARKS = "12/14"

import numpy as np

from attention_course import scaled_dot_product_attention


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n = x.shape[0]
    d_k = w_q.shape[1] // n_heads
    q, k, v = (np.swapaxes((x @ w).reshape(n, -1, d_k), 0, 1) for w in (w_q, w_k, w_v))
    heads = scaled_dot_product_attention(q, k, v)  # (h, n, d_k): raises when d_v != d_k
    return np.swapaxes(heads, 0, 1).reshape(n, -1) @ w_o
