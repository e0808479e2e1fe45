"""dot_product_spread as the root mean square of the dot products (their mean is 0)."""
CHECK = "dot_product_spread"

import math

import numpy as np


def dot_product_spread(d_k, n_samples=10_000, seed=0):
    rng = np.random.default_rng(seed)
    k = rng.standard_normal((n_samples, d_k)); q = rng.standard_normal((n_samples, d_k))
    d = np.einsum('sd,sd->s', q, k)
    return float(np.sqrt(np.mean(d ** 2)))
