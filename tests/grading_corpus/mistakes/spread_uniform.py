"""dot_product_spread with entries uniform on [0, 1): not mean 0, not variance 1."""
CHECK = "dot_product_spread"
MISTAKE = "entries_not_unit_variance"
MARKS = "0/10"

import numpy as np


def dot_product_spread(d_k, n_samples=10_000, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.random((n_samples, d_k))
    k = rng.random((n_samples, d_k))
    return float((q * k).sum(axis=1).std())
