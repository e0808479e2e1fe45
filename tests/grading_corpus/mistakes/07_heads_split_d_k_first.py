"""multi_head_attention that splits the heads with reshape(n, d_k, n_heads): each head takes every n_heads-th column."""
CHECK = "multi_head_attention"
MISTAKE = "heads_split_into_strided_columns"
MARKS = "1/14"

import numpy as np

from attention_course import softmax


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n = x.shape[0]
    d_k = w_q.shape[1] // n_heads
    d_v = w_v.shape[1] // n_heads
    q = (x @ w_q).reshape(n, d_k, n_heads).transpose(2, 0, 1)
    k = (x @ w_k).reshape(n, d_k, n_heads).transpose(2, 0, 1)
    v = (x @ w_v).reshape(n, d_v, n_heads).transpose(2, 0, 1)
    heads = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d_k), axis=-1) @ v
    return heads.transpose(1, 0, 2).reshape(n, -1) @ w_o
