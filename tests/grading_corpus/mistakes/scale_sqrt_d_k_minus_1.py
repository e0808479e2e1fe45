"""scale_scores dividing by sqrt(d_k - 1)."""
CHECK = "scale_scores"
MISTAKE = 'observed_constant_factor'
MARKS = "0/11"

import numpy as np
def scale_scores(scores, d_k):
    return scores / np.sqrt(d_k - 1)
