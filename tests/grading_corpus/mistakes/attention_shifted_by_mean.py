"""attention that subtracts each row's mean score before exp, not its max: exp overflows on large scores."""
CHECK = "attention"
MISTAKE = "not_finite"
MARKS = "15/17"
ABSENT = ("The result has nan",)

import math

import numpy as np


def attention(Q, K, V):
    s = Q @ K.T / math.sqrt(Q.shape[1])
    s = s - s.mean(-1, keepdims=True)
    w = np.exp(s); w /= w.sum(-1, keepdims=True)
    return w @ V, w
