"""causal_mask as np.greater_equal.outer."""
CHECK = "causal_mask"

import math

import numpy as np


def causal_mask(n):
    return np.greater_equal.outer(np.arange(n), np.arange(n))
