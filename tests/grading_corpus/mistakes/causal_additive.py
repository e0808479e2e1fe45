"""causal_mask returned as an additive float mask: 0 where allowed, -inf where hidden."""
CHECK = "causal_mask"
MISTAKE = "additive_mask"
MARKS = "0/4"

import numpy as np


def causal_mask(n):
    return np.where(np.tril(np.ones((n, n))) == 1, 0.0, -np.inf)
