"""Input checks shared by the primitives: clear errors that name the argument.

Every public function converts its array arguments with `as_float_array` and
checks shapes with the helpers below, so a student who passes the wrong thing
reads which argument was wrong, the shape it had and the shape it needed.
"""

from __future__ import annotations

import numpy as np

_FLOAT_KINDS = "f"
_PROMOTED_KINDS = "biu"  # bool, signed and unsigned integers become float64
_FOREIGN_KIND = "V"  # the kind NumPy gives a dtype another library defines, such as ml_dtypes' bfloat16


def is_bfloat16(dtype) -> bool:
    """True for bfloat16 (from ml_dtypes): float32's 8 exponent bits with 7 mantissa bits.

    ml_dtypes is imported only for a dtype NumPy itself does not define: an
    array can hold bfloat16 only once ml_dtypes is loaded, so float64 input
    never pays for its import.
    """
    dtype = np.dtype(dtype)
    if dtype.kind != _FOREIGN_KIND:
        return False
    from ml_dtypes import bfloat16

    return dtype == bfloat16


def is_low_precision(dtype) -> bool:
    """True for the 16-bit dtypes the primitives take in and give back, but compute in float32: float16, bfloat16."""
    dtype = np.dtype(dtype)
    return dtype == np.float16 or is_bfloat16(dtype)


def is_float_dtype(dtype) -> bool:
    """True for NumPy's float dtypes (float16, float32, float64, longdouble) and bfloat16."""
    dtype = np.dtype(dtype)
    return dtype.kind in _FLOAT_KINDS or is_bfloat16(dtype)


def compute_dtype(dtype) -> np.dtype:
    """The dtype a primitive computes in for input of `dtype`: float32 for float16 and bfloat16, else `dtype`.

    The rule every primitive follows (as PyTorch does on the CPU, and as
    GPU kernels accumulate): 16-bit inputs are widened to float32, every
    score, exponential, sum and product is computed in float32, and the
    result is rounded to the input's dtype once, at the end.
    """
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if is_low_precision(dtype) else dtype


def as_float_array(x, name: str) -> np.ndarray:
    """Return `x` as a floating-point array without copying float input.

    float16/32/64 and bfloat16 keep their dtype; bool and integer input
    becomes float64, as NumPy's own true division would do. Anything else
    (strings, objects, complex numbers, the 8-bit floats of ml_dtypes)
    raises TypeError naming `name`.
    """
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as err:  # ragged nested lists, for example
        raise TypeError(f"{name} must be an array of numbers; could not convert it: {err}") from None
    if is_float_dtype(arr.dtype):
        return arr
    if arr.dtype.kind in _PROMOTED_KINDS:
        return arr.astype(np.float64)
    raise TypeError(
        f"{name} must hold real numbers (float16, bfloat16, float32, float64 or an integer dtype); "
        f"got dtype {arr.dtype}"
    )


def result_dtype(*arrays: np.ndarray) -> np.dtype:
    """The dtype of a result computed from float `arrays`: NumPy's promotion, and bfloat16 beside another dtype
    promoted as float32 would be (bfloat16 with float16 gives float32: neither holds the other's numbers)."""
    dtypes = {a.dtype for a in arrays}
    if len(dtypes) > 1 and any(is_bfloat16(d) for d in dtypes):
        return np.result_type(*(np.float32 if is_low_precision(d) else d for d in dtypes))
    return np.result_type(*arrays)


def require_ndim(arr: np.ndarray, name: str, min_ndim: int, layout: str, hint: str = "") -> None:
    """Raise ValueError if `arr` has fewer than `min_ndim` axes."""
    if arr.ndim < min_ndim:
        extra = f" {hint}" if hint else ""
        raise ValueError(
            f"{name} must have shape {layout}; got shape {arr.shape} "
            f"({arr.ndim} axes, need at least {min_ndim}).{extra}"
        )


def require_same(size_a: int, size_b: int, what: str, a: tuple[str, tuple], b: tuple[str, tuple]) -> None:
    """Raise ValueError if two axes that must agree do not.

    `a` and `b` are (argument name, argument shape) pairs used in the message.
    """
    if size_a != size_b:
        raise ValueError(
            f"{what} must match: {a[0]} has shape {a[1]} and {b[0]} has shape {b[1]} "
            f"({size_a} != {size_b})"
        )


def broadcast_batch(shapes: dict[str, tuple], core_ndim: int = 2) -> tuple:
    """Broadcast the leading (batch/head) dims of several arrays.

    `shapes` maps argument names to shapes; the last `core_ndim` axes of each
    are the per-example axes and are not broadcast. Raises ValueError naming
    every argument's shape when the leading dims do not broadcast.
    """
    leading = [shape[:-core_ndim] for shape in shapes.values()]
    try:
        return np.broadcast_shapes(*leading)
    except ValueError:
        listed = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
        raise ValueError(
            "the leading batch/head dimensions do not broadcast together: " + listed
        ) from None


def positive_int(value, name: str) -> int:
    """Return `value` as an int, raising if it is not a positive integer."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a positive integer; got {value!r} of type {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer; got {value}")
    return int(value)


def check_scale(scale, d_k: int) -> float:
    """The softmax temperature: `1/sqrt(d_k)` by default, else a finite number."""
    if scale is None:
        return 1.0 / float(np.sqrt(d_k))  # a Python float keeps float32 arrays float32
    if isinstance(scale, (bool, np.bool_)) or not np.isscalar(scale) or not np.isreal(scale):
        raise TypeError(f"scale must be a real number or None; got {scale!r}")
    if not np.isfinite(scale):
        raise ValueError(f"scale must be finite; got {scale}")
    return float(scale)


def in_compute_dtype(*arrays: np.ndarray) -> tuple[tuple[np.ndarray, ...], np.dtype]:
    """(the arrays in the dtype to compute in, the dtype to return): the low-precision rule in one place.

    The result dtype is `result_dtype(*arrays)`; the arrays are converted to
    `compute_dtype` of it (no copy when they already have it).
    """
    out_dtype = result_dtype(*arrays)
    work = compute_dtype(out_dtype)
    return tuple(a.astype(work, copy=False) for a in arrays), out_dtype


def frozen_array(values) -> np.ndarray:
    """`values` as a float64 array that cannot be written: data a module shares, that nobody may change by accident."""
    arr = np.array(values, dtype=np.float64)
    arr.flags.writeable = False
    return arr
