"""causal_mask with np.tril(k=-1): hides the diagonal."""
CHECK = "causal_mask"
MISTAKE = 'excludes_diagonal'
MARKS = "0/4"

import numpy as np
def causal_mask(n):
    return np.tril(np.ones((n, n), dtype=bool), k=-1)
