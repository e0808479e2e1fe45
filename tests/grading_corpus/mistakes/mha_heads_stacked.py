"""multi_head_attention that stacks the heads along the token axis, so the product with w_o fails."""
CHECK = "multi_head_attention"
MISTAKE = None
HINT = "The line that failed, `return np.concatenate(list(heads), axis=0) @ w_o`"
MARKS = "1/14"

import numpy as np

from attention_course import softmax


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n = x.shape[0]
    q, k, v = ((x @ w).reshape(n, n_heads, -1).transpose(1, 0, 2) for w in (w_q, w_k, w_v))
    heads = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])) @ v  # (h, n, d)
    return np.concatenate(list(heads), axis=0) @ w_o
