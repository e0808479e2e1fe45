"""dot_product_spread that returns the variance of q.k instead of its standard deviation."""
CHECK = "dot_product_spread"
MISTAKE = "variance_not_spread"
MARKS = "1/10"

import numpy as np


def dot_product_spread(d_k, n_samples=10_000, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    return float(np.var((q * k).sum(axis=1)))
