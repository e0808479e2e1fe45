"""padding_mask repeated over the queries: shape (B, n, n) instead of (B, 1, n)."""
CHECK = "padding_mask"
MISTAKE = "mask_repeated_over_queries"
MARKS = "0/8"

import numpy as np


def padding_mask(lengths, n):
    keys = np.arange(n)[None, :] < np.asarray(lengths)[:, None]  # (B, n)
    return np.repeat(keys[:, None, :], n, axis=1)
