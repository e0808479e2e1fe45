"""dot_scores computed in float32 (downcast)."""
CHECK = "dot_scores"
MISTAKE = 'precision_lost'
MARKS = "2/12"

import numpy as np
def dot_scores(query, keys):
    return keys.astype(np.float32) @ query.astype(np.float32)
