"""dot_product_spread that always draws from the same generator, whatever its seed."""
CHECK = "dot_product_spread"
MISTAKE = "seed_ignored"
MARKS = "9/10"

import numpy as np


def dot_product_spread(d_k, n_samples=10_000, seed=0):
    rng = np.random.default_rng(0)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    return float(np.std(np.sum(q * k, axis=1)))
