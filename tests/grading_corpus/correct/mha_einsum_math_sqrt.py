"""multi_head_attention with einsum, weights reshaped per head."""
CHECK = "multi_head_attention"

import math

import numpy as np


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n, _ = x.shape
    d_k = w_q.shape[1] // n_heads
    d_v = w_v.shape[1] // n_heads
    q = np.einsum('nm,mhd->hnd', x, w_q.reshape(-1, n_heads, d_k))
    k = np.einsum('nm,mhd->hnd', x, w_k.reshape(-1, n_heads, d_k))
    v = np.einsum('nm,mhd->hnd', x, w_v.reshape(-1, n_heads, d_v))
    s = np.einsum('hqd,hkd->hqk', q, k) / math.sqrt(d_k)
    e = np.exp(s - s.max(-1, keepdims=True))
    a = e / e.sum(-1, keepdims=True)
    o = np.einsum('hqk,hkd->qhd', a, v).reshape(n, n_heads * d_v)
    return o @ w_o
