"""dot_product_spread drawing the keys before the queries, in one array: another sample, the same spread."""
CHECK = "dot_product_spread"
import numpy as np
def dot_product_spread(d_k, n_samples=10_000, seed=0):
    rng = np.random.default_rng(seed)
    k, q = rng.standard_normal((2, n_samples, d_k))
    return float(np.einsum("sd,sd->s", q, k).std())
