"""attention_course: how attention scores are computed, to the last decimal.

The package is laid out as the book is: `core` (softmax, masks, attention,
multi-head, positions: what the book teaches), `tiled` (attention tile by tile with an
online softmax, and its optional compiled accelerator), `chapters` (the data,
traces and measurements of one chapter each), `explorers` (the interactive
widgets), `pretrained` (a real model run with the course's own attention),
`decoder` (generating text: the KV cache and today's open checkpoints) and
`grading` (the exercises' checks, the sandboxed grader, release and
gradebooks). The names below are re-exported from them.

The primitives follow torch.nn.functional.scaled_dot_product_attention:

>>> from attention_course import BANK_BOT, scaled_dot_product_attention
>>> q, K, V = BANK_BOT.query[None, :], BANK_BOT.keys, BANK_BOT.values
>>> scaled_dot_product_attention(q, K, V).round(2)
array([[0.19, 0.91]])
"""

import importlib
import sys
import types

__version__ = "0.1.0"


def lazy_attributes(package: str, names: dict[str, tuple[str, ...]], submodules: dict[str, str], *,
                    keep: bool = True):
    """The package's import-on-first-use: its module `__getattr__` and `__dir__` (PEP 562), the one mechanism of
    `attention_course`, `attention_course.core`, `attention_course.chapters`, `attention_course.decoder` and
    `attention_course.grading`.

    `names`: module (relative to `package`, e.g. "chapters.cost") -> the names taken from it; `submodules`:
    attribute -> module (relative to `package`) it stands for. `keep`: a name looked up is written into the
    package's namespace for the next lookup (False: looked up each time, the namespace never written into).
    A name taken from a module of its own name (`core.softmax`, the function of `core/softmax.py`) stays the
    function: Python's import of that module puts the module into the package's namespace under that name, which
    the package, given a class of its own for this, refuses (as the language reference's "Customizing module
    attribute access" shows); the name is looked up on first use, as every other.
    Not a module of its own, so that `import attention_course` loads nothing more for it.
    """
    module_of = {name: module for module, taken in names.items() for name in taken}
    named_as_their_module = frozenset(name for name, module in module_of.items() if module.split(".")[-1] == name)

    def __getattr__(name: str):
        """A name or a submodule not imported yet: imported now (and kept for the next lookup, if `keep`)."""
        if name in module_of:
            value = getattr(importlib.import_module(f".{module_of[name]}", package), name)
        elif name in submodules:
            value = importlib.import_module(f".{submodules[name]}", package)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if keep:
            setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        namespace = vars(sys.modules[package])
        return sorted(set(namespace) | set(namespace.get("__all__", ())) | set(submodules))

    if named_as_their_module:
        class Package(types.ModuleType):
            """The package, refusing a submodule the place of its function of the same name."""

            def __setattr__(self, name: str, value) -> None:
                if not (name in named_as_their_module and isinstance(value, types.ModuleType)):
                    super().__setattr__(name, value)

        sys.modules[package].__class__ = Package
    return __getattr__, __dir__


# `import attention_course` loads this module alone (not even NumPy); the names below, the subpackages and `plots`
# are imported on first use, each from its own module, as NumPy and SciPy load theirs: a student's check, which
# needs a softmax, does not wait for the other functions of the core, the cost chapter's measurements, the decoders
# or matplotlib.
__getattr__, __dir__ = lazy_attributes(__name__, {
    "core.attention": ("attention_weights", "repeat_kv", "scaled_dot_product_attention"),
    "core.backward": ("attention_backward",),
    "core.masks": ("causal_mask", "padding_mask", "sliding_window_mask"),
    "core.multi_head": ("merge_heads", "multi_head_attention", "split_heads"),
    "core.positions": ("alibi_bias", "alibi_slopes", "apply_rope", "rope_frequencies", "sinusoidal_positions"),
    "core.softmax": ("softmax",),
    "chapters.cost": ("attention_flops", "backward_flops", "loglog_slope", "measure", "score_matrix_bytes",
                      "tile_count"),
    "chapters.scaling": ("jacobian_norm", "max_weight", "peakedness", "projected_score_std", "score_std",
                         "softmax_entropy", "softmax_jacobian"),
    "chapters.training": ("ToyTask", "gradient_check", "train"),
    "chapters.worked_example": ("BANK_BOT", "BANK_BOT_QUERIES", "AttentionTrace", "WorkedExample", "trace_attention"),
    "decoder": ("KVCache", "kv_cache_bytes", "load_decoder", "random_decoder"),
    "tiled.backward": ("flash_attention_backward", "flash_attention_forward"),
    "tiled.flash": ("flash_attention",),
    "tiled.online_softmax": ("trace_online_softmax",),
}, {
    "chapters": "chapters", "core": "core", "decoder": "decoder", "explorers": "explorers", "grading": "grading",
    "pretrained": "pretrained", "tiled": "tiled",
    "plots": "chapters.plots",  # as the book's chapters first imported it (it needs matplotlib)
})


__all__ = [
    "AttentionTrace",
    "BANK_BOT",
    "BANK_BOT_QUERIES",
    "KVCache",
    "ToyTask",
    "WorkedExample",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "attention_backward",
    "attention_flops",
    "attention_weights",
    "backward_flops",
    "causal_mask",
    "flash_attention",
    "flash_attention_backward",
    "flash_attention_forward",
    "gradient_check",
    "jacobian_norm",
    "kv_cache_bytes",
    "load_decoder",
    "loglog_slope",
    "max_weight",
    "measure",
    "merge_heads",
    "multi_head_attention",
    "padding_mask",
    "peakedness",
    "projected_score_std",
    "random_decoder",
    "repeat_kv",
    "rope_frequencies",
    "scaled_dot_product_attention",
    "score_matrix_bytes",
    "score_std",
    "sinusoidal_positions",
    "sliding_window_mask",
    "softmax",
    "softmax_entropy",
    "softmax_jacobian",
    "split_heads",
    "tile_count",
    "trace_attention",
    "trace_online_softmax",
    "train",
]
