"""multi_head_attention that puts the heads side by side in reverse order."""
CHECK = "multi_head_attention"
MISTAKE = "heads_merged_in_reverse"
MARKS = "1/14"

import math

import numpy as np

from attention_course import softmax


def _split(y, n, h):
    return y.reshape(n, h, -1).transpose(1, 0, 2)  # (n, h*d) -> (h, n, d)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n = x.shape[0]
    q, k, v = _split(x @ w_q, n, n_heads), _split(x @ w_k, n, n_heads), _split(x @ w_v, n, n_heads)
    heads = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])) @ v  # (h, n, d_v)
    concat = heads[::-1].transpose(1, 0, 2).reshape(n, -1)  # the last head first
    return concat @ w_o
