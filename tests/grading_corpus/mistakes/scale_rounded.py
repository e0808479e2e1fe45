"""scale_scores that rounds its result to three decimals, as for printing."""
CHECK = "scale_scores"
MISTAKE = "rounded"
MARKS = "4/11"

import numpy as np


def scale_scores(scores, d_k):
    return np.round(scores / np.sqrt(d_k), 3)
