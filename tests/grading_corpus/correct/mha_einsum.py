"""multi_head_attention with np.einsum over (tokens, heads, d_k), scaled by math.sqrt (float32 stays float32)."""
CHECK = "multi_head_attention"
import math

import numpy as np
def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads):
    n = x.shape[0]
    q = (x @ w_q).reshape(n, n_heads, -1); k = (x @ w_k).reshape(n, n_heads, -1); v = (x @ w_v).reshape(n, n_heads, -1)
    s = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(q.shape[-1])
    e = np.exp(s - s.max(-1, keepdims=True)); w = e / e.sum(-1, keepdims=True)
    heads = np.einsum("hqk,khv->qhv", w, v)
    return heads.reshape(n, -1) @ w_o
