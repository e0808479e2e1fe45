"""softmax that lets an all -inf slice give nan, then turns nan into 0."""
CHECK = "softmax"

import math

import numpy as np


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    with np.errstate(invalid='ignore'):
        e = np.exp(x - m)
        out = e / e.sum(axis=axis, keepdims=True)
    return np.nan_to_num(out, nan=0.0)
