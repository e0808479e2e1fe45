"""causal_mask of floats: a float mask would be added to the scores, not used as a mask."""
CHECK = "causal_mask"
MISTAKE = "mask_not_boolean"
MARKS = "0/4"

import numpy as np


def causal_mask(n):
    return np.tril(np.ones((n, n)))
