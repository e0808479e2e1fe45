"""dot_product_spread that forgets the sum over d_k: the std of single products q_i k_i, about 1."""
CHECK = "dot_product_spread"
MISTAKE = "spread_about_one"
MARKS = "1/10"

import numpy as np


def dot_product_spread(d_k, n_samples=10_000, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))
    k = rng.standard_normal((n_samples, d_k))
    return float(np.std(q * k))
