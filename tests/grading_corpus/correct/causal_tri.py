"""causal_mask as np.tri(n, dtype=bool)."""
CHECK = "causal_mask"
import numpy as np
def causal_mask(n):
    return np.tri(n, dtype=bool)
