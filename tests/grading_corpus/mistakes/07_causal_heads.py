"""multi_head_attention with a causal mask no one asked for (is_causal=True, as a decoder would)."""
CHECK = "multi_head_attention"
MISTAKE = "causal_mask_applied"
MARKS = "2/14"

import numpy as np

from attention_course import softmax


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n = x.shape[0]
    d_k = w_q.shape[1] // n_heads
    q = (x @ w_q).reshape(n, n_heads, d_k).transpose(1, 0, 2)
    k = (x @ w_k).reshape(n, n_heads, d_k).transpose(1, 0, 2)
    v = (x @ w_v).reshape(n, n_heads, -1).transpose(1, 0, 2)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(d_k)
    scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    heads = softmax(scores, axis=-1) @ v
    return heads.transpose(1, 0, 2).reshape(n, -1) @ w_o
