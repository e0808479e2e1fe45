"""apply_rope with complex numbers: each pair (x_i, x_{i+d/2}) as one complex number times exp(i angle)."""
CHECK = "apply_rope"
import numpy as np
def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]; h = d // 2
    inv_freq = 1.0 / base ** (np.arange(0, d, 2) / d)
    ang = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq  # (n, d/2)
    z = (x[..., :h] + 1j * x[..., h:]) * np.exp(1j * ang)
    return np.concatenate([z.real, z.imag], axis=-1).astype(x.dtype)
