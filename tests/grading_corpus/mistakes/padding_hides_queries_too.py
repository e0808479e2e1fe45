"""padding_mask that hides padding queries as well as padding keys: shape (B, n, n)."""
CHECK = "padding_mask"
MISTAKE = "hides_queries_and_keys"
MARKS = "0/8"

import numpy as np


def padding_mask(lengths, n):
    real = np.arange(n)[None, :] < np.asarray(lengths)[:, None]  # (B, n)
    return real[:, None, :] & real[:, :, None]
