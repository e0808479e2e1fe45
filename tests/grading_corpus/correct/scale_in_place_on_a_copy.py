"""scale_scores dividing a copy in place."""
CHECK = "scale_scores"

import math

import numpy as np


def scale_scores(scores, d_k):
    out = np.array(scores, dtype=np.result_type(scores, 1.0))
    out /= np.sqrt(d_k)
    return out
