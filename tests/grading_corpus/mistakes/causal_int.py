"""causal_mask of integers 0 and 1 instead of booleans."""
CHECK = "causal_mask"
MISTAKE = "mask_not_boolean"
MARKS = "0/4"

import numpy as np


def causal_mask(n):
    return np.tril(np.ones((n, n), dtype=int))
