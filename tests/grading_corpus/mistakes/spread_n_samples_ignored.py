"""dot_product_spread that always draws 10 000 samples, whatever its n_samples."""
CHECK = "dot_product_spread"
MISTAKE = "n_samples_ignored"
MARKS = "9/10"

import numpy as np


def dot_product_spread(d_k, n_samples=10_000, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((10_000, d_k))
    k = rng.standard_normal((10_000, d_k))
    return float(np.std(np.sum(q * k, axis=1)))
