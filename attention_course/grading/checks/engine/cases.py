"""The inputs a check tries, and how inputs and results are shown to a student."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .calls import Opaque
from .differences import NOT_SATURATED, Saturation

SHOW_MAX_ELEMENTS = 48
"""Arrays with more entries than this are summarised instead of printed."""
FLOAT32_TOLERANCE = (2e-4, 1e-5)
"""(rtol, atol) for results of float32 input."""
FLOAT64_TOLERANCE = (1e-9, 1e-12)
"""(rtol, atol) for results of float64 input: float64 arithmetic in another order stays far within it, float32
arithmetic (7 digits) does not."""


@dataclass(frozen=True)
class Case:
    """One input for a student's function: positional and keyword arguments."""

    label: str
    """A short name shown to the student, e.g. "large scores"."""
    args: tuple
    """Positional arguments: arrays and plain Python numbers."""
    kwargs: dict = field(default_factory=dict)
    """Keyword arguments (plain Python values only)."""
    hidden: bool = False
    """True if only the batch grader tries this input, not the notebook's check."""
    measure_memory: bool = False
    """Measure the peak memory of the call (for the tiled attention)."""
    note: str = ""
    """Extra context printed under the inputs."""
    code: str = ""
    """Python that rebuilds the arguments (`rng = np.random.default_rng(SEED)` and the calls that made
    them), shown instead of large arrays; `generated` makes a case from it, so the code is what ran."""
    precision: tuple[float, float] | None = None
    """(rtol, atol) for an input whose right result is only defined to fewer digits than float64 holds (angles
    near 10**6 radians): None for the usual tolerance."""
    saturated: bool = False
    """A slice of its softmax rows along the result's first axis is nearly one-hot (very large scores, a query that
    sees one key): a row can come out right there whatever the code does, so no observation names it right. A check
    with a `scores` function marks its inputs from their scores (`Check.cases`), with `saturated_lines`; set it by
    hand only for a check without one, and then no row of the input is named right."""
    saturated_lines: np.ndarray | None = field(default=None, compare=False, repr=False)
    """For each score, whether its softmax line is saturated (`differences.saturated_lines`), found from the check's
    `scores`: only the slices made of such lines are kept from being named right. None: not read from scores."""

    @property
    def saturation(self) -> Saturation:
        """Which slices of the result no observation may name right on this input."""
        if self.saturated_lines is not None:
            return Saturation(self.saturated_lines)
        return Saturation(every=True) if self.saturated else NOT_SATURATED

    @property
    def float32(self) -> bool:
        """True if any array argument is float32 (comparisons are then looser)."""
        return any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in self.args)

    @property
    def tolerance(self) -> tuple[float, float]:
        """(rtol, atol) for comparing results of this input: float32's, or float64's (tight enough that a result
        computed in float32, about 7 digits, fails: float64 precision is kept), or the case's own `precision`."""
        if self.precision is not None:
            return self.precision
        return FLOAT32_TOLERANCE if self.float32 else FLOAT64_TOLERANCE

    def describe(self, params: tuple[str, ...]) -> str:
        """The arguments as code a student can copy to rebuild this input.

        Small arrays are printed in full as `np.array([...])`; a case made by
        `generated` shows its code instead; a hidden case is described by its
        label and its arguments' shapes, never their values.
        """
        named = list(zip(params, self.args)) + list(self.kwargs.items())
        if self.hidden:
            lines = [f"({self.label}: an input only the batch grader tries, its values are not shown)"]
            lines += [f"{name}: {_shape_text(value)}" for name, value in named]
        elif self.code:
            lines = [self.code.strip()]
        else:
            lines = [_assign(name, value, code=True) for name, value in named]
        if self.note:
            lines.append(f"({self.note})")
        return "\n".join(lines)


@dataclass(frozen=True)
class Rngs:
    """Where a check's random inputs are drawn from: `rngs(n)` is the generator an input builder seeds with n.

    With no `secret`, `rngs(n)` is `np.random.default_rng(n)`: the inputs the
    package itself shows and hides. With an assignment's secret number, it is
    `np.random.default_rng([secret, n])`: other values, which the installed
    package (which students have) cannot reveal. The generator is an argument,
    never a patched library function, so two threads may build cases with two
    secrets at once.
    """

    secret: int | None = None
    """An assignment's secret number, mixed into every seed (None: the package's own inputs)."""

    def __call__(self, seed: int) -> np.random.Generator:
        return np.random.default_rng(seed if self.secret is None else [self.secret, seed])


def generated(label: str, code: str, params: tuple[str, ...], rngs: Rngs = Rngs(), **options) -> Case:
    """A case whose arguments (named `params`) are made by running `code`, which the student is shown.

    `code` may use `np`; it draws its random numbers from
    `rng = np.random.default_rng(SEED)`, which runs as `rng = rngs(SEED)`: the
    code shown for the package's own inputs (`Rngs()`) is exactly what ran.
    """
    namespace = {"np": np, "_rngs": rngs}
    exec(code.replace("np.random.default_rng(", "_rngs("), namespace)  # the course's own code, written in this package
    return Case(label, tuple(namespace[p] for p in params), code=code, **options)


def array_code(arr: np.ndarray) -> str:
    """`np.array([...])` that rebuilds `arr` exactly (shortest round-trip digits)."""
    dtype = {np.dtype(np.float64): "", np.dtype(np.bool_): ""}.get(arr.dtype, f", dtype=np.{arr.dtype}")
    if arr.ndim == 0:
        return f"np.array({_item_code(arr[()])}{dtype})"
    if arr.size == 0:  # np.array([]) would lose the shape: an empty cache is (h, 0, d)
        return f"np.empty({arr.shape}{dtype})"
    return f"np.array({_nested_code(arr, 10)}{dtype})"


def _nested_code(arr: np.ndarray, indent: int) -> str:
    if arr.ndim == 1:
        return "[" + ", ".join(_item_code(x) for x in arr) + "]"
    inner = [_nested_code(a, indent + 1) for a in arr]
    return "[" + (",\n" + " " * indent).join(inner) + "]"


def _item_code(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (np.integer, int)):
        return str(int(x))
    if np.isnan(x):
        return "np.nan"
    if np.isinf(x):
        return "np.inf" if x > 0 else "-np.inf"
    return repr(float(x)) if np.asarray(x).dtype == np.float64 else str(x)  # float32: its own shortest form


def _shape_text(value) -> str:
    if isinstance(value, np.ndarray):
        kind = "booleans" if value.dtype == bool else str(value.dtype)
        return f"an array of shape {value.shape} ({kind})"
    return type(value).__name__


def random_qkv(rng: np.random.Generator, n_q: int, n_k: int, d_k: int, d_v: int, *, scale: float = 1.0,
               value_scale: float = 1.0, batch: tuple = (), dtype=np.float64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random Q (batch + (n_q, d_k)), K (batch + (n_k, d_k)) and V (batch + (n_k, d_v)), drawn in that order.

    Standard normal entries; Q and K times `scale` (large scores for a large
    scale), V times `value_scale`, then cast to `dtype`.
    """
    sizes = ((batch + (n_q, d_k), scale), (batch + (n_k, d_k), scale), (batch + (n_k, d_v), value_scale))
    q, k, v = ((rng.standard_normal(shape) * factor).astype(dtype) for shape, factor in sizes)
    return q, k, v


def _assign(name: str, value, code: bool = False) -> str:
    if code and isinstance(value, np.ndarray) and value.size <= SHOW_MAX_ELEMENTS:
        text = array_code(value)
    elif code and isinstance(value, (tuple, list)) and all(type(v) in (int, float, bool) for v in value):
        text = repr(value)  # lengths given as a tuple of Python numbers: the student passes the same
    else:
        text = format_value(value)
    pad = " " * (len(name) + 3)
    first, *rest = text.splitlines() or [""]
    return "\n".join([f"{name} = {first}", *(pad + line for line in rest)])


def format_value(value, names: tuple[str, ...] | None = None) -> str:
    """A readable form of an argument or a (plain) return value."""
    if value is None:
        return "None"
    if isinstance(value, Opaque):
        return str(value)
    if isinstance(value, tuple):
        names = names or tuple(f"[{i}]" for i in range(len(value)))
        parts = [f"a tuple of {len(value)}:"]
        for i, item in enumerate(value):
            name = names[i] if i < len(names) else f"[{i}]"
            parts.append(_assign(f"  {name}", item))
        return "\n".join(parts)
    if isinstance(value, np.ndarray):
        return _format_array(value)
    return repr(value)


def _format_array(arr: np.ndarray) -> str:
    dtype = "" if arr.dtype in (np.float64, np.bool_) else f"  (dtype {arr.dtype})"
    if arr.ndim == 0 and arr.dtype.kind in "iu":  # a Python int and a NumPy integer read alike: say what both are
        dtype = "  (an integer)"
    if arr.ndim == 0:
        item = arr.item()
        return f"{item:.6g}{dtype}" if isinstance(item, float) else f"{item!r}{dtype}"
    if arr.size > SHOW_MAX_ELEMENTS:
        finite = arr[np.isfinite(arr)] if arr.dtype.kind == "f" else arr
        span = f", values from {finite.min():.4g} to {finite.max():.4g}" if finite.size and arr.dtype != bool else ""
        nan = ", contains nan" if arr.dtype.kind == "f" and np.isnan(arr).any() else ""
        return f"array of shape {arr.shape}{span}{nan}{dtype}"
    with np.printoptions(precision=4, suppress=True, floatmode="maxprec_equal", linewidth=88):
        body = np.array2string(arr, separator=", ")
    return f"{body}   shape {arr.shape}{dtype}" if arr.ndim > 1 else f"{body}{dtype}"


def shape_of(value) -> str:
    """How to name what came back: "shape (4, 4)", "a tuple of 2", "None"."""
    if isinstance(value, np.ndarray):
        return f"shape {value.shape}"
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    return format_value(value)
