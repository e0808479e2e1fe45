"""scale_scores that subtracts sqrt(d_k) instead of dividing by it."""
CHECK = "scale_scores"
MISTAKE = "subtracted_sqrt_d_k"
MARKS = "0/11"

import numpy as np


def scale_scores(scores, d_k):
    return scores - np.sqrt(d_k)
