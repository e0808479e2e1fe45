"""Matrix products callable from numba-compiled code, through SciPy's BLAS (used by `flash_kernel`).

numba compiles loops, not matrix products: a compiled loop that needs one has
to call BLAS itself. SciPy publishes the Fortran BLAS as C function pointers
(`scipy.linalg.cython_blas`, a stable public interface), and
`numba.extending.get_cython_function_address` hands those pointers to numba,
which calls them like any C function. Each product is one call to `sgemm` or
`dgemm`, with the leading dimensions and the `beta` that NumPy's matmul does
not let us choose: a product can write into a strided view of a scratch
buffer, or add itself to an existing result (beta = 1) without a temporary.

BLAS stores matrices by columns, NumPy's by rows. A row-major (r, c) matrix is
the column-major (c, r) matrix of its transpose, so `out = a @ b` is computed
as out^T = b^T a^T, with each operand marked transposed or not by how it lies
in memory.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg.cython_blas  # noqa: F401  (loads the BLAS the addresses below point into)
from llvmlite import binding as llvm
from numba import njit, types
from numba.core.errors import TypingError
from numba.extending import get_cython_function_address, overload

_COMPILE = dict(nogil=True, cache=True)

# Fortran passes every argument by reference: 13 pointers (transa, transb, m, n, k,
# alpha, a, lda, b, ldb, beta, c, ldc), integers 32-bit (SciPy's BLAS uses LP64).
# The compiled code calls them by name and the names are bound to SciPy's addresses
# in this process: machine code that refers to a name, not to an address, can be
# cached on disk (`cache=True`) and loaded by the next process.
_GEMM_SIGNATURE = types.void(*[types.voidptr] * 13)
for _name in ("sgemm", "dgemm"):
    llvm.add_symbol(f"attention_course_{_name}", get_cython_function_address("scipy.linalg.cython_blas", _name))
_sgemm = types.ExternalFunction("attention_course_sgemm", _GEMM_SIGNATURE)
_dgemm = types.ExternalFunction("attention_course_dgemm", _GEMM_SIGNATURE)
_INT32_MAX = np.iinfo(np.int32).max

_NO_TRANSPOSE, _TRANSPOSE = ord("N"), ord("T")


def _call_gemm(flags, sizes, scalars, a, b, out):
    """BLAS gemm on column-major operands, inside compiled code only (see `matmul_into`)."""
    raise NotImplementedError("_call_gemm runs inside numba-compiled functions only")


@overload(_call_gemm)
def _call_gemm_for(flags, sizes, scalars, a, b, out):
    """sgemm for float32, dgemm for float64; any other mix of dtypes fails when compiling."""
    dtypes = {a.dtype, b.dtype, out.dtype, scalars.dtype}
    if len(dtypes) != 1 or not dtypes <= {types.float32, types.float64}:
        raise TypingError(f"matmul_into takes float32 or float64 arrays of one dtype; got {sorted(map(str, dtypes))}")
    gemm = _sgemm if out.dtype == types.float32 else _dgemm

    def impl(flags, sizes, scalars, a, b, out):
        # flags: (transa, transb); sizes: (m, n, k, lda, ldb, ldc); scalars: (alpha, beta)
        gemm(flags[0:].ctypes, flags[1:].ctypes, sizes[0:].ctypes, sizes[1:].ctypes, sizes[2:].ctypes,
             scalars[0:].ctypes, a.ctypes, sizes[3:].ctypes, b.ctypes, sizes[4:].ctypes,
             scalars[1:].ctypes, out.ctypes, sizes[5:].ctypes)

    return impl


@njit(**_COMPILE)
def _column_major_view(x):
    """How BLAS sees a 2-D array x: (transpose flag that gives x^T, leading dimension).

    A row-major x (unit stride along its last axis) is x^T in column-major
    memory: no transpose. A column-major x (unit stride along its first
    axis, as a transposed row-major array is) must be transposed. Returns
    (-1, 0) if x is neither.
    """
    rows, cols = x.shape
    row_stride, col_stride = x.strides
    size = x.itemsize
    if cols <= 1 or col_stride == size:  # row-major: rows lie row_stride apart
        lead = row_stride // size if rows > 1 else cols
        if rows <= 1 or (row_stride > 0 and row_stride % size == 0 and lead >= cols):
            return _NO_TRANSPOSE, max(lead, cols, 1)
    if rows <= 1 or row_stride == size:  # column-major: columns lie col_stride apart
        lead = col_stride // size if cols > 1 else rows
        if cols <= 1 or (col_stride > 0 and col_stride % size == 0 and lead >= rows):
            return _TRANSPOSE, max(lead, rows, 1)
    return -1, 0


@njit(**_COMPILE)
def matmul_into(a, b, out, accumulate):
    """out = a @ b, or out += a @ b when `accumulate`, by one BLAS gemm call.

    Args:
        a: (m, k); b: (k, n); out: (m, n), all float32 or all float64.
            a and b may be any views with unit stride along one axis (slices
            of rows, slices of columns, transposes); out must have unit
            stride along its last axis. out must not overlap a or b.
        accumulate: False to overwrite out, True to add the product to it.

    Raises:
        ValueError: shapes that do not chain, a layout BLAS cannot read,
            or a size beyond BLAS's 32-bit integers.
    """
    m, k = a.shape
    if b.shape[0] != k or out.shape[0] != m or out.shape[1] != b.shape[1]:
        raise ValueError("matmul_into: a (m, k) @ b (k, n) -> out (m, n): the shapes do not chain")
    n = b.shape[1]
    if m == 0 or n == 0:
        return
    if k == 0:  # an empty sum: BLAS would not be asked
        if not accumulate:
            for i in range(m):
                for j in range(n):
                    out[i, j] = 0
        return
    flag_a, lead_a = _column_major_view(a)
    flag_b, lead_b = _column_major_view(b)
    flag_out, lead_out = _column_major_view(out)
    if flag_a < 0 or flag_b < 0:
        raise ValueError("matmul_into: a and b need unit stride along one of their axes")
    if flag_out != _NO_TRANSPOSE:
        raise ValueError("matmul_into: out needs unit stride along its last axis")
    if max(m, n, k, lead_a, lead_b, lead_out) > _INT32_MAX:
        raise ValueError("matmul_into: a size exceeds BLAS's 32-bit integers")
    # Row-major out (m, n) is column-major out^T (n, m) = b^T (n, k) a^T (k, m).
    flags = np.empty(2, np.uint8)  # (transa, transb) of the column-major call
    flags[0] = flag_b
    flags[1] = flag_a
    sizes = np.empty(6, np.int32)  # (m, n, k, lda, ldb, ldc) of the column-major call
    sizes[0], sizes[1], sizes[2] = n, m, k
    sizes[3], sizes[4], sizes[5] = lead_b, lead_a, lead_out
    scalars = np.empty(2, out.dtype)  # (alpha, beta)
    scalars[0] = 1
    scalars[1] = 1 if accumulate else 0
    _call_gemm(flags, sizes, scalars, b, a, out)
