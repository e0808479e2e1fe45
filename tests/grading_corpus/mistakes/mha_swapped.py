"""multi_head_attention whose heads score K Q^T instead of Q K^T."""
CHECK = "multi_head_attention"
MISTAKE = "query_key_swapped"
MARKS = "2/14"

import numpy as np

from attention_course import softmax


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n = x.shape[0]
    q, k, v = ((x @ w).reshape(n, n_heads, -1).transpose(1, 0, 2) for w in (w_q, w_k, w_v))
    heads = softmax(k @ q.transpose(0, 2, 1) / np.sqrt(q.shape[-1])) @ v
    return heads.transpose(1, 0, 2).reshape(n, -1) @ w_o
