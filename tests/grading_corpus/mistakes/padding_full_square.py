"""padding_mask (B, n, n) hiding padded keys and padded queries."""
CHECK = "padding_mask"
MISTAKE = 'hides_queries_and_keys'
MARKS = "0/8"

import numpy as np
def padding_mask(lengths, n):
    m = np.arange(n)[None, :] < np.asarray(lengths)[:, None]
    return m[:, None, :] & m[:, :, None]
