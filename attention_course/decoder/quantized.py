"""The quantized KV cache: keys and values kept as int8 or float8 numbers with absmax scales (book/generating_cost.ipynb).

Absmax quantization keeps one scale per group of numbers, the largest
magnitude of the group divided by the largest code:

    scale = max |x| / Q          Q = 127 (int8), 448 (float8_e4m3fn, the largest finite e4m3 number)
    code  = round(x / scale)     |x / scale| <= Q, so no code is ever clipped
    x^    = code * scale

The error of each number is bounded by the rounding of its code:

    int8:   |x - x^| <= scale / 2                                   (codes are integers)
    e4m3:   |x - x^| <= max(|x^| / 16, scale / 1024)                (3 mantissa bits: half a step is
                                                                    2^-4 of the number, or 2^-10 below 2^-6)

A group is either one token (its d numbers share a scale: "per token") or
one channel over `group_size` tokens ("per channel"). Published work on
quantizing the KV cache (KIVI, Liu et al. 2024) found that a few channels of
the keys are much larger than the rest in every token, so per-token scales
are set by those channels and round every other channel coarsely; per-channel
scales give each channel its own. Values have no such channels, and each
output is a weighted mix of value tokens, so they are quantized per token.
Those are the defaults here. Per-channel scales need a group of tokens:
until `group_size` tokens have arrived they are kept as computed (KIVI keeps
such a residual in full precision too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ..core._checks import as_float_array, check_scale, positive_int, require_ndim
from .stored import StoredCache

CODE_DTYPES = {"int8": np.dtype(np.int8), "float8_e4m3fn": np.dtype(ml_dtypes.float8_e4m3fn)}
"""The dtypes codes are stored in."""

LARGEST_CODE = {"int8": 127, "float8_e4m3fn": 448}
"""Q, the code the largest magnitude of a group maps to (int8 leaves -128 unused: the codes stay symmetric)."""

SCALE_DTYPE = np.dtype(np.float32)
"""What each scale is stored in: 4 bytes per group."""

AXES = ("token", "channel")
"""One scale per token (over its d channels) or per channel (over a group of tokens)."""


def _code_dtype(dtype) -> str:
    name = str(np.dtype(dtype)) if not isinstance(dtype, str) else dtype
    if name not in CODE_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(map(repr, CODE_DTYPES))}; got {dtype!r}")
    return name


@dataclass(frozen=True)
class Quantized:
    """Numbers stored as codes and absmax scales."""

    codes: np.ndarray
    """int8 or float8_e4m3fn codes, the shape of the numbers."""
    scale: np.ndarray
    """float32 scales: the numbers' shape with 1 along the axis a scale covers."""
    dtype: str
    """"int8" or "float8_e4m3fn"."""

    def dequantize(self, dtype=np.float64) -> np.ndarray:
        """codes * scale, in `dtype`."""
        return self.codes.astype(dtype) * self.scale.astype(dtype)

    def error_bound(self, dtype=np.float64) -> np.ndarray:
        """The largest |x - x^| each number can have, from its code and scale (see the module's docstring)."""
        scale = np.broadcast_to(self.scale.astype(dtype), self.codes.shape)
        if self.dtype == "int8":
            return scale / 2  # an integer code is at most half a step from x / scale
        return np.maximum(np.abs(self.dequantize(dtype)) / 16, scale / 1024)  # e4m3: 2^-4 relative, 2^-10 * scale below 2^-6

    @property
    def nbytes(self) -> int:
        """Bytes of the codes and the scales."""
        return self.codes.nbytes + self.scale.nbytes


def quantize(x, dtype: str = "int8", axis: int = -1) -> Quantized:
    """Absmax quantization: one scale for each slice of `x` along `axis`.

    Args:
        x: (..., n, d) finite numbers, e.g. keys (h_kv, n, d).
        dtype: "int8" or "float8_e4m3fn".
        axis: the axis one scale covers: -1 for one scale per token (over
            its d channels), -2 for one per channel (over the n tokens).

    Returns:
        Quantized: codes of x's shape and float32 scales with 1 along `axis`.
        The scale is rounded up to float32, so |x / scale| <= Q and no code is clipped.
    """
    name = _code_dtype(dtype)
    x = as_float_array(x, "x")
    if not np.all(np.isfinite(x)):
        raise ValueError("x must be finite to be quantized; it holds inf or NaN")
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be an axis of x (shape {x.shape}); got {axis!r}")
    work = x.astype(np.float64)
    absmax = np.max(np.abs(work), axis=axis, keepdims=True)  # the group's largest magnitude
    q = LARGEST_CODE[name]
    scale = (absmax / q).astype(SCALE_DTYPE)
    scale = np.where(scale.astype(np.float64) * q < absmax, np.nextafter(scale, np.float32(np.inf)), scale)  # round up
    y = np.divide(work, scale, out=np.zeros_like(work), where=scale > 0)  # |y| <= q; an all-zero group stays 0
    if name == "int8":
        codes = np.rint(y).astype(np.int8)  # round half to even
    else:
        codes = y.astype(CODE_DTYPES[name])  # round to nearest even, in ml_dtypes
    return Quantized(codes=codes, scale=scale, dtype=name)


class _QuantizedStream:
    """One layer's keys (or values): quantized chunks of tokens, and the tokens still waiting for a full group."""

    def __init__(self, dtype: str, axis: str, group_size: int):
        self.dtype, self.axis, self.group_size = dtype, axis, group_size
        self.chunks: list[Quantized] = []  # consecutive runs of tokens, oldest first
        self.residual: np.ndarray | None = None  # (..., h_kv, r, d), r < group_size: per channel only
        self.start = 0  # tokens of chunks[0] (or of the residual, once no chunk is left) already forgotten

    def append(self, x: np.ndarray) -> None:
        if self.axis == "token":  # every token has its own scale: quantize them at once
            self.chunks.append(quantize(x, self.dtype, axis=-1))
            return
        waiting = x if self.residual is None else np.concatenate([self.residual, x], axis=-2)
        g = self.group_size
        while waiting.shape[-2] >= g:  # a full group of tokens: one scale per channel over them
            self.chunks.append(quantize(waiting[..., :g, :], self.dtype, axis=-2))
            waiting = waiting[..., g:, :]
        self.residual = waiting.copy()  # (..., h_kv, r < g, d), kept as computed

    def _parts(self, of_chunk, of_residual, like: np.ndarray) -> np.ndarray:
        parts = [of_chunk(c) for c in self.chunks]
        if self.residual is not None:
            parts.append(of_residual(self.residual))
        if not parts:
            return like[..., :0, :]
        return np.concatenate(parts, axis=-2)[..., self.start:, :]  # (..., h_kv, n_kept, d)

    def read(self, dtype, like: np.ndarray) -> np.ndarray:
        return self._parts(lambda c: c.dequantize(dtype), lambda r: r.astype(dtype, copy=False), like)

    def bounds(self, dtype, like: np.ndarray) -> np.ndarray:
        return self._parts(lambda c: c.error_bound(dtype), lambda r: np.zeros(r.shape, dtype), like)

    @property
    def count(self) -> int:
        held = sum(c.codes.shape[-2] for c in self.chunks) + (0 if self.residual is None else self.residual.shape[-2])
        return held - self.start

    def forget(self, keep: int) -> None:
        self.start += self.count - keep
        while self.chunks and self.start >= self.chunks[0].codes.shape[-2]:  # a chunk none of whose tokens is kept
            self.start -= self.chunks.pop(0).codes.shape[-2]
        if not self.chunks and self.residual is not None and self.start:
            self.residual = self.residual[..., self.start:, :].copy()
            self.start = 0

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self.chunks) + (0 if self.residual is None else self.residual.nbytes)


class QuantizedKVCache(StoredCache):
    """Keys and values kept as int8 or float8 codes with absmax scales, given back dequantized.

    >>> cache = QuantizedKVCache(n_layers=1, dtype="int8", key_axis="token")
    >>> rng = np.random.default_rng(0)
    >>> k, v = rng.standard_normal((2, 2, 5, 8))        # (h_kv, n, d) each
    >>> keys, values = cache.update(0, k, v)
    >>> cache.nbytes                                     # 2 x 5 x 8 codes of 1 byte + 2 x 5 scales of 4, twice
    240
    >>> bool(np.all(np.abs(keys - k) <= cache.error_bounds(0)[0]))
    True

    Args:
        n_layers: L, the decoder layers.
        dtype: the codes: "int8" or "float8_e4m3fn".
        window: None, an int, or one int-or-None per layer, as in `KVCache`.
        key_axis, value_axis: "token" (one scale per token and head, over
            its d channels) or "channel" (one scale per channel and head, over
            `group_size` tokens). The defaults, keys per channel and values
            per token, are KIVI's (see the module's docstring).
        group_size: tokens per group of a per-channel scale; fewer tokens
            than that wait unquantized.
    """

    def __init__(self, n_layers: int, dtype: str = "int8", window: int | Sequence[int | None] | None = None, *,
                 key_axis: str = "channel", value_axis: str = "token", group_size: int = 32):
        super().__init__(n_layers, window)
        self.dtype = _code_dtype(dtype)
        for name, axis in (("key_axis", key_axis), ("value_axis", value_axis)):
            if axis not in AXES:
                raise ValueError(f"{name} must be one of {AXES}; got {axis!r}")
        self.key_axis, self.value_axis = key_axis, value_axis
        self.group_size = positive_int(group_size, "group_size")
        self._keys = [_QuantizedStream(self.dtype, key_axis, self.group_size) for _ in range(self.n_layers)]
        self._values = [_QuantizedStream(self.dtype, value_axis, self.group_size) for _ in range(self.n_layers)]

    def _append(self, layer: int, k: np.ndarray, v: np.ndarray) -> None:
        self._keys[layer].append(k)
        self._values[layer].append(v)

    def _empty(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        k_shape, v_shape, k_dtype, v_dtype = self._layout[layer]
        return (np.empty(k_shape[:-1] + (0, k_shape[-1]), k_dtype), np.empty(v_shape[:-1] + (0, v_shape[-1]), v_dtype))

    def _read(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        empty_k, empty_v = self._empty(layer)
        return self._keys[layer].read(empty_k.dtype, empty_k), self._values[layer].read(empty_v.dtype, empty_v)

    def _forget(self, layer: int, keep: int) -> None:
        self._keys[layer].forget(keep)
        self._values[layer].forget(keep)

    def kept(self, layer: int = 0) -> int:
        """Tokens whose keys and values `layer` keeps (all it has seen, or at most window - 1)."""
        return self._keys[self._layer(layer)].count

    def error_bounds(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """The largest error each kept key and value can have: arrays shaped like keys(layer) and values(layer).

        From each number's code and scale (the module's docstring); 0 for the
        tokens still waiting for a full per-channel group.
        """
        layer = self._layer(layer)
        if self._layout[layer] is None:
            raise ValueError(f"layer {layer} holds no token yet")
        empty_k, empty_v = self._empty(layer)
        return self._keys[layer].bounds(empty_k.dtype, empty_k), self._values[layer].bounds(empty_v.dtype, empty_v)

    @property
    def nbytes(self) -> int:
        """Bytes of every code, scale and waiting token, all layers."""
        return sum(s.nbytes for s in (*self._keys, *self._values))

    def _repr_extra(self) -> str:
        return f", {self.dtype}, keys per {self.key_axis}, values per {self.value_axis}"


def attention_error_bound(query, keys, values, key_bound, value_bound, scale=None) -> np.ndarray:
    """A bound on how far attention over quantized keys and values is from attention over the exact ones.

    With the score error |ds_j| <= scale * sum_i |q_i| kb_ji (kb, vb: the
    bounds of each key and value number), the weights move by
    sum_j |p_j - p^_j| <= max_j |ds_j| (the softmax's Jacobian diag(p) - p p^T
    moves the weights by at most the mean absolute deviation of ds, at most
    half its range), so each output number moves by at most

        |o_c - o^_c| <= max_j vb_jc + max_j |ds_j| * max_j |v_jc|,    |v_jc| <= |v^_jc| + vb_jc.

    Args:
        query: (h_q, n_q, d_k) queries; keys: (h_kv, n_k, d_k) and values:
            (h_kv, n_k, d_v) as the cache holds them (dequantized); h_q a
            multiple of h_kv. Every query sees every key (a decoding step).
        key_bound, value_bound: the bounds of each key and value number,
            shaped like keys and values (`QuantizedKVCache.error_bounds`).
        scale: multiplies the scores; defaults to 1/sqrt(d_k).

    Returns:
        (h_q, n_q, d_v): the bound on each output number.
    """
    arrays = {}
    for name, x, layout in (("query", query, "(h_q, n_q, d_k)"), ("keys", keys, "(h_kv, n_k, d_k)"),
                            ("values", values, "(h_kv, n_k, d_v)"), ("key_bound", key_bound, "(h_kv, n_k, d_k)"),
                            ("value_bound", value_bound, "(h_kv, n_k, d_v)")):
        arr = as_float_array(x, name).astype(np.float64)
        require_ndim(arr, name, 3, layout)
        arrays[name] = arr
    q, k, v, kb, vb = arrays.values()
    if kb.shape != k.shape or vb.shape != v.shape or k.shape[:2] != v.shape[:2] or q.shape[-1] != k.shape[-1] \
            or q.shape[0] % k.shape[0]:
        raise ValueError(f"need query (h_q, n_q, d_k), keys and key_bound (h_kv, n_k, d_k), values and value_bound "
                         f"(h_kv, n_k, d_v) with h_q a multiple of h_kv; got {q.shape}, {k.shape}, {kb.shape}, "
                         f"{v.shape}, {vb.shape}")
    scale = check_scale(scale, q.shape[-1])
    g = q.shape[0] // k.shape[0]
    kb, vb, v = (np.repeat(a, g, axis=0) for a in (kb, vb, v))  # (h_q, n_k, d): the key/value head of each query head
    score_bound = scale * (np.abs(q) @ np.swapaxes(kb, -1, -2))  # (h_q, n_q, d_k) x (h_q, d_k, n_k) -> (h_q, n_q, n_k)
    weight_move = score_bound.max(axis=-1, keepdims=True)  # (h_q, n_q, 1): sum_j |p_j - p^_j| at most
    largest_value = (np.abs(v) + vb).max(axis=-2, keepdims=True)  # (h_q, 1, d_v): max_j |v_jc|
    return vb.max(axis=-2, keepdims=True) + weight_move * largest_value  # (h_q, n_q, d_v)
