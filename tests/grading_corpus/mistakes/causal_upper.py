"""causal_mask that keeps the upper triangle: every token sees the future."""
CHECK = "causal_mask"
MISTAKE = "upper_triangle"
MARKS = "1/4"

import numpy as np


def causal_mask(n):
    return np.triu(np.ones((n, n), dtype=bool))
