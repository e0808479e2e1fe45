"""dot_product_spread that divides the standard deviation by sqrt(n_samples): the standard error, not the spread."""
CHECK = "dot_product_spread"
MISTAKE = "mean_not_spread"
MARKS = "0/10"
ABSENT = ("mean of the dot products",)

import numpy as np


def dot_product_spread(d_k, n_samples=10_000, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    return float(np.std(np.sum(q * k, axis=1)) / np.sqrt(n_samples))
