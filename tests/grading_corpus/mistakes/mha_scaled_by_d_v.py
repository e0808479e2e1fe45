"""multi_head_attention that scales each head's scores by sqrt(d_v), the width of its values."""
CHECK = "multi_head_attention"
MISTAKE = "scaled_by_d_v"
MARKS = "12/14"

import math

import numpy as np

from attention_course import softmax


def _split(y, n, h):
    return y.reshape(n, h, -1).transpose(1, 0, 2)  # (n, h*d) -> (h, n, d)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n = x.shape[0]
    q, k, v = _split(x @ w_q, n, n_heads), _split(x @ w_k, n, n_heads), _split(x @ w_v, n, n_heads)
    heads = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(v.shape[-1])) @ v  # (h, n, d_v)
    concat = heads.transpose(1, 0, 2).reshape(n, -1)  # (h, n, d_v) -> (n, h*d_v)
    return concat @ w_o
