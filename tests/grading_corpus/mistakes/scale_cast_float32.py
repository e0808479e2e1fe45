"""scale_scores that casts its result to float32: float64 digits lost."""
CHECK = "scale_scores"
MISTAKE = "precision_lost"
MARKS = "2/11"

import numpy as np


def scale_scores(scores, d_k):
    return (scores / np.sqrt(d_k)).astype(np.float32)
