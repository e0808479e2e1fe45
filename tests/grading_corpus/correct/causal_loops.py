"""causal_mask filled row by row in a loop."""
CHECK = "causal_mask"
import numpy as np
def causal_mask(n):
    m = np.zeros((n, n), dtype=bool)
    for i in range(n):
        m[i, : i + 1] = True
    return m
