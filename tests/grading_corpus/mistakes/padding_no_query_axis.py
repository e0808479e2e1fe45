"""padding_mask of shape (B, n): it does not broadcast over the queries."""
CHECK = "padding_mask"
MISTAKE = "no_query_axis"
MARKS = "0/8"

import numpy as np


def padding_mask(lengths, n):
    return np.arange(n)[None, :] < np.asarray(lengths)[:, None]
