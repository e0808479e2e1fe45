"""Without the `[fast]` extra, everything but the accelerator still runs; with it, the graders never wait for it.

Each test runs a fresh Python: one in which numba, llvmlite and SciPy cannot be
imported (as after `pip install attention-course` with no extras), and one
with them installed that checks the tiled exercise without loading numba.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[1]

# The accelerator's packages made unimportable, as if they were not installed: a None in
# sys.modules makes `import numba` raise ImportError and importlib.util.find_spec return None.
BLOCK_FAST_EXTRA = textwrap.dedent("""
    import sys

    for name in ("numba", "llvmlite", "scipy"):
        sys.modules[name] = None
""")


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_everything_but_the_accelerator_runs_without_it():
    out = run_python(BLOCK_FAST_EXTRA + textwrap.dedent("""
        import importlib.util
        import nbformat
        import numpy as np
        import attention_course as ac
        from attention_course import grading
        from attention_course.grading.checks.exercises import EXERCISES
        from attention_course.tiled import _compiled

        assert importlib.util.find_spec("numba") is None and not _compiled.available()
        assert ac.tiled.default_backend() == "numpy" and ac.tiled.available_backends() == ("numpy",)
        rng = np.random.default_rng(0)
        q, k, v = (rng.standard_normal((2, 300, 16)) for _ in range(3))
        np.testing.assert_allclose(ac.flash_attention(q, k, v, is_causal=True, block_size=(64, 32)),
                                   ac.scaled_dot_product_attention(q, k, v, is_causal=True), rtol=1e-12, atol=1e-12)
        try:
            ac.flash_attention(q, k, v, backend="numba")
        except ImportError as err:
            assert "[fast]" in str(err)
        else:
            raise AssertionError("backend='numba' ran without numba")

        # The chapter helpers.
        assert ac.BANK_BOT.trace().weights.round(3).tolist() == [0.064, 0.782, 0.048, 0.106]
        ac.trace_online_softmax(q[0, :8], k[0, :8], v[0, :8], block_size=4)
        ac.score_std([4, 16], 200, np.random.default_rng(1))
        ac.peakedness([4, 16], 8, 50, np.random.default_rng(2), scaled=True)
        ac.measure(ac.flash_attention, q[0], k[0], v[0], repeat=1, blas_threads=1)
        ac.train(ac.ToyTask(n_symbols=4, n_context=4, d_value=2), d_k=4, steps=3, snapshot_steps=(0, 3), eval_size=16)
        ac.attention_flops(1024, d_k=64)
        ac.tile_count(1024, block_size=128, is_causal=True)

        # Every grader, on every solution.
        for ex in EXERCISES:
            nb = nbformat.read("solutions/" + ex.id + ".ipynb", as_version=4)
            namespace = {}
            for cell in nb.cells:
                if cell.cell_type == "code":
                    exec(cell.source, namespace)
            for check in ex.checks:
                result = getattr(grading, "check_" + check.name)(namespace[check.function], hidden=True)
                assert result.passed, str(result)
        assert all(sys.modules[name] is None for name in ("numba", "llvmlite", "scipy"))
        assert not any(name.split(".")[0] in ("numba", "llvmlite", "scipy") for name in sys.modules if "." in name)
        print("ok")
    """))
    assert out.strip().endswith("ok")


def test_checking_the_tiled_exercise_loads_no_compiler():
    out = run_python(textwrap.dedent("""
        import sys
        import nbformat
        from attention_course.grading import check_flash_attention

        nb = nbformat.read("solutions/08_flash_attention.ipynb", as_version=4)
        namespace = {}
        for cell in nb.cells:
            if cell.cell_type == "code" and "check_flash_attention(" not in cell.source:
                exec(cell.source, namespace)
        result = check_flash_attention(namespace["flash_attention"], hidden=True)
        assert result.passed, str(result)
        print("numba" in sys.modules, "scipy" in sys.modules)
    """))
    assert out.split() == ["False", "False"]
