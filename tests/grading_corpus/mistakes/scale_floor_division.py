"""scale_scores with floor division: the scaled scores are rounded down."""
CHECK = "scale_scores"
MISTAKE = "integer_division"
MARKS = "1/11"

import numpy as np


def scale_scores(scores, d_k):
    return scores // np.sqrt(d_k)
