"""multi_head_attention that reshapes straight to (h, n, d_k), mixing tokens across heads."""
CHECK = "multi_head_attention"
MISTAKE = "heads_reshaped_wrongly"
MARKS = "3/14"

import numpy as np

from attention_course import softmax


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n = x.shape[0]
    q = (x @ w_q).reshape(n_heads, n, -1)
    k = (x @ w_k).reshape(n_heads, n, -1)
    v = (x @ w_v).reshape(n_heads, n, -1)
    weights = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1]))
    heads = weights @ v
    return heads.reshape(n, -1) @ w_o
