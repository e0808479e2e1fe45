"""causal_mask that lets each token see the next one too."""
CHECK = "causal_mask"
MISTAKE = "one_token_ahead"
MARKS = "1/4"

import numpy as np


def causal_mask(n):
    return np.tril(np.ones((n, n), dtype=bool), k=1)
