"""dot_product_spread that dots each query with itself."""
CHECK = "dot_product_spread"
MISTAKE = 'dot_with_itself'
MARKS = "0/10"

import numpy as np
def dot_product_spread(d_k, n_samples=10_000, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, d_k))
    return float(np.std((q * q).sum(axis=1)))
