"""multi_head_attention that scales every head by 1/sqrt(d_model) instead of 1/sqrt(d_k of the head)."""
CHECK = "multi_head_attention"
MISTAKE = "scaled_by_d_model"
MARKS = "4/14"

import numpy as np

from attention_course import softmax


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n, width = x.shape[0], w_q.shape[1]
    q = (x @ w_q).reshape(n, n_heads, -1).transpose(1, 0, 2)
    k = (x @ w_k).reshape(n, n_heads, -1).transpose(1, 0, 2)
    v = (x @ w_v).reshape(n, n_heads, -1).transpose(1, 0, 2)
    weights = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(width))
    heads = weights @ v
    return heads.transpose(1, 0, 2).reshape(n, -1) @ w_o
