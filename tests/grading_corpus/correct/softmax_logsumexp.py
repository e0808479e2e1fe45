"""softmax as exp(x - logsumexp(x)), guarded for all -inf slices."""
CHECK = "softmax"

import math

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide='ignore'):
        lse = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return np.exp(x - np.where(np.isfinite(lse), lse, np.inf))
