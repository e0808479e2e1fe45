"""softmax that divides by a temperature of 2: an all -inf row gives nan, which is what is shown."""
CHECK = "softmax"
MISTAKE = 'not_finite'
MARKS = "8/26"

import numpy as np
def softmax(x, axis=-1):
    x = np.asarray(x) / 2
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
