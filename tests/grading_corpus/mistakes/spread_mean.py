"""dot_product_spread that returns the mean of q.k instead of its spread."""
CHECK = "dot_product_spread"
MISTAKE = "mean_not_spread"
MARKS = "0/10"

import numpy as np


def dot_product_spread(d_k, n_samples=10_000, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    return float(np.mean((q * k).sum(axis=1)))
