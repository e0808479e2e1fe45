"""RoPE for longer contexts: the rules that rescale RoPE's frequencies (book/positions.ipynb).

RoPE turns pair i of a query or key by p * theta_i, theta_i = base^(-2i/d)
(`positions.rope_frequencies`). A model trained on contexts of L tokens has
seen every angle of the fast pairs, but the slow pairs, whose wavelength
2 pi / theta_i is longer than L, never made a full turn. Run on longer
contexts, those pairs meet angles never trained on. Each rule below changes
the frequencies (Hugging Face's `inv_freq`) so that the longer context maps
onto angles the model knows, and some also scale the scores:

- `linear_frequencies`: every theta_i divided by `factor` (position
  interpolation): positions 0..factor*L turn as 0..L did.
- `dynamic_ntk_frequencies`: the base is raised once the sequence passes the
  trained length, more the longer it gets ("dynamic NTK").
- `llama3_frequencies` (Llama 3.1 and later): pairs whose wavelength is
  shorter than L / high_freq_factor are kept, pairs longer than
  L / low_freq_factor are divided by `factor`, and those in between are
  blended by wavelength.
- `yarn_frequencies` (gpt-oss, DeepSeek-V3, Qwen long context): the same idea
  measured in turns over the trained context, with a linear ramp between
  beta_fast and beta_slow turns; `yarn_attention_factor` multiplies the
  rotated queries and keys (both, so the scores by its square), and
  DeepSeek also multiplies the softmax scale by `yarn_mscale` squared.

`RopeScaling` holds one rule and its numbers, as config.json gives them, and
`RopeScaling.frequencies(d)` returns (theta (d/2,), attention factor). The
frequencies are computed in float64; transformers computes them in float32,
which differs in the 7th significant digit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .positions import rope_frequencies

ROPE_TYPES = ("default", "linear", "dynamic", "llama3", "yarn")
"""The rules implemented, named as config.json's rope_type names them."""


def linear_frequencies(d: int, base: float, factor: float) -> np.ndarray:
    """(d/2,) theta_i / factor: every pair turns `factor` times slower (position interpolation)."""
    return rope_frequencies(d, base) / float(factor)


def dynamic_ntk_frequencies(d: int, base: float, factor: float, seq_len: int, max_positions: int) -> np.ndarray:
    """(d/2,) the plain frequencies with a larger base once seq_len passes max_positions ("dynamic NTK").

    base' = base * (factor * s / L - (factor - 1)) ^ (d / (d - 2)), with
    s = max(seq_len, L) and L = max_positions: at s = L, base' = base, so
    sequences no longer than the trained context see the plain frequencies.
    transformers recomputes them from the longest position of each forward call.
    """
    s = max(int(seq_len), int(max_positions))
    new_base = base * ((factor * s / max_positions) - (factor - 1)) ** (d / (d - 2))
    return rope_frequencies(d, new_base)


def llama3_frequencies(d: int, base: float, factor: float, low_freq_factor: float, high_freq_factor: float,
                       original_context: int) -> np.ndarray:
    """(d/2,) Llama 3.1's frequencies: each pair rescaled by its wavelength 2 pi / theta_i.

    With L = original_context: a wavelength shorter than L / high_freq_factor
    keeps theta_i; one longer than L / low_freq_factor gets theta_i / factor;
    in between, s = (L / wavelength - low_freq_factor) / (high_freq_factor -
    low_freq_factor) blends the two: (1 - s) theta_i / factor + s theta_i.
    """
    theta = rope_frequencies(d, base)  # (d/2,)
    wavelength = 2 * math.pi / theta  # (d/2,)
    low_wavelength = original_context / low_freq_factor  # longer than this: slowed by factor
    high_wavelength = original_context / high_freq_factor  # shorter than this: unchanged
    scaled = np.where(wavelength > low_wavelength, theta / factor, theta)
    smooth = (original_context / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelength >= high_wavelength) & (wavelength <= low_wavelength)
    return np.where(medium, blended, scaled)


def _yarn_dimension(turns: float, d: int, base: float, original_context: int) -> float:
    """The (fractional) pair index whose wavelength fits `turns` times into the original context."""
    return (d * math.log(original_context / (turns * 2 * math.pi))) / (2 * math.log(base))


def yarn_frequencies(d: int, base: float, factor: float, original_context: int, beta_fast: float = 32.0,
                     beta_slow: float = 1.0, truncate: bool = True) -> np.ndarray:
    """(d/2,) YaRN's frequencies: fast pairs kept, slow pairs divided by factor, a linear ramp between.

    Pair i makes L * theta_i / (2 pi) turns over the original context L. Pairs
    making more than beta_fast turns keep theta_i; fewer than beta_slow get
    theta_i / factor; between the two pair indices (rounded outward with
    `truncate`), the share of theta_i / factor grows linearly with i.
    """
    theta = rope_frequencies(d, base)  # (d/2,) extrapolation: the plain frequencies
    low = _yarn_dimension(beta_fast, d, base, original_context)
    high = _yarn_dimension(beta_slow, d, base, original_context)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001  # no division by zero, as transformers does
    ramp = np.clip((np.arange(d // 2) - low) / (high - low), 0.0, 1.0)  # (d/2,) 0: keep, 1: divide by factor
    return theta / factor * ramp + theta * (1 - ramp)


def yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    """0.1 * mscale * ln(scale) + 1 (1 for scale <= 1): how much YaRN sharpens the softmax."""
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def yarn_attention_factor(factor: float, mscale: float | None = None, mscale_all_dim: float | None = None,
                          attention_factor: float | None = None) -> float:
    """The number YaRN multiplies the rotated queries and keys by (Hugging Face's attention_scaling).

    attention_factor when config.json gives it; else yarn_mscale(factor, mscale)
    / yarn_mscale(factor, mscale_all_dim) when both are given (DeepSeek: 1.0
    for mscale = mscale_all_dim); else yarn_mscale(factor).
    """
    if attention_factor is not None:
        return float(attention_factor)
    if mscale and mscale_all_dim:
        return yarn_mscale(factor, mscale) / yarn_mscale(factor, mscale_all_dim)
    return yarn_mscale(factor)


@dataclass(frozen=True)
class RopeScaling:
    """How one layer rotates its queries and keys: the base and a scaling rule, as config.json gives them.

    >>> theta, factor = RopeScaling("llama3", 500000.0, factor=8.0, original_context=8192).frequencies(128)
    >>> theta.shape, float(theta[0]), factor        # the fastest pair is not rescaled
    ((64,), 1.0, 1.0)
    """

    rope_type: str = "default"
    """"default", "linear", "dynamic", "llama3" or "yarn" (`ROPE_TYPES`)."""
    base: float = 10000.0
    """rope_theta."""
    factor: float = 1.0
    """How many times longer the context becomes (all rules but "default")."""
    original_context: int | None = None
    """original_max_position_embeddings (llama3, yarn): the context trained on before the extension."""
    max_positions: int | None = None
    """max_position_embeddings (dynamic: the length past which the base grows)."""
    low_freq_factor: float = 1.0
    """llama3: wavelengths longer than original_context / low_freq_factor are divided by factor."""
    high_freq_factor: float = 4.0
    """llama3: wavelengths shorter than original_context / high_freq_factor are kept."""
    beta_fast: float = 32.0
    """yarn: pairs making more turns than this over the original context are kept."""
    beta_slow: float = 1.0
    """yarn: pairs making fewer turns than this are divided by factor."""
    truncate: bool = True
    """yarn: round the ramp's ends outward to whole pairs."""
    mscale: float | None = None
    """yarn: numerator of the attention factor (with mscale_all_dim)."""
    mscale_all_dim: float | None = None
    """yarn: denominator of the attention factor; DeepSeek also multiplies its softmax scale by
    yarn_mscale(factor, mscale_all_dim) squared."""
    attention_factor: float | None = None
    """yarn: the attention factor itself, when config.json gives it."""

    def __post_init__(self):
        if self.rope_type not in ROPE_TYPES:
            raise ValueError(f"rope_type must be one of {', '.join(map(repr, ROPE_TYPES))}; got {self.rope_type!r}")
        if self.rope_type in ("llama3", "yarn") and self.original_context is None:
            raise ValueError(f"rope_type {self.rope_type!r} needs original_context (original_max_position_embeddings)")
        if self.rope_type == "dynamic" and self.max_positions is None:
            raise ValueError("rope_type 'dynamic' needs max_positions (max_position_embeddings)")

    def frequencies(self, d: int, seq_len: int | None = None) -> tuple[np.ndarray, float]:
        """(theta (d/2,) float64, attention factor) for heads rotating d coordinates.

        seq_len matters only to "dynamic": the longest position + 1 of the
        call. The attention factor multiplies the rotated queries and keys
        (1.0 for every rule but yarn).
        """
        if self.rope_type == "linear":
            return linear_frequencies(d, self.base, self.factor), 1.0
        if self.rope_type == "dynamic":
            return dynamic_ntk_frequencies(d, self.base, self.factor, seq_len or 0, self.max_positions), 1.0
        if self.rope_type == "llama3":
            return llama3_frequencies(d, self.base, self.factor, self.low_freq_factor, self.high_freq_factor,
                                      self.original_context), 1.0
        if self.rope_type == "yarn":
            theta = yarn_frequencies(d, self.base, self.factor, self.original_context, self.beta_fast,
                                     self.beta_slow, self.truncate)
            return theta, yarn_attention_factor(self.factor, self.mscale, self.mscale_all_dim, self.attention_factor)
        return rope_frequencies(d, self.base), 1.0
