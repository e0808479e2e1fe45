"""dot_product_spread that draws from NumPy's global generator: the same arguments give another number each time."""
CHECK = "dot_product_spread"
MISTAKE = "not_reproducible"
MARKS = "9/10"

import numpy as np


def dot_product_spread(d_k, n_samples=10_000, seed=0):
    q = np.random.standard_normal((n_samples, d_k))
    k = np.random.standard_normal((n_samples, d_k))
    return float(np.std(np.sum(q * k, axis=1)))
