"""What PyTorch and Hugging Face transformers do, measured, for the chapters that compare with them.

Four chapters quote what torch and transformers do: a fully masked row
(book/stable_softmax.ipynb), `attn_mask` with `is_causal=True` and the masks
transformers builds (book/masks.ipynb), 16-bit attention on the CPU
(book/low_precision.ipynb) and the layers of current models that have no
position encoding (book/positions.ipynb). Each `measure_*` function measures
one of them on the installed libraries and returns plain data (numbers,
strings, lists), so that it can be stored as JSON.

The book is built without torch (`make book` installs neither library: torch
alone is hundreds of megabytes), yet it must show what it says it measured.
So `MEASURED` (frameworks_measured.json, beside this module) keeps every
measurement with the versions that made it, and `framework_measurements()`
measures afresh where torch and transformers are installed and reads that
file where they are not; either way the chapter prints which versions its
numbers come from. tests/test_book_measurements.py, which runs where they are
installed (CI installs them), checks that the file equals a fresh
measurement; `python -m attention_course.chapters.frameworks` rewrites it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

MEASURED = Path(__file__).with_name("frameworks_measured.json")
"""The stored measurements: {"versions": {"torch", "transformers"}, "results": {name: data}}."""


# -- the measurements ---------------------------------------------------------------------


def measure_masked_row(torch) -> dict:
    """A row with nothing to attend to through torch.softmax, SDPA and transformers' eager mask.

    The two-layer example is "<pad> <pad> card blocked" padded on the left
    under a causal mask: rows 0 and 1 (the padding queries) may see no key.
    """
    F = torch.nn.functional
    from transformers.masking_utils import eager_mask

    gen = torch.Generator().manual_seed(0)
    n, d = 4, 8
    real = torch.tensor([False, False, True, True])  # (n,): two padding tokens on the left
    mask = torch.tril(torch.ones(n, n, dtype=torch.bool)) & real[None, :]  # (n, n), True = may attend

    softmax_row = torch.softmax(torch.full((4,), float("-inf")), dim=-1)
    q, k, v = (torch.randn(n, d, generator=gen) for _ in range(3))  # (n, d) each
    sdpa = F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask[None])[0]  # (n, d)

    x = torch.randn(n, d, generator=gen)  # (n, d): the tokens entering layer 1
    weights = [torch.randn(d, d, generator=gen) / d**0.5 for _ in range(6)]
    layer_1 = _softmax_layer(torch, x, mask, *weights[:3])  # (n, d)
    layer_2 = _softmax_layer(torch, x + layer_1, mask, *weights[3:])  # (n, d): the residual stream

    try:
        torch.zeros(2, dtype=torch.float16).masked_fill(torch.tensor([True, False]), -1e9)
        float16_fill_error = None
    except RuntimeError as err:
        float16_fill_error = str(err)

    fill = {}
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        m = eager_mask(batch_size=1, q_length=n, kv_length=n, attention_mask=real[None], dtype=dtype)
        fill[str(dtype).removeprefix("torch.")] = float(m.min())  # (1, 1, n, n): 0 or the fill
    m32 = eager_mask(batch_size=1, q_length=n, kv_length=n, attention_mask=real[None], dtype=torch.float32)
    fill_weights = torch.softmax(torch.zeros(n) + m32[0, 0, 0], dim=-1)  # row 0 sees nothing
    return {
        "softmax_row": softmax_row.tolist(),
        "sdpa_row": sdpa[0].tolist(),
        "sdpa_rows_finite": bool(torch.isfinite(sdpa[1:]).all()),
        "nan_rows_layer_1": int(layer_1.isnan().any(dim=-1).sum()),
        "nan_rows_layer_2": int(layer_2.isnan().any(dim=-1).sum()),
        "n_rows": n,
        "float16_fill_error": float16_fill_error,
        "fill": fill,
        "fill_weights": fill_weights.tolist(),
    }


def _softmax_layer(torch, x, mask, w_q, w_k, w_v):
    """One attention layer as many models write it: -inf where masked, then torch.softmax."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (n, d) x (d, d) -> (n, d) each
    scores = q @ k.T / q.shape[-1] ** 0.5  # (n, d) x (d, n) -> (n, n)
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v  # (n, n) x (n, d) -> (n, d)


def measure_causal_with_mask(torch) -> dict:
    """Does SDPA take `attn_mask` together with `is_causal=True`? On the CPU's default kernel and on the math one."""
    F = torch.nn.functional
    from torch.nn.attention import SDPBackend, sdpa_kernel

    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(1, 2, 5, 8, generator=gen) for _ in range(3))  # (B, h, n, d)
    padding = torch.tensor([True, True, True, False, False]).expand(5, 5)  # (n_q, n_k): two padding keys
    causal = torch.tril(torch.ones(5, 5, dtype=torch.bool))  # (n, n)
    out = {}
    for name, backends in (("default", None), ("math", [SDPBackend.MATH])):
        try:
            if backends is None:
                both = F.scaled_dot_product_attention(q, k, v, attn_mask=padding, is_causal=True)
            else:
                with sdpa_kernel(backends):
                    both = F.scaled_dot_product_attention(q, k, v, attn_mask=padding, is_causal=True)
        except RuntimeError as err:
            out[name] = {"accepted": False, "error": str(err)}
            continue
        anded = F.scaled_dot_product_attention(q, k, v, attn_mask=causal & padding)
        out[name] = {"accepted": True, "largest_difference_from_and": float((both - anded).abs().max())}
    return out


def measure_transformers_masks(torch) -> dict:
    """The attention mask a Llama layer of transformers receives, with its default attention and with eager."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1)
    ids = torch.tensor([[1, 2, 3, 4]])
    padded = torch.tensor([[0, 1, 1, 1]])  # one padding token on the left
    out = {}
    for name in ("default", "eager"):
        torch.manual_seed(0)
        if name == "default":
            model = LlamaForCausalLM(config)
        else:
            model = LlamaForCausalLM._from_config(config, attn_implementation="eager")
        seen = {}

        def hook(module, args, kwargs, seen=seen):
            seen["mask"] = kwargs.get("attention_mask")

        model.model.layers[0].self_attn.register_forward_pre_hook(hook, with_kwargs=True)
        with torch.no_grad():
            model(input_ids=ids, attention_mask=padded)
        mask = seen["mask"]
        out[name] = {
            "attn_implementation": model.config._attn_implementation,
            "mask_dtype": str(mask.dtype).removeprefix("torch."),
            "smallest_entry": float(mask.float().min()),
        }
    return out


def measure_sdpa_16bit(torch) -> dict:
    """torch's CPU attention in bfloat16 and float16: its default kernel and its math backend.

    Compared with "compute in float32, round the output once" (what the
    package does) and with a model of a FlashAttention kernel: the weights
    e^(S - m), relative to the running maximum of each block of 512 keys,
    rounded to the 16-bit format before the product with V. Random inputs:
    4 heads, 256 queries and keys, d = 64.
    """
    F = torch.nn.functional
    from torch.nn.attention import SDPBackend, sdpa_kernel

    out = {}
    for dtype in (torch.bfloat16, torch.float16):
        gen = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(1, 4, 256, 64, generator=gen).to(dtype) for _ in range(3))  # (B, h, n, d)
        exact = F.scaled_dot_product_attention(q.double(), k.double(), v.double())  # (B, h, n, d)
        once = F.scaled_dot_product_attention(q.float(), k.float(), v.float()).to(dtype)
        default = F.scaled_dot_product_attention(q, k, v)
        with sdpa_kernel([SDPBackend.MATH]):
            math_backend = F.scaled_dot_product_attention(q, k, v)
        rounded = _rounded_weights_attention(torch, q, k, v)

        def error(x):
            return float((x.double() - exact).abs().max() / exact.abs().max())

        out[str(dtype).removeprefix("torch.")] = {
            "default_differs_from_once": float((default != once).double().mean()),
            "math_differs_from_once": float((math_backend != once).double().mean()),
            "default_equals_rounded_weights": float((default == rounded).double().mean()),
            "error_default": error(default),
            "error_math": error(math_backend),
            "error_once": error(once),
        }
    return out


def _rounded_weights_attention(torch, q, k, v, block: int = 512):
    """Attention as a FlashAttention kernel computes it: float32 scores and sums, 16-bit weights times V."""
    qf, kf, vf = q.float(), k.float(), v.float()
    scale = q.shape[-1] ** -0.5
    m = torch.full(q.shape[:-1] + (1,), float("-inf"))  # (B, h, n_q, 1): running max
    total = torch.zeros_like(m)  # running sum of e^(s - m)
    acc = torch.zeros(q.shape[:-1] + (v.shape[-1],))  # (B, h, n_q, d_v)
    for start in range(0, k.shape[-2], block):
        s = qf @ kf[..., start:start + block, :].transpose(-1, -2) * scale  # (B, h, n_q, d) x (B, h, d, b)
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        p = torch.exp(s - m_new)  # (B, h, n_q, b)
        alpha = torch.exp(m - m_new)
        total = p.sum(-1, keepdim=True) + alpha * total
        acc = acc * alpha + p.to(q.dtype).float() @ vf[..., start:start + block, :]  # (B, h, n_q, b) x (B, h, b, d_v)
        m = m_new
    return (acc * (1 / total)).to(q.dtype)


def measure_position_free_layers(torch) -> dict:
    """Current models whose configurations in transformers leave position out of some layers' scores.

    For each, tiny random model of its architecture is built from its
    default configuration (cut to 8 layers) and each layer's attention is
    asked whether it rotates its queries and keys.
    """
    from transformers import Cohere2Config, Cohere2ForCausalLM, SmolLM3Config, SmolLM3ForCausalLM

    small = {"vocab_size": 32, "pad_token_id": 0, "bos_token_id": None, "eos_token_id": None,
             "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 8,
             "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8}
    out = {}
    smollm3 = SmolLM3Config()
    layers = SmolLM3ForCausalLM(SmolLM3Config(**small)).model.layers
    out["SmolLM3"] = {
        "config": "SmolLM3Config", "layers": smollm3.num_hidden_layers,
        "without_position": smollm3.no_rope_layers.count(0),
        "tiny_model_rotates": [bool(layer.self_attn.use_rope) for layer in layers],
    }
    cohere = Cohere2Config()
    layers = Cohere2ForCausalLM(Cohere2Config(**small)).model.layers
    out["Cohere2"] = {
        "config": "Cohere2Config", "layers": cohere.num_hidden_layers,
        "without_position": cohere.layer_types.count("full_attention"),
        # a Cohere2 layer rotates q and k only when it has a sliding window
        "tiny_model_rotates": [layer.self_attn.sliding_window is not None for layer in layers],
    }
    from transformers import Llama4TextConfig

    llama4 = Llama4TextConfig()
    out["Llama4"] = {
        "config": "Llama4TextConfig", "layers": llama4.num_hidden_layers,
        "without_position": llama4.no_rope_layers.count(0),
    }
    return out


MEASUREMENTS = {
    "masked_row": measure_masked_row,
    "causal_with_mask": measure_causal_with_mask,
    "transformers_masks": measure_transformers_masks,
    "sdpa_16bit": measure_sdpa_16bit,
    "position_free_layers": measure_position_free_layers,
}
"""name -> the function that measures it (given the torch module); the chapters read them by name."""


# -- stored or fresh --------------------------------------------------------------------------


@dataclass(frozen=True)
class FrameworkMeasurements:
    """The measurements a chapter shows, and where they come from."""

    results: dict = field(repr=False)
    """name -> the data its measure_ function returned."""
    torch: str
    """The torch version that measured them, e.g. "2.13.0+cpu"."""
    transformers: str
    """The transformers version that measured them."""
    fresh: bool
    """True if measured now, on this machine; False if read from the stored file."""

    def __getitem__(self, name: str) -> dict:
        return self.results[name]

    @property
    def versions(self) -> str:
        """The versions that measured them, e.g. "torch 2.13.0+cpu, transformers 5.24.0"."""
        return f"torch {self.torch}, transformers {self.transformers}"

    @property
    def source(self) -> str:
        """Whether they were measured now or read from the stored file."""
        return "measured now" if self.fresh else "stored results (no torch here)"


def installed_versions() -> tuple[str, str] | None:
    """(torch, transformers) versions if both are installed, else None."""
    try:
        import torch
        import transformers
    except ImportError:
        return None
    return torch.__version__, transformers.__version__


def measure_all(names=None) -> FrameworkMeasurements:
    """The measurements `names` (all of them by default), made now.

    ImportError without torch and transformers (the `[torch]` extra); ValueError for an unknown name.
    """
    import torch
    import transformers

    names = list(MEASUREMENTS) if names is None else _known(names)
    results = {name: MEASUREMENTS[name](torch) for name in names}
    return FrameworkMeasurements(results, torch.__version__, transformers.__version__, fresh=True)


def _known(names) -> list[str]:
    unknown = sorted(set(names) - set(MEASUREMENTS))
    if unknown:
        raise ValueError(f"unknown measurement {unknown}; the measurements are {', '.join(MEASUREMENTS)}")
    return list(names)


def stored_measurements(path: Path = MEASURED) -> FrameworkMeasurements:
    """The measurements kept in `path`, with the versions that made them."""
    data = json.loads(path.read_text(encoding="utf-8"))
    missing = sorted(set(MEASUREMENTS) - set(data["results"]))
    if missing:
        raise ValueError(f"{path} has no stored result for {missing}: re-record it where torch is installed "
                         "with `python -m attention_course.chapters.frameworks`")
    versions = data["versions"]
    return FrameworkMeasurements(data["results"], versions["torch"], versions["transformers"], fresh=False)


def framework_measurements(*names: str) -> FrameworkMeasurements:
    """The measurements `names` (all by default): made now where torch and transformers are installed,
    else the stored ones."""
    names = _known(names) if names else None
    return measure_all(names) if installed_versions() is not None else stored_measurements()


def record(path: Path = MEASURED) -> FrameworkMeasurements:
    """Measure everything now and store it in `path` (JSON, NaN written as NaN)."""
    measured = measure_all()
    data = {"versions": {"torch": measured.torch, "transformers": measured.transformers}, "results": measured.results}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return measured


def same_measurement(stored, fresh, rel_tol: float = 0.0, abs_tol: float = 0.0) -> bool:
    """Whether two measurements are equal: the same structure, strings and integers; floats within the tolerances (NaN equals NaN)."""
    if isinstance(stored, dict) and isinstance(fresh, dict):
        return stored.keys() == fresh.keys() and all(
            same_measurement(stored[key], fresh[key], rel_tol, abs_tol) for key in stored)
    if isinstance(stored, list) and isinstance(fresh, list):
        return len(stored) == len(fresh) and all(
            same_measurement(a, b, rel_tol, abs_tol) for a, b in zip(stored, fresh))
    if isinstance(stored, float) and isinstance(fresh, (float, int)) and not isinstance(fresh, bool):
        return (math.isnan(stored) and math.isnan(fresh)) or math.isclose(stored, fresh, rel_tol=rel_tol, abs_tol=abs_tol)
    return type(stored) is type(fresh) and stored == fresh


if __name__ == "__main__":
    done = record()
    print(f"wrote {MEASURED}: {done.versions}")
