"""Explorer 7, the roofline: where prefill and a decoding step land against this machine's two ceilings (book/generating_cost.ipynb).

The browser module is `js/roofline.js`. The ceilings are measured in Python
when the explorer is made (when the book is built, for the page) and travel
in its state with the package's constants: the four attention layouts of
`chapters.roofline.LAYOUTS`, Llama 3 8B's other sizes and each dtype's item
size, so that the page counts as `chapters.roofline.step_cost` does.
"""

from __future__ import annotations

import dataclasses

import traitlets as t

from ..chapters.roofline import LAYOUTS, LLAMA_3_8B, AttentionLayout, Ceilings, DecoderShape, measure_ceilings, step_cost
from ..decoder.cache import itemsize
from .widget import Explorer

DTYPES = ("bfloat16", "float32", "float8_e4m3fn")
"""The dtypes offered for the weights and the cache; their sizes come from `decoder.cache.itemsize`."""

LIMITS = {"context": 2**17, "batch": 256}
"""Largest context length and batch offered."""

LAYOUT_FIELDS = ("name", "n_layers", "n_heads", "n_kv_heads", "head_dim", "kv_lora_rank", "qk_rope_head_dim")
"""What the page receives of each layout: the plain fields of `AttentionLayout`."""


def compute_roofline(state: dict) -> dict:
    """What the explorer shows for `state`, by the package; the Python twin of `computeRoofline` in js/roofline.js.

    Returns:
        dict with "ridge" (FLOPs per byte where the ceilings meet) and, for
        "prefill" (a prompt of `context` tokens, each of `batch` requests)
        and "decode" (one token each after `context` cached ones): "flops",
        "bytes", "intensity", "seconds" (the roofline's least time:
        max(FLOPs / peak, bytes / bandwidth)), "attainable" (FLOP/s at that
        intensity) and "bound" ("memory" or "compute"); "cache_bytes" (the
        decode step's cache, read once) and "weight_bytes".
    """
    layout = AttentionLayout(**next(x for x in state["layouts"] if x["name"] == state["head_layout"]))
    shape = DecoderShape(layout, **state["model"])
    ceilings = Ceilings(bandwidth=state["bandwidth"], flops=state["flops"])
    out = {"ridge": ceilings.ridge}
    for phase, (n_new, n_past) in (("prefill", (state["context"], 0)), ("decode", (1, state["context"]))):
        cost = step_cost(shape, n_new, n_past, batch=state["batch"], dtype=state["dtype"])
        total = cost.total
        out[phase] = {
            "flops": total.flops, "bytes": total.bytes, "intensity": total.intensity,
            "seconds": ceilings.time(total), "attainable": float(ceilings.attainable(total.intensity)),
            "bound": "memory" if total.intensity < ceilings.ridge else "compute",
            "cache_bytes": cost.attention.bytes, "weight_bytes": cost.weights.bytes,
        }
    return out


class RooflineExplorer(Explorer):
    """Context length, batch, attention layout and dtype in; prefill and a decoding step on this machine's roofline out.

    State: `context`, `batch`, `head_layout` (a name of `layouts`: "MHA", "GQA",
    "MQA", "MLA"), `dtype`, the measured ceilings `bandwidth` (bytes/s) and
    `flops` (FLOP/s) with `measured` (how), and the package's constants:
    `layouts`, `model` (d_model, d_ff, vocab_size), `itemsizes`, `limits`.
    """

    _module = "roofline.js"

    context = t.Int(4096).tag(sync=True)
    batch = t.Int(1).tag(sync=True)
    head_layout = t.Unicode("GQA").tag(sync=True)
    dtype = t.Enum(DTYPES, default_value="bfloat16").tag(sync=True)
    bandwidth = t.Float().tag(sync=True)
    flops = t.Float().tag(sync=True)
    measured = t.Unicode().tag(sync=True)
    layouts = t.List(t.Dict()).tag(sync=True)
    model = t.Dict().tag(sync=True)
    itemsizes = t.Dict().tag(sync=True)
    limits = t.Dict().tag(sync=True)

    def __init__(self, ceilings: Ceilings | None = None, *, context: int = 4096, batch: int = 1, head_layout: str = "GQA",
                 dtype: str = "bfloat16", **kwargs) -> None:
        if ceilings is None:
            ceilings = measure_ceilings(repeat=3)
        if not isinstance(ceilings, Ceilings):
            raise TypeError(f"ceilings must be a chapters.roofline.Ceilings (or None: measure them); "
                            f"got {type(ceilings).__name__}")
        threads = "one thread" if ceilings.threads == 1 else f"{ceilings.threads or 'all'} threads"
        measured = (f"measured on the machine that built this page ({threads}): a matrix-vector product streaming "
                    f"an array larger than the processor's caches, and a square float32 matrix product")
        layouts = [{f: getattr(x, f) for f in LAYOUT_FIELDS} for x in LAYOUTS]
        model = {f.name: getattr(LLAMA_3_8B, f.name) for f in dataclasses.fields(LLAMA_3_8B) if f.name != "layout"}
        super().__init__(layouts=layouts, model=model, itemsizes={name: itemsize(name) for name in DTYPES},
                         limits=dict(LIMITS), bandwidth=float(ceilings.bandwidth), flops=float(ceilings.flops),
                         measured=measured, context=context, batch=batch, head_layout=head_layout, dtype=dtype, **kwargs)

    @t.validate(*LIMITS)
    def _check_limits(self, proposal):
        name, value = proposal["trait"].name, proposal["value"]
        if not 1 <= value <= LIMITS[name]:
            raise t.TraitError(f"{name} must be between 1 and {LIMITS[name]}; got {value}")
        return value

    @t.validate("head_layout")
    def _check_layout(self, proposal):
        names = [x["name"] for x in self.layouts] or [x.name for x in LAYOUTS]
        if proposal["value"] not in names:
            raise t.TraitError(f"head_layout must be one of {names}; got {proposal['value']!r}")
        return proposal["value"]

    @t.validate("bandwidth", "flops")
    def _check_ceiling(self, proposal):
        if not proposal["value"] > 0:
            raise t.TraitError(f"{proposal['trait'].name} must be positive; got {proposal['value']}")
        return proposal["value"]

    def numbers(self) -> dict:
        """`compute_roofline` of the current state."""
        return compute_roofline(self.state())

    def summary(self) -> str:
        r = self.numbers()
        p, d = r["prefill"], r["decode"]
        return (f"Roofline ({self.head_layout}, {self.dtype}, batch {self.batch}, context {self.context:,}; "
                f"{self.bandwidth / 1e9:.1f} GB/s, {self.flops / 1e9:.1f} GFLOP/s, ridge {r['ridge']:.1f} FLOPs/byte): "
                f"prefill {p['intensity']:.1f} FLOPs/byte, {p['bound']}-bound; decode {d['intensity']:.2f} FLOPs/byte, "
                f"{d['bound']}-bound")
