"""The softmax's element-wise work on one tile of scores, compiled (used by `loop`).

Between its two matrix products, each tile of `flash_attention`'s loop needs
exp(score), minus the running max when one is kept, and the sums of its rows.
In NumPy that is one pass over the tile per operation, and NumPy's float64 exp
has no vector version on AVX2 processors (benchmarks/bench_tile.py measures
what those passes cost beside the two products). Here numba compiles one loop per tile that does all of it
at once, with an exponential written out so that LLVM turns it into vector
instructions (a call to the C library's exp per element cannot be vectorised).

The scores arrive in base 2: `flash_attention` multiplies the queries by
log2(e) along with the scale, once per tile of queries, so that
exp(score) = 2**(score * log2(e)) is a power of two of what the product gave.
That is how FlashAttention computes it too, and it makes the exponential
cheaper per score:

    2**x = 2**n * 2**r,   n = round(x),   r = x - n (exact),   |r| <= 1/2

2**r = exp(r ln 2) is its Taylor series 1 + (r ln 2) + (r ln 2)**2/2! + ...,
cut where the next term is below a quarter of the dtype's machine epsilon (14
terms in float64, 8 in float32), and 2**n is written straight into the
exponent bits of a float. Splitting x needs no multiplication and no
correction (x - n is exact), where exp(x) = 2**n exp(x - n ln 2) needs both.

The kernels work in place on the caller's scratch tile and never allocate.
They hold the GIL released (`nogil`), so the threads of `flash_attention`
run them on every core, and numba caches their machine code next to this
file (`cache=True`), so only the first call on a machine compiles them.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.errors import TypingError
from numba.extending import intrinsic, overload

# The exponential may fuse a multiply and an add (FMA), nothing else: reassociating
# (x + SHIFT) - SHIFT would cancel the rounding it does.
_EXP_FLAGS = {"contract"}
# The kernels may also reorder their row sums and row max, so that LLVM vectorises
# them, but keep inf and NaN: a masked score is -inf, and NaN must reach the output.
_KERNEL_FLAGS = {"contract", "reassoc", "nsz", "arcp"}
_COMPILE = dict(nogil=True, cache=True)

LOG2_E = 1 / math.log(2)
"""log2(e): a score s in base 2 is s * LOG2_E, and exp(s) = 2**(s * LOG2_E)."""


class _Exp2Constants:
    """The constants of 2**x = 2**n 2**r for one dtype, computed from its limits."""

    def __init__(self, dtype):
        info = np.finfo(dtype)
        f = info.dtype.type
        # Adding 1.5 * 2**nmant rounds x to an integer (the float's last bit is worth 1),
        # and the low bits of the sum's representation are that integer.
        self.shift = f(1.5 * 2.0**info.nmant)
        self.int_type = np.dtype(f"int{info.bits}").type
        self.shift_bits = np.array(self.shift).view(self.int_type)[()]
        self.nmant = self.int_type(info.nmant)
        self.bias = self.int_type(info.maxexp - 1)  # exponent bits of 2**0
        # x is held between `low` and `high`. At `low`, n = -bias: 2**n gets exponent bits 0
        # and reads as 0, so results below 2**(low + 1/2) come out 0, not subnormal. From
        # `high` on, n = maxexp: exponent bits all ones, 2**n reads as inf, and so does 2**x.
        self.low = f(-int(self.bias))
        self.high = f(info.maxexp - 0.5)
        # Taylor coefficients (ln 2)**k / k!, highest first for Horner's rule, up to the
        # first term that stays below eps / 4 for every |r| <= 1/2.
        rt_max = math.log(2) / 2  # the largest |r ln 2|
        degree = 1
        while rt_max ** (degree + 1) / math.factorial(degree + 1) >= info.eps / 4:
            degree += 1
        with localcontext() as ctx:
            ctx.prec = 40
            ln2 = Decimal(2).ln()
            self.coefficients = tuple(f(ln2**k / math.factorial(k)) for k in range(degree, -1, -1))


_F64 = _Exp2Constants(np.float64)
_F32 = _Exp2Constants(np.float32)


@intrinsic
def _bits_to_float(typingctx, bits):
    """The float whose IEEE bits are `bits` (int64 -> float64, int32 -> float32)."""
    if not isinstance(bits, types.Integer) or bits.bitwidth not in (32, 64):
        raise TypingError("_bits_to_float takes an int32 or an int64")
    width = bits.bitwidth
    signature = (types.float64 if width == 64 else types.float32)(bits)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType() if width == 64 else ir.FloatType())

    return signature, codegen


@intrinsic
def _float_to_bits(typingctx, x):
    """The IEEE bits of a float as a signed int of the same width."""
    if not isinstance(x, types.Float):
        raise TypingError("_float_to_bits takes a float")
    width = x.bitwidth
    signature = (types.int64 if width == 64 else types.int32)(x)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(width))

    return signature, codegen


def _make_exp2(c: _Exp2Constants):
    """A compiled scalar 2**x for the dtype of `c` (see the module docstring)."""
    int_type = c.int_type
    coefficients = c.coefficients
    shift, shift_bits, low, high, nmant, bias = c.shift, c.shift_bits, c.low, c.high, c.nmant, c.bias

    @njit(fastmath=_EXP_FLAGS, **_COMPILE)
    def exp2(x):
        xc = low if x < low else x  # NaN fails both comparisons and stays NaN
        xc = high if xc > high else xc
        t = xc + shift  # round(x), in the low bits of t
        n = int_type(_float_to_bits(t) - shift_bits)
        r = xc - (t - shift)  # exact: |r| <= 1/2
        p = coefficients[0]
        for coefficient in coefficients[1:]:  # Horner's rule, unrolled by LLVM
            p = p * r + coefficient
        return p * _bits_to_float(int_type((n + bias) << nmant))  # 2**r * 2**n

    return exp2


_exp2_64 = _make_exp2(_F64)
_exp2_32 = _make_exp2(_F32)


def fast_exp2(x):
    """2**x of a float32 or float64 scalar, inside compiled code only."""
    raise NotImplementedError("fast_exp2 runs inside numba-compiled functions only")


@overload(fast_exp2)
def _fast_exp2_for(x):
    if isinstance(x, types.Float) and x.bitwidth in (32, 64):
        return (lambda x: _exp2_64(x)) if x.bitwidth == 64 else (lambda x: _exp2_32(x))
    return None


@njit(fastmath=_EXP_FLAGS, **_COMPILE)
def _exp2_into(x, out):
    for j in range(x.shape[0]):
        out[j] = fast_exp2(x[j])


def exp2(x: np.ndarray) -> np.ndarray:
    """2**x of a float32 or float64 array with the kernels' exponential (for the tests).

    Args:
        x: (...) float32 or float64.

    Returns:
        (...) the same dtype: within an ulp of np.exp2 where that is a
        normal number; 0 where np.exp2 is below 2**(low + 1/2) (subnormal),
        inf from x = maxexp - 1/2 on (127.5 in float32, 1023.5 in float64).
    """
    x = np.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"exp2 takes a float32 or float64 array; got {x.dtype}")
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(flat)
    _exp2_into(flat, out)
    return out.reshape(x.shape)


@njit(fastmath={"nnan", "nsz", "reassoc"}, **_COMPILE)
def _row_max(row, bk):
    """max(row[:bk]), -inf if bk == 0.

    Eight running maxima side by side, which LLVM turns into vector
    instructions (one running max compiles to a chain of scalar ones). With
    `nnan` a NaN may be passed over here; it still reaches the output through
    exp(NaN - max).
    """
    minus_inf = row.dtype.type(-np.inf)
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = minus_inf
    whole = bk - bk % 8
    for j in range(0, whole, 8):
        m0 = max(m0, row[j])
        m1 = max(m1, row[j + 1])
        m2 = max(m2, row[j + 2])
        m3 = max(m3, row[j + 3])
        m4 = max(m4, row[j + 4])
        m5 = max(m5, row[j + 5])
        m6 = max(m6, row[j + 6])
        m7 = max(m7, row[j + 7])
    largest = max(max(max(m0, m1), max(m2, m3)), max(max(m4, m5), max(m6, m7)))
    for j in range(whole, bk):
        largest = max(largest, row[j])
    return largest


@njit(fastmath=_KERNEL_FLAGS, **_COMPILE)
def exp_rows(s, bq, bk, l):
    """s = 2**s and l += its row sums, for scores known to be small (no max).

    Args:
        s: (>= bq, >= bk) C-contiguous scratch tile; s[:bq, :bk] holds the
            scores in base 2 and receives 2**score = exp(natural score) in place.
        bq, bk: the tile's queries and keys.
        l: (>= bq,) running denominators; l[i] += sum_j 2**s[i, j].
    """
    for i in range(bq):
        row = s[i]
        total = row.dtype.type(0.0)
        for j in range(bk):
            p = fast_exp2(row[j])
            row[j] = p
            total += p
        l[i] += total


@njit(fastmath=_KERNEL_FLAGS, **_COMPILE)
def exp_rows_shifted(s, bq, bk, m, l, alpha):
    """One online-softmax step on a tile of scores in base 2, in place: the running max kept.

    Args:
        s: (>= bq, >= bk) C-contiguous scratch tile; s[:bq, :bk] holds the
            scores in base 2 and receives 2**(score - m_new) in place.
        bq, bk: the tile's queries and keys.
        m: (>= bq,) running max (base 2), updated to m_new = max(m, max_j s[i, j]).
        l: (>= bq,) running denominators, updated to l * alpha + sum_j 2**(s - m_new).
        alpha: (>= bq,) receives 2**(m - m_new), by which the caller rescales
            its running numerator.

    A row that has seen only -inf is shifted by 0 instead of -inf (-inf - -inf
    is NaN): its exponentials are all 0 and it ends with l == 0.
    """
    for i in range(bq):
        row = s[i]
        m_new = max(m[i], _row_max(row, bk))
        shift = m_new if m_new != -np.inf else row.dtype.type(0.0)
        total = row.dtype.type(0.0)
        for j in range(bk):
            p = fast_exp2(row[j] - shift)
            row[j] = p
            total += p
        a = fast_exp2(m[i] - shift)
        alpha[i] = a
        l[i] = l[i] * a + total
        m[i] = m_new
