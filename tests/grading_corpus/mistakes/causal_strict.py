"""causal_mask that hides each token from itself."""
CHECK = "causal_mask"
MISTAKE = "excludes_diagonal"
MARKS = "0/4"

import numpy as np


def causal_mask(n):
    return np.tril(np.ones((n, n), dtype=bool), k=-1)
