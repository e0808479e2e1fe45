"""attention with einsum and a log-sum-exp softmax."""
CHECK = "attention"

import math

import numpy as np


def attention(Q, K, V):
    s = np.einsum('qd,kd->qk', Q, K) * (1 / math.sqrt(Q.shape[-1]))
    m = s.max(-1, keepdims=True)
    lse = m + np.log(np.exp(s - m).sum(-1, keepdims=True))
    w = np.exp(s - lse)
    return np.einsum('qk,kv->qv', w, V), w
