"""dot_scores summing products key by key in Python."""
CHECK = "dot_scores"

import math

import numpy as np


def dot_scores(query, keys):
    out = np.empty(len(keys), dtype=np.result_type(query, keys))
    for j, k in enumerate(keys):
        out[j] = sum(a * b for a, b in zip(k, query))
    return out
