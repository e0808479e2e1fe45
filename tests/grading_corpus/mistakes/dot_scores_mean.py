"""dot_scores that averages the products instead of adding them up."""
CHECK = "dot_scores"
MISTAKE = "mean_not_sum"
MARKS = "2/12"

import numpy as np


def dot_scores(query, keys):
    return np.mean(keys * query, axis=1)
