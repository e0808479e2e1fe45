"""Attention as today's open models compute it: the helpers of one chapter (book/todays_models.ipynb).

- `model_changes(config)`: which of the chapter's changes to the score a configuration uses, read from
  its fields (QK-norm, soft-capping, sinks, local layers, layers without positions, scaled RoPE, latent
  attention).
- `rescaled_pairs(scaling, d)`: how a RoPE scaling rule treats each of the d/2 pairs: kept, slowed by
  the whole factor, or in between.
- `train_spread(qk_norm=...)`: a short training run of one attention layer on the toy task of
  `training`, with or without a norm on its query and keys, recording the spread of its scores and
  the size of its projections at every step.
- `write_checkpoint(folder, fields, tensors)`: a config.json and a float32 model.safetensors that
  `decoder.load_decoder` reads back, for a tiny random checkpoint of a published architecture.

The formulas themselves live in `core` (`norms`, `softcap`, `sinks`, `rope_scaling`) and the models in
`decoder`; nothing here changes how a score is computed.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core._checks import positive_int
from ..core.norms import rms_norm
from ..core.rope_scaling import RopeScaling
from ..core.softmax import softmax
from ..decoder.config import DecoderConfig
from .training import ToyTask, adam_step, init_params

QK_NORM_EPS = 1e-6
"""The epsilon of the query and key norms in `train_spread` (Qwen3's and Gemma 3's rms_norm_eps)."""


# --- what a configuration changes -----------------------------------------------------------------

def model_changes(config: DecoderConfig) -> tuple[str, ...]:
    """Short labels of the changes to the score `config` makes, in the chapter's order.

    "QK-norm"; "soft-cap c" (scores capped at c); "sinks"; "window w in k of L layers" (local
    layers); "RoPE bases b1 / b2" (local and global layers rotate with different bases); "no RoPE in
    k of L layers" (NoPE); "RoPE rule xfactor" (a scaling rule for longer contexts); "latent r + d_rope"
    (multi-head latent attention); "RoPE on r of d" (partial RoPE); "chunk C in k of L layers" (chunked
    attention); "QK-norm without gain in k of L layers" and "NoPE temperature" (Llama 4). An empty tuple:
    attention as Llama 2 computed it.
    """
    if not isinstance(config, DecoderConfig):
        raise TypeError(f"config must be a DecoderConfig (published_config(name), DecoderConfig.from_json); "
                        f"got {type(config).__name__}")
    c, n = config, config.n_layers
    out = []
    if c.qk_norm:
        out.append("QK-norm")
    if c.l2_qk_norm:
        out.append(f"QK-norm without gain in {sum(r is not None for r in c.ropes)} of {n} layers")
    if c.attn_softcap is not None:
        out.append(f"soft-cap {c.attn_softcap:g}")
    if c.sinks:
        out.append("sinks")
    windows = sorted({w for w in c.windows if w is not None})
    for w in windows:
        out.append(f"window {w:,} in {sum(x == w for x in c.windows)} of {n} layers")
    bases = sorted({r.base for r in c.ropes if r is not None})
    if len(bases) > 1:
        out.append("RoPE bases " + " / ".join(f"{b:,.0f}" for b in bases))
    no_rope = sum(r is None for r in c.ropes)
    if no_rope:
        out.append(f"no RoPE in {no_rope} of {n} layers")
    for rule in sorted({(r.rope_type, r.factor) for r in c.ropes if r is not None and r.rope_type != "default"}):
        out.append(f"RoPE {rule[0]} x{rule[1]:g}")
    if c.latent is not None:
        out.append(f"latent {c.latent.kv_lora_rank} + {c.latent.qk_rope_head_dim}")
    if c.rotary_dim is not None:
        out.append(f"RoPE on {c.rotary_dim} of {c.head_dim}")
    for chunk in sorted({k for k in c.chunks if k is not None}):
        out.append(f"chunk {chunk:,} in {sum(k == chunk for k in c.chunks)} of {n} layers")
    if c.nope_temperature is not None and no_rope:
        out.append("NoPE temperature")
    return tuple(out)


# --- RoPE's pairs under a scaling rule ------------------------------------------------------------

@dataclass(frozen=True)
class RescaledPairs:
    """How a scaling rule treats each of RoPE's d/2 pairs (`rescaled_pairs`)."""

    wavelength: np.ndarray
    """(d/2,) tokens per turn of each pair before the rule: 2 pi / theta_i."""
    ratio: np.ndarray
    """(d/2,) theta_i after the rule / theta_i before: 1 for a kept pair, 1/factor for a pair slowed by it all."""
    kept: int
    """Pairs the rule leaves as they were."""
    slowed: int
    """Pairs turned `factor` times slower."""
    between: int
    """Pairs slowed by less than the factor (llama3's blend, YaRN's ramp)."""
    attention_factor: float
    """What the rule multiplies the rotated queries and keys by (1 but for YaRN)."""


def rescaled_pairs(scaling: RopeScaling, d: int, seq_len: int | None = None) -> RescaledPairs:
    """Each pair's wavelength and how `scaling` changes its frequency, for heads rotating d coordinates.

    seq_len matters only to the "dynamic" rule (the longest position + 1).
    """
    if not isinstance(scaling, RopeScaling):
        raise TypeError(f"scaling must be a core.rope_scaling.RopeScaling; got {type(scaling).__name__}")
    plain = RopeScaling("default", scaling.base).frequencies(d)[0]  # (d/2,)
    theta, attention_factor = scaling.frequencies(d, seq_len)  # (d/2,)
    ratio = theta / plain
    kept = np.isclose(ratio, 1.0, rtol=1e-12, atol=0)
    slowed = np.isclose(ratio, 1.0 / scaling.factor, rtol=1e-12, atol=0) & ~kept
    return RescaledPairs(wavelength=2 * np.pi / plain, ratio=ratio, kept=int(kept.sum()), slowed=int(slowed.sum()),
                         between=int((~kept & ~slowed).sum()), attention_factor=float(attention_factor))


# --- QK-norm in a short training run --------------------------------------------------------------

def _qk_forward(params: dict, x: np.ndarray, qk_norm: bool) -> dict:
    """One attention layer at the query (last) position, as `training.forward`, with QK-norm if asked."""
    d_k = params["w_q"].shape[1]
    q_raw = x[:, -1, :] @ params["w_q"]  # (B, d_model) x (d_model, d_k) -> (B, d_k)
    k_raw = x @ params["w_k"]  # (B, n, d_model) x (d_model, d_k) -> (B, n, d_k)
    v = x @ params["w_v"]  # (B, n, d_model) x (d_model, d_v) -> (B, n, d_v)
    if qk_norm:  # each query and key divided by its root mean square, times a learned gain
        q, k = rms_norm(q_raw, params["g_q"], QK_NORM_EPS), rms_norm(k_raw, params["g_k"], QK_NORM_EPS)
    else:
        q, k = q_raw, k_raw
    scale = 1.0 / np.sqrt(d_k)
    scores = np.einsum("bd,bnd->bn", q, k) * scale  # (B, d_k) . (B, n, d_k) -> (B, n)
    weights = softmax(scores, axis=-1)  # (B, n)
    output = np.einsum("bn,bnd->bd", weights, v)  # (B, n) . (B, n, d_v) -> (B, d_v)
    return {"q_raw": q_raw, "k_raw": k_raw, "q": q, "k": k, "v": v, "scale": scale, "scores": scores,
            "weights": weights, "output": output}


def _rms_norm_backward(x: np.ndarray, gain: np.ndarray, d_out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of y = gain * x / rms(x) for x (..., d) and gain (d,), given dL/dy (..., d)."""
    r = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + QK_NORM_EPS)  # (..., 1)
    normed = x / r  # (..., d)
    d_gain = (d_out * normed).reshape(-1, x.shape[-1]).sum(axis=0)  # (d,)
    d_normed = d_out * gain  # (..., d)
    # d(x_j / r)/dx_i = delta_ij / r - x_i x_j / (d r^3): the part along x is taken out
    d_x = (d_normed - normed * np.mean(d_normed * normed, axis=-1, keepdims=True)) / r
    return d_x, d_gain


def qk_loss_and_grads(params: dict, x: np.ndarray, y: np.ndarray, qk_norm: bool) -> tuple[float, dict]:
    """The toy task's loss (mean squared error of the output) and its gradient for every parameter, by hand.

    Args:
        params: {"w_q", "w_k": (d_model, d_k), "w_v": (d_model, d_v)}, and with qk_norm the gains
            {"g_q", "g_k": (d_k,)}.
        x: (B, n, d_model) token vectors; the last token is the query.
        y: (B, d_v) the right answers.
        qk_norm: normalise the query and each key before the scores.

    Returns:
        (loss, grads) with grads of the keys and shapes of params.
    """
    f = _qk_forward(params, x, qk_norm)
    B = x.shape[0]
    err = f["output"] - y  # (B, d_v)
    loss = float(np.mean(np.sum(err**2, axis=-1)))
    d_out = 2.0 * err / B  # (B, d_v)
    p = f["weights"]
    d_v = p[:, :, None] * d_out[:, None, :]  # (B, n, 1) x (B, 1, d_v) -> (B, n, d_v)
    d_p = np.einsum("bd,bnd->bn", d_out, f["v"])  # (B, d_v) . (B, n, d_v) -> (B, n)
    d_scores = p * (d_p - np.sum(p * d_p, axis=-1, keepdims=True))  # softmax backward, (B, n)
    d_q = f["scale"] * np.einsum("bn,bnd->bd", d_scores, f["k"])  # (B, n) . (B, n, d_k) -> (B, d_k)
    d_k = f["scale"] * d_scores[:, :, None] * f["q"][:, None, :]  # (B, n, 1) x (B, 1, d_k) -> (B, n, d_k)
    grads = {}
    if qk_norm:
        d_q, grads["g_q"] = _rms_norm_backward(f["q_raw"], params["g_q"], d_q)
        d_k, grads["g_k"] = _rms_norm_backward(f["k_raw"], params["g_k"], d_k)
    grads["w_q"] = x[:, -1, :].T @ d_q  # (d_model, B) x (B, d_k) -> (d_model, d_k)
    grads["w_k"] = np.einsum("bnm,bnd->md", x, d_k)  # (B, n, d_model) . (B, n, d_k) -> (d_model, d_k)
    grads["w_v"] = np.einsum("bnm,bnd->md", x, d_v)  # (B, n, d_model) . (B, n, d_v) -> (d_model, d_v)
    return loss, grads


@dataclass(frozen=True)
class SpreadRun:
    """What `train_spread` records, once before training and after every step."""

    qk_norm: bool
    """Whether the layer normalised its query and keys."""
    spread: np.ndarray
    """(steps + 1,) the standard deviation of the scaled scores over each query's row, averaged over the
    evaluation batch."""
    projection_size: np.ndarray
    """(steps + 1,) ||W_q|| x ||W_k|| (Frobenius norms): how large the projections have grown."""
    accuracy: np.ndarray
    """(steps + 1,) the share of evaluation sequences whose largest weight is on the matching token."""
    loss: np.ndarray
    """(steps + 1,) the loss on the evaluation batch."""
    gradient_cosine: np.ndarray
    """(steps,) the cosine between the training batch's gradient dL/dW_q and W_q at each step: 0 where the loss
    does not depend on the size of W_q (QK-norm), so that no part of the gradient points along W_q."""
    step_cosine: np.ndarray
    """(steps,) the cosine between Adam's step on W_q and W_q: its part along W_q, which grows or shrinks it."""
    step_size: np.ndarray
    """(steps,) ||W_q after the step - W_q before|| (Frobenius norm): how far Adam moved W_q."""
    params: dict
    """The parameters at the end."""


def train_spread(task: ToyTask = ToyTask(), *, qk_norm: bool, d_k: int = 8, steps: int = 300, batch_size: int = 64,
                 lr: float = 0.5, seed: int = 0, eval_size: int = 256) -> SpreadRun:
    """Train one attention layer on `task` with Adam, with or without QK-norm; deterministic for a seed.

    The two runs of a seed start from the same W_q, W_k, W_v (the gains of QK-norm start at 1) and
    see the same batches. The default learning rate is large on purpose: the projections grow fast,
    which is when the scores of a layer without QK-norm grow with them. Besides the evaluation's
    numbers, each step's gradient and Adam's step on W_q are recorded by direction (their cosine with
    W_q) and the step by size: with QK-norm the gradient is orthogonal to W_q, yet Adam's step, which
    divides each entry by that entry's own running gradient size, is not.

    Deterministic on one machine. The plain layer, still growing after step 100, amplifies the last
    bit of rounding: its later numbers differ where the linear-algebra library rounds differently
    (another processor, another BLAS kernel). The QK-norm layer's, once settled, do not.
    """
    steps = positive_int(steps, "steps")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0 < lr < np.inf:
        raise ValueError(f"lr must be a positive finite number; got {lr!r}")
    rng = np.random.default_rng(seed)
    evaluation = task.sample(eval_size, rng)
    params = init_params(task, d_k, rng)
    if qk_norm:
        params = {**params, "g_q": np.ones(d_k), "g_k": np.ones(d_k)}
    record = {"spread": [], "projection_size": [], "accuracy": [], "loss": [], "gradient_cosine": [], "step_cosine": [],
              "step_size": []}

    def measure(p):
        f = _qk_forward(p, evaluation.x, qk_norm)
        record["spread"].append(float(f["scores"].std(axis=-1).mean()))
        record["projection_size"].append(float(np.linalg.norm(p["w_q"]) * np.linalg.norm(p["w_k"])))
        record["accuracy"].append(float((f["weights"].argmax(axis=-1) == evaluation.target).mean()))
        record["loss"].append(float(np.mean(np.sum((f["output"] - evaluation.y) ** 2, axis=-1))))

    def cosine(a, b):
        return float(np.sum(a * b) / (np.linalg.norm(a) * np.linalg.norm(b)))

    measure(params)
    state = None
    for _ in range(steps):
        batch = task.sample(batch_size, rng)
        _, grads = qk_loss_and_grads(params, batch.x, batch.y, qk_norm)
        new, state = adam_step(params, grads, state, lr)
        step = new["w_q"] - params["w_q"]  # (d_model, d_k)
        record["gradient_cosine"].append(cosine(grads["w_q"], params["w_q"]))
        record["step_cosine"].append(cosine(step, params["w_q"]))
        record["step_size"].append(float(np.linalg.norm(step)))
        params = new
        measure(params)
    return SpreadRun(qk_norm=bool(qk_norm), params=params, **{k: np.array(v) for k, v in record.items()})


# --- a checkpoint folder ---------------------------------------------------------------------------

def write_checkpoint(folder: str | os.PathLike, fields: dict, tensors: dict) -> Path:
    """Write config.json (`fields`) and model.safetensors (`tensors`, in float32) into `folder`; return it.

    The tensors are named and shaped as a Hugging Face checkpoint stores them
    (`decoder.load.random_tensors` draws such a set), so `decoder.load_decoder(folder)` reads the
    folder back. Refuses to overwrite a folder that already holds either file.
    """
    folder = Path(folder)
    if not isinstance(fields, dict) or "model_type" not in fields:
        raise ValueError(f"fields must be a config.json dict with a model_type; got {fields!r:.80}")
    for name in ("config.json", "model.safetensors"):
        if (folder / name).exists():
            raise FileExistsError(f"{folder / name} exists; write_checkpoint never overwrites a checkpoint")
    header, blobs, offset = {}, [], 0
    for name, tensor in tensors.items():
        data = np.ascontiguousarray(tensor, dtype="<f4").tobytes()  # little-endian float32, as safetensors stores F32
        header[name] = {"dtype": "F32", "shape": list(np.shape(tensor)), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # the data starts on an 8-byte boundary
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({**fields, "torch_dtype": "float32"}, indent=1), encoding="utf-8")
    with open(folder / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for data in blobs:
            f.write(data)
    return folder
