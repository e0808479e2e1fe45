"""causal_mask that accepts only a Python int: n may be a NumPy integer, like K.shape[0] of some arrays."""
CHECK = "causal_mask"
MESSAGE = 'raised TypeError: n must be an int, got int64'
MARKS = "4/5"

import numpy as np


def causal_mask(n):
    if type(n) is not int:
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    return np.tril(np.ones((n, n), dtype=bool))
