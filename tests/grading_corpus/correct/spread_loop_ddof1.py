"""dot_product_spread drawing one pair per sample, standard deviation with ddof=1."""
CHECK = "dot_product_spread"

import math

import numpy as np


def dot_product_spread(d_k, n_samples=10_000, seed=0):
    rng = np.random.default_rng(seed)
    dots = [float(rng.standard_normal(d_k) @ rng.standard_normal(d_k)) for _ in range(n_samples)]
    return float(np.std(dots, ddof=1))
