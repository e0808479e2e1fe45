"""dot_scores that normalises by the lengths: a cosine similarity."""
CHECK = "dot_scores"
MISTAKE = "cosine_similarity"
MARKS = "0/12"

import numpy as np


def dot_scores(query, keys):
    return keys @ query / (np.linalg.norm(keys, axis=1) * np.linalg.norm(query))
