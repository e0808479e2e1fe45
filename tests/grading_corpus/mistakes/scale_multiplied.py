"""scale_scores that multiplies by sqrt(d_k) instead of dividing."""
CHECK = "scale_scores"
MISTAKE = "multiplied_by_sqrt_d_k"
MARKS = "0/11"

import numpy as np


def scale_scores(scores, d_k):
    return scores * np.sqrt(d_k)
