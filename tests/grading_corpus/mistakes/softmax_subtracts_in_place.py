"""softmax that subtracts the max in place (x -= ...), mutating the input."""
CHECK = "softmax"
MISTAKE = 'modifies_input'
MARKS = "0/26"

import numpy as np
def softmax(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)
