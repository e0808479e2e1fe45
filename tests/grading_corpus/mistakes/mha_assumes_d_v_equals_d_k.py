"""multi_head_attention that cuts the values into heads of d_k columns, as if d_v were d_k."""
CHECK = "multi_head_attention"
MISTAKE = None
HINT = "The line that failed, `v = (x @ w_v).reshape(n, n_heads, d_k).transpose(1, 0, 2)`"
MARKS = "12/14"

import numpy as np

from attention_course import softmax


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n = x.shape[0]
    d_k = w_q.shape[1] // n_heads
    q = (x @ w_q).reshape(n, n_heads, d_k).transpose(1, 0, 2)
    k = (x @ w_k).reshape(n, n_heads, d_k).transpose(1, 0, 2)
    v = (x @ w_v).reshape(n, n_heads, d_k).transpose(1, 0, 2)
    heads = softmax(q @ k.transpose(0, 2, 1) / d_k ** 0.5) @ v
    return heads.transpose(1, 0, 2).reshape(n, -1) @ w_o
