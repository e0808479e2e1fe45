"""One RoPE setting of a config.json, read as transformers reads it, and the check for a key a family needs.

Shared by `config_json` (the families read there) and `config_hybrid` (the
delta-rule hybrids): a RoPE dict's type, base and scaling rule, with
transformers' defaults filled in, refused with an `UnsupportedConfigError`
naming the key where this package does not implement it.
"""

from __future__ import annotations

from ..core.rope_scaling import ROPE_TYPES, RopeScaling
from .options import UnsupportedConfigError


def need(cfg: dict, key: str, source: str):
    """cfg[key], or an UnsupportedConfigError naming the key if it is missing or null."""
    if key not in cfg or cfg[key] is None:
        raise UnsupportedConfigError(f"{source}: the key {key!r} is missing")
    return cfg[key]


def rope_setting(params: dict, theta, cfg: dict, key: str, source: str, nested: bool) -> RopeScaling:
    """One RoPE setting: its base and its scaling rule, transformers' defaults filled in."""
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type not in ROPE_TYPES:
        raise UnsupportedConfigError(
            f"{source}: {key}.rope_type = {rope_type!r} is not implemented; only {', '.join(map(repr, ROPE_TYPES))}")
    factor = params.get("partial_rotary_factor")
    if factor not in (None, 1, 1.0):
        raise UnsupportedConfigError(f"{source}: {key}.partial_rotary_factor = {factor!r} is not implemented; only 1.0")
    base = params.get("rope_theta", theta)
    if not isinstance(base, (int, float)) or isinstance(base, bool) or base <= 0:
        raise UnsupportedConfigError(f"{source}: {key}.rope_theta must be a positive number; got {base!r}")
    max_positions = int(cfg["max_position_embeddings"])
    original = params.get("original_max_position_embeddings") or max_positions
    if rope_type in ("llama3", "yarn") and not nested and cfg.get("original_max_position_embeddings"):
        original = cfg["original_max_position_embeddings"]  # transformers lets the top-level key win
    if rope_type in ("linear", "dynamic", "llama3") and params.get("factor") is None:
        raise UnsupportedConfigError(f"{source}: {key}.factor is missing for rope_type {rope_type!r}")
    factor = params.get("factor")
    if rope_type == "yarn" and factor is None:
        factor = max_positions / original  # DeepSeek's way: the ratio of the two context lengths
    extra = {}
    if rope_type == "llama3":
        extra = {"low_freq_factor": float(need(params, "low_freq_factor", f"{source}: {key}")),
                 "high_freq_factor": float(need(params, "high_freq_factor", f"{source}: {key}"))}
    elif rope_type == "yarn":
        extra = {"beta_fast": float(params.get("beta_fast") or 32.0), "beta_slow": float(params.get("beta_slow") or 1.0),
                 "truncate": True if nested else bool(params.get("truncate", True)),  # transformers reads the top dict
                 "mscale": params.get("mscale"),
                 "mscale_all_dim": params.get("mscale_all_dim"), "attention_factor": params.get("attention_factor")}
    return RopeScaling(rope_type, float(base), factor=float(factor if factor is not None else 1.0),
                       original_context=int(original) if rope_type in ("llama3", "yarn") else None,
                       max_positions=max_positions, **extra)
