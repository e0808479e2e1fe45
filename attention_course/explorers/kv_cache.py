"""Explorer 5, the KV cache: its memory for real configurations, and which query heads share a key/value head (book/decoding.ipynb).

The browser module is `js/kv_cache.js`. The page receives the package's
constants in its state (each dtype's item size, the published shapes of
`chapters.decoding.PUBLISHED_CONFIGS`) so that it counts as
`decoder.kv_cache_bytes` does.
"""

from __future__ import annotations

import traitlets as t

from ..chapters.decoding import PUBLISHED_CONFIGS, head_groups
from ..decoder.cache import itemsize, kv_cache_bytes
from .widget import Explorer

DTYPES = ("float32", "bfloat16", "float16", "float8_e4m3fn")
"""The dtypes a cache is kept in that the explorer offers; their sizes come from `decoder.cache.itemsize`."""

LIMITS = {"n_layers": 256, "n_heads": 256, "n_kv_heads": 128, "head_dim": 256, "seq_len": 2**20, "batch": 32, "window": 2**20}
"""Largest value of each number the explorer takes: every byte count then stays below 2**53, exact in JavaScript."""


def kv_cache_summary(state: dict) -> dict:
    """What the explorer shows for `state`, by the package; the Python twin of `computeKvCache` in js/kv_cache.js.

    Returns:
        dict: "per_token" (bytes for one token, all layers), "tokens_kept"
        (seq_len, or window - 1 with a sliding window), "total" (bytes for
        the batch), "mha_total" (the same with as many key/value heads as
        query heads), "groups" (query heads per key/value head) and
        "heads" (`head_groups`).
    """
    kept = state["seq_len"] if not state["window"] else min(state["seq_len"], state["window"] - 1)
    shape = (state["n_layers"], state["n_kv_heads"], state["head_dim"])
    total = kv_cache_bytes(*shape, kept, state["dtype"], state["batch"]) if kept else 0
    mha = kv_cache_bytes(state["n_layers"], state["n_heads"], state["head_dim"], kept, state["dtype"], state["batch"]) if kept else 0
    return {
        "per_token": kv_cache_bytes(*shape, 1, state["dtype"]),
        "tokens_kept": kept,
        "total": total,
        "mha_total": mha,
        "groups": state["n_heads"] // state["n_kv_heads"],
        "heads": head_groups(state["n_heads"], state["n_kv_heads"]),
    }


def _preset(shape) -> dict:
    return {"name": shape.name, "n_layers": shape.n_layers, "n_heads": shape.n_heads, "n_kv_heads": shape.n_kv_heads,
            "head_dim": shape.head_dim, "seq_len": shape.context, "window": shape.window or 0}


class KVCacheExplorer(Explorer):
    """Layers, heads, head size, dtype, context length and batch in; the cache's bytes and the head sharing out.

    State: `preset` (a name of `presets`, or "custom" once a number is
    changed), `n_layers`, `n_heads` (query heads), `n_kv_heads`, `head_dim`,
    `dtype`, `seq_len` (tokens in the context), `batch`, `window` (0 for
    none), plus the package's constants: `presets`, `itemsizes`, `limits`.
    """

    _module = "kv_cache.js"

    preset = t.Unicode("meta-llama/Meta-Llama-3-8B").tag(sync=True)
    n_layers = t.Int(32).tag(sync=True)
    n_heads = t.Int(32).tag(sync=True)
    n_kv_heads = t.Int(8).tag(sync=True)
    head_dim = t.Int(128).tag(sync=True)
    dtype = t.Enum(DTYPES, default_value="bfloat16").tag(sync=True)
    seq_len = t.Int(8192).tag(sync=True)
    batch = t.Int(1).tag(sync=True)
    window = t.Int(0).tag(sync=True)
    presets = t.List(t.Dict()).tag(sync=True)
    itemsizes = t.Dict().tag(sync=True)
    limits = t.Dict().tag(sync=True)

    def __init__(self, preset: str = "meta-llama/Meta-Llama-3-8B", *, dtype: str = "bfloat16", batch: int = 1,
                 **kwargs) -> None:
        presets = [_preset(s) for s in PUBLISHED_CONFIGS]
        by_name = {p["name"]: p for p in presets}
        if preset not in by_name:
            raise ValueError(f"preset must be one of {sorted(by_name)}; got {preset!r}")
        chosen = {k: v for k, v in by_name[preset].items() if k != "name"}
        chosen.update({k: kwargs.pop(k) for k in list(kwargs) if k in chosen})
        super().__init__(presets=presets, itemsizes={name: itemsize(name) for name in DTYPES}, limits=dict(LIMITS),
                         preset=preset, dtype=dtype, batch=batch, **chosen, **kwargs)

    @t.validate(*LIMITS)
    def _check_limits(self, proposal):
        name, value = proposal["trait"].name, proposal["value"]
        low = 0 if name == "window" else 1
        if not low <= value <= LIMITS[name]:
            raise t.TraitError(f"{name} must be between {low} and {LIMITS[name]}; got {value}")
        return value

    @t.validate("preset")
    def _check_preset(self, proposal):
        names = [p["name"] for p in self.presets] + ["custom"]
        if self.presets and proposal["value"] not in names:
            raise t.TraitError(f"preset must be one of {names}; got {proposal['value']!r}")
        return proposal["value"]

    def summary_numbers(self) -> dict:
        """`kv_cache_summary` of the current state (ValueError if n_heads is not a multiple of n_kv_heads)."""
        return kv_cache_summary(self.state())

    def summary(self) -> str:
        s = self.summary_numbers()
        return (f"KV cache ({self.preset}: {self.n_layers} layers, {self.n_kv_heads} key/value heads of {self.head_dim}, "
                f"{self.dtype}): {s['per_token']:,} bytes per token; {s['tokens_kept']:,} tokens x batch {self.batch} = "
                f"{s['total']:,} bytes ({s['mha_total']:,} with a key/value head per query head)")
