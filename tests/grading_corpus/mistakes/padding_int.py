"""padding_mask returning ints 0/1."""
CHECK = "padding_mask"
MISTAKE = 'mask_not_boolean'
MARKS = "0/8"

import numpy as np
def padding_mask(lengths, n):
    return (np.arange(n)[None, :] < np.asarray(lengths)[:, None]).astype(int)[:, None, :]
