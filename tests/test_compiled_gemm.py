"""Tests for attention_course.tiled._compiled.gemm: BLAS's product called from compiled code equals NumPy's matmul."""

import numpy as np
import pytest

pytestmark = pytest.mark.compiled

pytest.importorskip("numba", reason="the [fast] extra (numba, SciPy) is not installed")

from numba.core.errors import TypingError  # noqa: E402

from attention_course.tiled._compiled.gemm import matmul_into  # noqa: E402

TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-13, atol=1e-13)}


def operand(rng, shape, dtype, layout):
    """A (rows, cols) matrix laid out as `layout`: row-major, column-major, or a strided view of either."""
    x = rng.standard_normal(shape).astype(dtype)
    if layout == "row-major":
        return x
    if layout == "column-major":
        return np.asfortranarray(x)
    if layout == "rows of a wider array":  # row stride larger than the row: a tile of a scratch buffer
        wide = np.zeros((shape[0], shape[1] + 3), dtype)
        wide[:, : shape[1]] = x
        return wide[:, : shape[1]]
    return np.asfortranarray(np.vstack([x, np.zeros((2, shape[1]), dtype)]))[: shape[0]]  # columns of a taller one


LAYOUTS = ["row-major", "column-major", "rows of a wider array", "columns of a taller array"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout_a", LAYOUTS)
@pytest.mark.parametrize("layout_b", LAYOUTS)
def test_product_equals_numpy_in_every_layout(dtype, layout_a, layout_b):
    rng = np.random.default_rng(1)
    a = operand(rng, (7, 5), dtype, layout_a)  # (m, k)
    b = operand(rng, (5, 9), dtype, layout_b)  # (k, n)
    scratch = np.full((10, 12), 99, dtype)
    out = scratch[1:8, 2:11]  # (m, n) inside a larger buffer
    matmul_into(a, b, out, False)
    np.testing.assert_allclose(out, a @ b, **TOL[dtype])
    matmul_into(a, b, out, True)  # accumulate: out += a @ b
    np.testing.assert_allclose(out, 2 * (a @ b), **TOL[dtype])
    untouched = np.ones_like(scratch, dtype=bool)
    untouched[1:8, 2:11] = False
    assert np.all(scratch[untouched] == 99)  # nothing written outside the view


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (1, 6, 4), (5, 1, 3), (4, 6, 1)])
def test_thin_shapes(m, k, n):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    out = np.empty((m, n))
    matmul_into(a, b, out, False)
    np.testing.assert_allclose(out, a @ b, rtol=1e-13)
    matmul_into(np.asfortranarray(a), np.asfortranarray(b), out, False)  # the same values, column-major
    np.testing.assert_allclose(out, a @ b, rtol=1e-13)


def test_empty_sums_give_zeros_or_leave_out_as_it_was():
    out = np.full((3, 4), 5.0)
    matmul_into(np.empty((3, 0)), np.empty((0, 4)), out, True)
    assert np.all(out == 5)
    matmul_into(np.empty((3, 0)), np.empty((0, 4)), out, False)
    assert np.all(out == 0)
    matmul_into(np.empty((0, 2)), np.empty((2, 4)), np.empty((0, 4)), False)  # nothing to compute


def test_bad_shapes_and_layouts_are_refused():
    a, b = np.ones((3, 4)), np.ones((4, 5))
    with pytest.raises(ValueError, match="do not chain"):
        matmul_into(a, np.ones((3, 5)), np.empty((3, 5)), False)
    with pytest.raises(ValueError, match="do not chain"):
        matmul_into(a, b, np.empty((3, 4)), False)
    with pytest.raises(ValueError, match="unit stride along one of their axes"):
        matmul_into(np.ones((6, 8))[::2, ::2], b, np.empty((3, 5)), False)
    with pytest.raises(ValueError, match="unit stride along one of their axes"):
        matmul_into(np.ones((3, 4))[:, ::-1], b, np.empty((3, 5)), False)  # negative strides
    with pytest.raises(ValueError, match="out needs unit stride along its last axis"):
        matmul_into(a, b, np.asfortranarray(np.empty((3, 5))), False)


def test_mixed_dtypes_fail_to_compile():
    with pytest.raises(TypingError, match="one dtype"):
        matmul_into(np.ones((2, 2), np.float32), np.ones((2, 2)), np.empty((2, 2)), False)
