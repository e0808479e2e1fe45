"""dot_product_spread that returns the formula instead of measuring."""
CHECK = "dot_product_spread"
MISTAKE = "formula_not_measurement"
MARKS = "1/10"

import math


def dot_product_spread(d_k, n_samples=10_000, seed=0):
    return math.sqrt(d_k)
