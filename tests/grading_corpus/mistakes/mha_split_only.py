"""multi_head_attention that splits with reshape(h, n, d_k) but merges with the right inverse transpose."""
CHECK = "multi_head_attention"
MISTAKE = "heads_split_without_transpose"
MARKS = "3/14"

import numpy as np

from attention_course import softmax


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n = x.shape[0]
    q, k, v = ((x @ w).reshape(n_heads, n, -1) for w in (w_q, w_k, w_v))
    heads = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])) @ v  # (h, n, d)
    return heads.transpose(1, 0, 2).reshape(n, -1) @ w_o
