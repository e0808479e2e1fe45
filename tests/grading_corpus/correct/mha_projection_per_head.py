"""multi_head_attention adding each head's output times its rows of w_o."""
CHECK = "multi_head_attention"

import math

import numpy as np


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    d_k = w_q.shape[1] // n_heads
    d_v = w_v.shape[1] // n_heads
    out = 0
    for h in range(n_heads):
        q = x @ w_q[:, h*d_k:(h+1)*d_k]; k = x @ w_k[:, h*d_k:(h+1)*d_k]; v = x @ w_v[:, h*d_v:(h+1)*d_v]
        s = q @ k.T / math.sqrt(d_k)
        e = np.exp(s - s.max(1, keepdims=True))
        out = out + (e / e.sum(1, keepdims=True)) @ v @ w_o[h*d_v:(h+1)*d_v]
    return out
