"""padding_mask of shape (B, n, 1): it hides padding queries (rows), where padding hides keys (columns)."""
CHECK = "padding_mask"
MISTAKE = "masks_queries"
MARKS = "0/8"

import numpy as np


def padding_mask(lengths, n):
    return (np.arange(n)[None, :] < np.asarray(lengths)[:, None])[:, :, None]
