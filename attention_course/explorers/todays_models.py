"""Explorer 8, today's models: the cache per token of MHA, GQA, MQA and MLA, and RoPE's frequencies under each scaling rule (book/todays_models.ipynb).

The browser module is `js/todays_models.js`. The page receives the package's constants in its state:
each dtype's item size and the published configurations of `decoder.published.PUBLISHED_CONFIGS`,
read into their attention shapes and their RoPE settings, so that it counts as `decoder.cache_bytes`
does and rescales as `core.rope_scaling.RopeScaling` does.

For a model without a latent, the latent attention row uses DeepSeek-V2's choice for its comparison
of cache sizes: a latent of 4 d and a RoPE key of d / 2, for heads of size d (DeepSeek-V3's 512 and 64
for d = 128).
"""

from __future__ import annotations

import math
from dataclasses import replace

import traitlets as t

from ..chapters.todays_models import rescaled_pairs
from ..core.rope_scaling import ROPE_TYPES, RopeScaling
from ..decoder.cache import cache_bytes, itemsize
from ..decoder.config import DecoderConfig, LatentAttentionConfig
from ..decoder.published import PUBLISHED_CONFIGS
from .widget import Explorer

DTYPES = ("bfloat16", "float32", "float8_e4m3fn")
"""The dtypes a cache is kept in that the explorer offers; their sizes come from `decoder.cache.itemsize`."""

LAYOUTS = ("MHA", "GQA", "MQA", "MLA")
"""The four ways of keeping keys and values the explorer compares, in its table's order."""

LIMITS = {"n_layers": 256, "n_heads": 256, "n_kv_heads": 256, "head_dim": 1024, "v_head_dim": 1024,
          "kv_lora_rank": 4096, "qk_rope_head_dim": 1024, "window": 2**20, "sliding_layers": 256, "context": 2**20,
          "rope_dim": 1024, "original_context": 2**20}
"""Largest value of each whole number the explorer takes: every byte count stays below 2**53, exact in JavaScript."""

LOWEST = {"window": 0, "sliding_layers": 0, "rope_dim": 4}
"""Smallest values where it is not 1 (0 for no window; RoPE needs at least two pairs)."""

FLOAT_LIMITS = {"rope_base": (1.0, 1e12), "factor": (1.0, 1024.0), "low_freq_factor": (0.0, 1024.0),
                "high_freq_factor": (0.0, 1024.0), "beta_fast": (0.0, 1024.0), "beta_slow": (0.0, 1024.0)}
"""Open lower and closed upper bound of each real number: base in (1, 10^12], factor in [1, 1024], the others in (0, 1024]."""

DEFAULT_PRESET = "deepseek-ai/DeepSeek-V3"


def _preset(entry) -> dict:
    """The explorer's fields of one published configuration: attention shapes, windows, the full layers' RoPE."""
    c = entry.config
    windows = [w for w in c.windows if w is not None]
    full = [r for r, w in zip(c.ropes, c.windows) if r is not None and w is None]
    rope = (full or [r for r in c.ropes if r is not None])[0]  # a global layer's, if one rotates
    return {
        "name": entry.name,
        "layout": "MLA" if c.latent is not None else
                  {"multi-head": "MHA", "multi-query": "MQA", "grouped-query": "GQA"}[c.attention_kind],
        "n_layers": c.n_layers, "n_heads": c.n_heads, "n_kv_heads": c.n_kv_heads, "head_dim": c.head_dim,
        "v_head_dim": c.v_head_dim,
        "kv_lora_rank": c.latent.kv_lora_rank if c.latent else 4 * c.head_dim,  # DeepSeek-V2's choice: 4 d ...
        "qk_rope_head_dim": c.latent.qk_rope_head_dim if c.latent else c.head_dim // 2,  # ... and d / 2
        "window": max(windows, default=0), "sliding_layers": len(windows), "context": c.max_positions,
        "rope_type": rope.rope_type, "rope_base": rope.base, "rope_dim": c.rope_dim, "factor": rope.factor,
        # the configuration's trained context where it names one (llama3, yarn: original_max_position_embeddings;
        # dynamic: max_position_embeddings); else (linear, Gemma 3) the context whose angles the rule spreads over
        # the whole: max_position_embeddings / factor
        "original_context": rope.original_context or (rope.max_positions if rope.rope_type == "dynamic" else None)
                            or round(c.max_positions / rope.factor),
        "low_freq_factor": rope.low_freq_factor, "high_freq_factor": rope.high_freq_factor,
        "beta_fast": rope.beta_fast, "beta_slow": rope.beta_slow, "truncate": rope.truncate,
        "mscale": rope.mscale or 0.0, "mscale_all_dim": rope.mscale_all_dim or 0.0,
    }


PRESETS = tuple(_preset(entry) for entry in PUBLISHED_CONFIGS)
"""Every published configuration, as the explorer's fields."""


def attention_shape(state: dict) -> DecoderConfig:
    """A `DecoderConfig` with the state's attention shapes, windows and dtype: all that `cache_bytes` reads.

    It always carries a latent (kv_lora_rank, RoPE key qk_rope_head_dim, the rest of the key's
    head_dim without position, values of v_head_dim), so that `cache_bytes(config, latent=False)`
    counts each head's key (head_dim) and value (v_head_dim), and `cache_bytes(config)` the latent.
    Sizes that do not enter the cache (vocabulary, widths) are 1.
    """
    n_layers, sliding = state["n_layers"], state["sliding_layers"]
    window = state["window"] or None
    windows = (window,) * sliding + (None,) * (n_layers - sliding)
    latent = LatentAttentionConfig(kv_lora_rank=state["kv_lora_rank"],
                                   qk_nope_head_dim=state["head_dim"] - state["qk_rope_head_dim"],
                                   qk_rope_head_dim=state["qk_rope_head_dim"], v_head_dim=state["v_head_dim"])
    return DecoderConfig(model_type="deepseek_v3", vocab_size=1, d_model=1, n_layers=n_layers, n_heads=state["n_heads"],
                         n_kv_heads=state["n_kv_heads"], head_dim=state["head_dim"], d_ff=1, rms_norm_eps=1e-6,
                         rope_theta=state["rope_base"], tie_word_embeddings=False, qkv_bias=False, o_bias=False,
                         mlp_bias=False, windows=windows, max_positions=state["context"], latent=latent,
                         dtype=state["dtype"])


def cache_error(state: dict) -> str | None:
    """Why the state's attention shapes cannot be (the JavaScript shows the same sentence), or None."""
    h, h_kv = state["n_heads"], state["n_kv_heads"]
    if h % h_kv:
        return f"{h} query heads cannot share {h_kv} key/value heads equally: h_q must be a multiple of h_kv."
    if state["qk_rope_head_dim"] > state["head_dim"]:
        return (f"The RoPE key ({state['qk_rope_head_dim']}) is part of each head's key ({state['head_dim']}): "
                f"it cannot be larger.")
    if state["sliding_layers"] > state["n_layers"]:
        return f"{state['sliding_layers']} sliding layers, but only {state['n_layers']} layers."
    return None


def rope_error(state: dict) -> str | None:
    """Why the state's RoPE rule cannot be computed (the JavaScript shows the same sentence), or None."""
    if state["rope_type"] == "llama3" and not state["high_freq_factor"] > state["low_freq_factor"]:
        return "llama3 needs a high-frequency factor larger than the low-frequency factor."
    if state["rope_type"] == "yarn" and not state["beta_fast"] > state["beta_slow"]:
        return "YaRN needs beta_fast larger than beta_slow."
    return None


def rope_scaling(state: dict) -> RopeScaling:
    """The state's RoPE rule; the trained context serves as original_max_position_embeddings (llama3, yarn) and
    max_position_embeddings (dynamic)."""
    return RopeScaling(state["rope_type"], state["rope_base"], factor=state["factor"],
                       original_context=state["original_context"], max_positions=state["original_context"],
                       low_freq_factor=state["low_freq_factor"], high_freq_factor=state["high_freq_factor"],
                       beta_fast=state["beta_fast"], beta_slow=state["beta_slow"], truncate=state["truncate"],
                       mscale=state["mscale"] or None, mscale_all_dim=state["mscale_all_dim"] or None)


def compute_todays_models(state: dict) -> dict:
    """What the explorer shows for `state`, by the package; the Python twin of `computeTodaysModels`.

    Returns:
        {"cache": ..., "rope": ...}; each is {"error": sentence} when the state is not possible.
        "cache": "own" (the preset's layout, or None for a custom state) and "rows", one per layout
        of `LAYOUTS`: "name", "kv_heads" (0 for MLA), "per_token" (bytes of one token, all
        layers: `cache_bytes(config, 1)`) and "total" (bytes after `context` tokens, sliding
        layers keeping window - 1: `cache_bytes(config, context, keep_window=True)`).
        "rope": "theta" and "scaled" (d/2 frequencies before and after the rule), "ratio",
        "wavelength" (tokens per turn before), "kept", "between", "slowed" (pair counts) and
        "attention_factor" (`rescaled_pairs`); "unturned_trained", the pairs that turn less than once in
        the trained context before the rule, and "unturned_context", those that turn less than once in
        the whole context after it (a rule that slows the slow pairs by context / trained context keeps
        the two equal).
    """
    out = {}
    error = cache_error(state)
    if error:
        out["cache"] = {"error": error}
    else:
        config = attention_shape(state)
        rows = []
        for name in LAYOUTS:
            if name == "MLA":
                c, kv_heads, latent = config, 0, True
            else:
                kv_heads = {"MHA": state["n_heads"], "GQA": state["n_kv_heads"], "MQA": 1}[name]
                c, latent = replace(config, n_kv_heads=kv_heads), False
            rows.append({"name": name, "kv_heads": kv_heads, "per_token": cache_bytes(c, 1, latent=latent),
                         "total": cache_bytes(c, state["context"], keep_window=True, latent=latent)})
        own = next((p["layout"] for p in state["presets"] if p["name"] == state["preset"]), None)
        out["cache"] = {"own": own, "rows": rows}
    error = rope_error(state)
    if error:
        out["rope"] = {"error": error}
    else:
        scaling = rope_scaling(state)
        pairs = rescaled_pairs(scaling, state["rope_dim"], seq_len=state["context"])
        theta = RopeScaling("default", state["rope_base"]).frequencies(state["rope_dim"])[0]
        out["rope"] = {"theta": theta.tolist(), "scaled": scaling.frequencies(state["rope_dim"], state["context"])[0].tolist(),
                       "ratio": pairs.ratio.tolist(), "wavelength": pairs.wavelength.tolist(), "kept": pairs.kept,
                       "between": pairs.between, "slowed": pairs.slowed, "attention_factor": pairs.attention_factor,
                       "unturned_trained": int((pairs.wavelength > state["original_context"]).sum()),
                       "unturned_context": int((pairs.wavelength / pairs.ratio > state["context"]).sum())}
    return out


class TodaysModelsExplorer(Explorer):
    """A published configuration (or your own) in; its cache per token as MHA, GQA, MQA and MLA, and its RoPE rule, out.

    State: `preset` (a name of `presets`, or "custom" once a number is changed); the cache's
    `n_layers`, `n_heads`, `n_kv_heads`, `head_dim` (each key), `v_head_dim`, `kv_lora_rank` and
    `qk_rope_head_dim` (the latent and the RoPE key of MLA), `window` (0 for none) with
    `sliding_layers` (how many layers use it), `dtype`, `context` (tokens); RoPE's `rope_type`,
    `rope_base`, `rope_dim` (coordinates rotated), `factor`, `original_context` (the context
    trained on), `low_freq_factor`, `high_freq_factor` (llama3), `beta_fast`, `beta_slow`, `truncate`,
    `mscale`, `mscale_all_dim` (yarn; 0 = not given); and the package's constants: `presets`,
    `itemsizes`, `limits`.
    """

    _module = "todays_models.js"

    preset = t.Unicode(DEFAULT_PRESET).tag(sync=True)
    n_layers = t.Int(61).tag(sync=True)
    n_heads = t.Int(128).tag(sync=True)
    n_kv_heads = t.Int(128).tag(sync=True)
    head_dim = t.Int(192).tag(sync=True)
    v_head_dim = t.Int(128).tag(sync=True)
    kv_lora_rank = t.Int(512).tag(sync=True)
    qk_rope_head_dim = t.Int(64).tag(sync=True)
    window = t.Int(0).tag(sync=True)
    sliding_layers = t.Int(0).tag(sync=True)
    dtype = t.Enum(DTYPES, default_value="bfloat16").tag(sync=True)
    context = t.Int(163840).tag(sync=True)
    rope_type = t.Enum(ROPE_TYPES, default_value="yarn").tag(sync=True)
    rope_base = t.Float(10000.0).tag(sync=True)
    rope_dim = t.Int(64).tag(sync=True)
    factor = t.Float(40.0).tag(sync=True)
    original_context = t.Int(4096).tag(sync=True)
    low_freq_factor = t.Float(1.0).tag(sync=True)
    high_freq_factor = t.Float(4.0).tag(sync=True)
    beta_fast = t.Float(32.0).tag(sync=True)
    beta_slow = t.Float(1.0).tag(sync=True)
    truncate = t.Bool(True).tag(sync=True)
    mscale = t.Float(1.0).tag(sync=True)
    mscale_all_dim = t.Float(1.0).tag(sync=True)
    presets = t.List(t.Dict()).tag(sync=True)
    itemsizes = t.Dict().tag(sync=True)
    limits = t.Dict().tag(sync=True)

    def __init__(self, preset: str = DEFAULT_PRESET, *, dtype: str = "bfloat16", **kwargs) -> None:
        by_name = {p["name"]: p for p in PRESETS}
        if preset not in by_name:
            raise ValueError(f"preset must be one of {sorted(by_name)}; got {preset!r}")
        chosen = {k: v for k, v in by_name[preset].items() if k not in ("name", "layout")}
        chosen.update({k: kwargs.pop(k) for k in list(kwargs) if k in chosen})
        limits = {"ints": {name: [LOWEST.get(name, 1), high] for name, high in LIMITS.items()},
                  "floats": {name: [low, high, name == "factor"] for name, (low, high) in FLOAT_LIMITS.items()}}
        super().__init__(presets=[dict(p) for p in PRESETS], itemsizes={name: itemsize(name) for name in DTYPES},
                         limits=limits, preset=preset, dtype=dtype, **chosen, **kwargs)

    @t.validate(*LIMITS)
    def _check_limits(self, proposal):
        name, value = proposal["trait"].name, proposal["value"]
        low = LOWEST.get(name, 1)
        if not low <= value <= LIMITS[name]:
            raise t.TraitError(f"{name} must be between {low} and {LIMITS[name]}; got {value}")
        if name == "rope_dim" and value % 2:
            raise t.TraitError(f"rope_dim must be even (RoPE turns pairs of coordinates); got {value}")
        return value

    @t.validate(*FLOAT_LIMITS)
    def _check_float(self, proposal):
        name, value = proposal["trait"].name, proposal["value"]
        low, high = FLOAT_LIMITS[name]
        if not (math.isfinite(value) and (low <= value if name == "factor" else low < value) and value <= high):
            raise t.TraitError(f"{name} must be {'at least' if name == 'factor' else 'above'} {low:g} and at most "
                               f"{high:g}; got {value}")
        return value

    @t.validate("mscale", "mscale_all_dim")
    def _check_mscale(self, proposal):
        if not (math.isfinite(proposal["value"]) and 0 <= proposal["value"] <= 100):
            raise t.TraitError(f"{proposal['trait'].name} must be between 0 (not given) and 100; got {proposal['value']}")
        return proposal["value"]

    @t.validate("preset")
    def _check_preset(self, proposal):
        names = [p["name"] for p in PRESETS] + ["custom"]
        if proposal["value"] not in names:
            raise t.TraitError(f"preset must be one of {names}; got {proposal['value']!r}")
        return proposal["value"]

    def numbers(self) -> dict:
        """`compute_todays_models` of the current state."""
        return compute_todays_models(self.state())

    def summary(self) -> str:
        r = self.numbers()
        cache, rope = r["cache"], r["rope"]
        if "error" in cache:
            cache_text = cache["error"]
        else:
            cache_text = "; ".join(f"{row['name']} {row['per_token']:,} B" for row in cache["rows"])
        rope_text = rope["error"] if "error" in rope else (
            f"RoPE {self.rope_type} x{self.factor:g} on d = {self.rope_dim}: {rope['kept']} pairs kept, "
            f"{rope['between']} between, {rope['slowed']} slowed")
        return f"Cache per token ({self.preset}, {self.dtype}): {cache_text}. {rope_text}"
