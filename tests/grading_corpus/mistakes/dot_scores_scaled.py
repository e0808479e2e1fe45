"""dot_scores that already divides by sqrt(d_k): scaling belongs to the next step."""
CHECK = "dot_scores"
MISTAKE = "scaled_too_early"
MARKS = "2/12"

import numpy as np


def dot_scores(query, keys):
    return keys @ query / np.sqrt(len(query))
