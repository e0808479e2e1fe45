"""causal_mask of shape (n+1, n+1)."""
CHECK = "causal_mask"
MISTAKE = 'wrong_shape'
MARKS = "0/4"

import numpy as np
def causal_mask(n):
    return np.tril(np.ones((n + 1, n + 1), dtype=bool))
