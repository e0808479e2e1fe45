"""multi_head_attention that ignores n_heads: one attention over the full width."""
CHECK = "multi_head_attention"
MISTAKE = "single_head"
MARKS = "3/14"

import numpy as np

from attention_course import softmax


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    weights = softmax(q @ k.T / np.sqrt(q.shape[-1]))
    return weights @ v @ w_o
