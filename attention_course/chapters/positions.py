"""What the positions chapter measures and cites (book/positions.ipynb).

The position functions themselves (`apply_rope`, `alibi_bias`, ...) are in
`core.positions`; here are the chapter's measurements of them and the facts it
quotes about real models.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..core._checks import positive_int
from ..core.positions import apply_rope, rope_frequencies


@dataclass(frozen=True)
class RopeModel:
    """A released model's RoPE settings, as its published configuration states them."""

    name: str
    """The model, e.g. "Llama 2 7B"."""
    rope_theta: float
    """The base of its frequencies (`rope_theta` in config.json)."""
    head_dim: int
    """d_k, the size of one head (hidden_size / num_attention_heads)."""
    context: int
    """`max_position_embeddings`: the longest sequence it was configured for."""
    source: str
    """Where the numbers are published."""


_ROPE_MODEL_NAMES = (
    ("Llama 2 7B", "meta-llama/Llama-2-7b-hf"),
    ("Llama 3 8B", "meta-llama/Meta-Llama-3-8B"),
    ("Qwen2 7B", "Qwen/Qwen2-7B"),
)
"""The models `ROPE_MODELS` cites: a label and the Hugging Face Hub name of its config.json."""


@functools.cache
def _rope_models() -> tuple[RopeModel, ...]:
    # Read from `decoder.published` when first asked for: the decoder package is far heavier than this chapter's
    # measurements, which a student's check of RoPE imports.
    from ..decoder.published import published_entry

    models = []
    for label, name in _ROPE_MODEL_NAMES:
        entry = published_entry(name)
        config = entry.config
        models.append(RopeModel(label, config.rope_theta, config.head_dim, config.max_positions, entry.source))
    return tuple(models)


def __getattr__(name: str):
    if name == "ROPE_MODELS":
        # Three models with the same head size and three bases: rope_theta, head size and context from config.json.
        return _rope_models()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def rope_wavelengths(d: int, base: float = 10000.0) -> np.ndarray:
    """(d // 2,) tokens per full turn of each RoPE pair: 2 pi / theta_i, from 2 pi (pair 0) to about 2 pi base."""
    return 2 * np.pi / rope_frequencies(d, base)


def slow_pairs(d: int, base: float, context: int) -> int:
    """How many of the d/2 pairs turn less than once over `context` tokens (wavelength > context).

    Their angles never wrap around within the context, so every distance up
    to it gives them a different angle.
    """
    context = positive_int(context, "context")
    return int((rope_wavelengths(d, base) > context).sum())


def rope_decay(distances, d: int, base: float = 10000.0, *, n_samples: int = 512, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """How RoPE's score of a vector with itself falls with the distance between them.

    Draws `n_samples` random vectors q (standard normal entries, d of them),
    rotates each to position t for every distance t and measures
    mean(q_rot(t) . q) / mean(|q|^2): 1 at distance 0. For such vectors the
    expected value is the mean over the pairs of cos(t * theta_i), returned too.

    Args:
        distances: (n_t,) non-negative integer distances.
        d: head size, even.
        base: rope_theta.
        n_samples: random vectors per distance.
        seed: for `np.random.default_rng`.

    Returns:
        (measured (n_t,), expected (n_t,)).
    """
    t = np.asarray(distances)
    if t.ndim != 1 or t.dtype.kind not in "iu" or (t < 0).any():
        raise ValueError(f"distances must be a 1-D array of non-negative integers; got {t.dtype} of shape {t.shape}")
    n_samples = positive_int(n_samples, "n_samples")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, 1, d))  # (S, 1, d): S sequences of one token
    norm2 = (q * q).sum(axis=-1).mean()
    # Every vector moved to position t (the key stays at 0, where RoPE leaves it as it is).
    measured = np.array([(apply_rope(q, [step], base) * q).sum(axis=-1).mean() / norm2
                         for step in t])  # (n_t,)
    expected = np.cos(t[:, None] * rope_frequencies(d, base)[None, :]).mean(axis=-1)  # (n_t, d/2) -> (n_t,)
    return measured, expected
