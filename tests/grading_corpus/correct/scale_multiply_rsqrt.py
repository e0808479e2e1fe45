"""scale_scores multiplying by 1/sqrt(d_k)."""
CHECK = "scale_scores"
import numpy as np
def scale_scores(scores, d_k):
    return np.asarray(scores) * float(1.0 / np.sqrt(d_k))  # a Python float: float32 stays float32
