"""scale_scores that divides by 2 sqrt(d_k): every value half the expected one."""
CHECK = "scale_scores"
MISTAKE = "observed_constant_factor"
MARKS = "0/11"

import numpy as np


def scale_scores(scores, d_k):
    return scores / (2 * np.sqrt(d_k))
