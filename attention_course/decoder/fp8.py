"""Checkpoints stored in FP8 with a scale per block (DeepSeek-V3/V3.2, GLM-5): widened to float32 at load.

Such a checkpoint stores each large projection weight W (out, in) as 8-bit
floats (float8_e4m3fn: 4 exponent bits, 3 mantissa bits, at most 448) and,
beside it, one float32 per block of b_out x b_in weights (`weight_block_size`,
128 x 128 in the published files), named `<weight>_scale_inv`:

    W[i, j] = Q[i, j] * S[i // b_out, j // b_in]        Q (out, in) float8, S (ceil(out / b_out), ceil(in / b_in))

so a block's largest weight lands near 448, where FP8 is densest for it.
Embeddings, norms, the routers and the output projection are not quantized.
`dequantize_fp8` undoes it, the product taken in float32 as transformers'
`Fp8Dequantize` takes it (on a machine without an FP8 GPU, transformers
dequantizes at load too). The model then holds float32 weights: the memory
of a float32 checkpoint, four times what the file takes.

Other stored formats are refused with the reason (`refuse_format`): gpt-oss's
experts in MXFP4 (`*_blocks`, `*_scales`: 4-bit values, two per byte, with a
power-of-two scale per 32) and any other quantization method.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .options import UnsupportedConfigError

SCALE_SUFFIX = "_scale_inv"
"""What a weight's scales are called: `<name>.weight` -> `<name>.weight_scale_inv`."""


def fp8_blocks(quantization_config, source: str) -> tuple[int, int]:
    """(b_out, b_in), the block of weights sharing one scale, from config.json's quantization_config; every
    other stored format refused with an UnsupportedConfigError that names it and says why."""
    qc = quantization_config if isinstance(quantization_config, dict) else {}
    method = qc.get("quant_method", "?")
    if method != "fp8":
        raise UnsupportedConfigError(refuse_format(method, source))
    if str(qc.get("activation_scheme", "dynamic")).lower() != "dynamic":
        raise UnsupportedConfigError(f"{source}: quantization_config.activation_scheme = {qc['activation_scheme']!r} is "
                                     "not implemented: static activation scales quantize the inputs too; only "
                                     "'dynamic' (weights alone, widened here)")
    if qc.get("expert_dtype") not in (None, "fp8", "float8_e4m3fn"):
        raise UnsupportedConfigError(f"{source}: quantization_config.expert_dtype = {qc['expert_dtype']!r} is not "
                                     "implemented: only FP8 experts")
    block = qc.get("weight_block_size")
    if block is None or len(block) != 2 or any(not isinstance(b, int) or b < 1 for b in block):
        raise UnsupportedConfigError(f"{source}: quantization_config.weight_block_size must be two positive ints "
                                     f"(a scale per block of weights); got {block!r}")
    return int(block[0]), int(block[1])


def refuse_format(method: str, source: str) -> str:
    """Why a checkpoint stored with quantization method `method` is not run here (the error's message)."""
    if method == "mxfp4":
        return (f"{source}: quantization_config ('mxfp4'): gpt-oss's experts are stored as MXFP4, 4-bit floats packed "
                "two per byte (*_blocks) with a power-of-two scale per 32 of them (*_scales); this package widens "
                "FP8 block-scaled weights (quant_method 'fp8') but not MXFP4: use a checkpoint in bfloat16")
    return (f"{source}: quantization_config ({method!r}) is not implemented: the weights are stored quantized; this "
            "package widens FP8 block-scaled weights (quant_method 'fp8') only: use a checkpoint in bfloat16 or float32")


def dequantize_fp8(tensors: dict[str, np.ndarray], blocks: tuple[int, int] | None, source: str) -> dict[str, np.ndarray]:
    """The tensors with each FP8 weight times its block scales, in float32, and the scales removed.

    Args:
        tensors: a checkpoint's tensors by name (`weights.read_checkpoint`).
        blocks: (b_out, b_in) from `fp8_blocks`, or None for a checkpoint
            config.json says nothing quantized of (an FP8 tensor is then refused).
        source: named in errors.

    Returns:
        A new dict: `<name>` (out, in) float32 for each FP8 `<name>` with its
        `<name>_scale_inv` (ceil(out / b_out), ceil(in / b_in)); every other
        tensor as it was. An FP8 tensor without scales, or scales without
        their weight or of the wrong shape, raises UnsupportedConfigError.
    """
    out = {}
    for name, value in tensors.items():
        if name.endswith(SCALE_SUFFIX):
            if name[:-len(SCALE_SUFFIX)] not in tensors:
                raise UnsupportedConfigError(f"{source}: {name!r} scales no weight: {name[:-len(SCALE_SUFFIX)]!r} is missing")
            continue
        scales = tensors.get(name + SCALE_SUFFIX)
        if scales is None:
            if is_float8(value.dtype):
                raise UnsupportedConfigError(f"{source}: {name!r} is stored as {value.dtype} without "
                                             f"{name + SCALE_SUFFIX!r}: its scale is unknown")
            out[name] = value
            continue
        if blocks is None:
            raise UnsupportedConfigError(f"{source}: {name!r} has scales ({name + SCALE_SUFFIX!r}) but config.json has "
                                         "no quantization_config saying how they apply")
        out[name] = widen(value, scales, blocks, f"{source}: {name!r}")
    return out


def widen(q: np.ndarray, scales: np.ndarray, blocks: tuple[int, int], what: str = "weight") -> np.ndarray:
    """(..., out, in) FP8 weights and their (..., ceil(out / b_out), ceil(in / b_in)) scales -> float32 weights."""
    b_out, b_in = blocks
    rows, cols = q.shape[-2:]
    grid = (-(-rows // b_out), -(-cols // b_in))  # ceil: a last, partial block has a scale of its own
    if q.ndim < 2 or scales.shape != q.shape[:-2] + grid:
        raise UnsupportedConfigError(f"{what} has shape {q.shape} and scales of shape {scales.shape}; blocks of "
                                     f"{b_out} x {b_in} need scales of shape {q.shape[:-2] + grid}")
    s = scales.astype(np.float32)  # float32 already, or power-of-two bytes (float8_e8m0fnu), exactly
    s = np.repeat(np.repeat(s, b_out, axis=-2)[..., :rows, :], b_in, axis=-1)[..., :cols]  # (..., out, in)
    return q.astype(np.float32) * s  # each weight times its block's scale, in float32


def is_float8(dtype) -> bool:
    """True for the 8-bit float dtypes of ml_dtypes a checkpoint stores."""
    return np.dtype(dtype) in (np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2),
                               np.dtype(ml_dtypes.float8_e8m0fnu))
