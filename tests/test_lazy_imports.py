"""What `import attention_course` and `import attention_course.grading` load, pinned in a fresh interpreter.

A student's check waits for every module these imports load, so the next heavy
import (SciPy, matplotlib, numba, IPython, nbformat, a chapter's measurements)
fails here and has to be made lazy, or added to the pins on purpose. The
chapter helpers, the decoders and the tiled attention are loaded on first use
(`ac.flash_attention`, `ac.chapters.cost`), and each name of `__all__` is
still there.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

LOADS = """
import json, sys
before = set(sys.modules)
{statement}
new = set(sys.modules) - before
print(json.dumps({{
    "course": sorted(m for m in new if m.startswith("attention_course")),
    "libraries": sorted({{m.split(".")[0] for m in new if not m.startswith("attention_course")}}
                        - set(sys.stdlib_module_names)),
}}))
"""


def loaded(statement: str) -> dict[str, list[str]]:
    """The course's modules and the libraries (outside the standard library) that `statement` loads."""
    done = subprocess.run([sys.executable, "-c", LOADS.format(statement=statement)], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    return json.loads(done.stdout)


def test_import_attention_course_loads_the_core_and_numpy_alone():
    found = loaded("import attention_course")
    assert found["libraries"] == ["numpy"]
    core = ["attention", "backward", "masks", "multi_head", "norms", "positions", "rope_scaling", "sinks", "softcap",
            "softmax", "_checks"]
    assert found["course"] == sorted(["attention_course", "attention_course.core"]
                                     + [f"attention_course.core.{name}" for name in core])


def test_import_grading_loads_the_checks_and_what_their_references_need():
    found = loaded("import attention_course.grading")
    # threadpoolctl: the tiled exercise's reference (tiled/_compiled/threads.py); ml_dtypes: the decoding
    # exercise's (decoder.step imports the checkpoints' reader, which widens bfloat16); numpy.random, whose
    # compiled modules bring Cython's runtime: the worked example's numbers drawn for each student
    libraries = [name for name in found["libraries"] if not name.startswith(("_cython_", "cython_runtime"))]
    assert libraries == ["ml_dtypes", "numpy", "threadpoolctl"]
    parts = {".".join(name.split(".")[:2]) for name in found["course"]}
    assert parts == {"attention_course", "attention_course._cpus", "attention_course._tables",
                     "attention_course.chapters", "attention_course.core", "attention_course.decoder",
                     "attention_course.grading", "attention_course.tiled"}
    # of the chapters, the bank-bot example and the roofline's counts (the references of a decoding step's cost,
    # with the two small modules they import); nothing of the instructor's room
    assert [n for n in found["course"] if n.startswith("attention_course.chapters.")] == [
        "attention_course.chapters.cost", "attention_course.chapters.decoding", "attention_course.chapters.roofline",
        "attention_course.chapters.worked_example"]
    assert not [n for n in found["course"] if n.startswith("attention_course.grading.kit")]


def test_a_float64_softmax_never_imports_ml_dtypes_and_bfloat16_still_works():
    code = ("import sys, numpy as np, attention_course as ac\n"
            "ac.softmax(np.arange(6.0).reshape(2, 3))\n"
            "ac.scaled_dot_product_attention(np.eye(3, dtype=np.float32), np.eye(3), np.eye(3))\n"
            "print('ml_dtypes' in sys.modules)\n"
            "from ml_dtypes import bfloat16\n"
            "print(ac.softmax(np.array([[0.0, 1.0]], dtype=bfloat16)).dtype)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.split() == ["False", "bfloat16"]


def test_every_name_of_all_is_there_and_listed_by_dir():
    code = ("import json, attention_course as ac, attention_course.chapters as ch\n"
            "from attention_course import *\n"
            "print(json.dumps({m.__name__: [[n, getattr(m, n).__module__ if hasattr(getattr(m, n), '__module__') "
            "else None, n in dir(m)] for n in m.__all__] for m in (ac, ch)}))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    for package, names in json.loads(done.stdout).items():
        assert names, package
        for name, module, listed in names:
            assert listed, (package, name)
            assert module is None or module.startswith("attention_course"), (package, name, module)


def test_lazy_names_are_the_objects_of_their_modules():
    import attention_course as ac
    from attention_course import chapters
    from attention_course.chapters import roofline, worked_example
    from attention_course.decoder import KVCache
    from attention_course.tiled.flash import flash_attention

    assert ac.flash_attention is flash_attention and ac.KVCache is KVCache
    assert ac.BANK_BOT is worked_example.BANK_BOT is chapters.BANK_BOT
    assert chapters.time_decode_step is roofline.time_decode_step  # the roofline's, as before the lazy imports
    assert ac.tiled.default_backend() in ac.tiled.available_backends()  # a subpackage on first use
    assert ac.chapters.cost.tile_count is ac.tile_count
    for package in (ac, chapters):
        assert set(package.__all__) <= set(dir(package))
    np.testing.assert_allclose(ac.BANK_BOT.trace().weights.sum(), 1.0)


def test_an_unknown_name_is_an_attribute_error():
    import attention_course as ac
    from attention_course import chapters

    for package in (ac, chapters):
        try:
            package.no_such_name
        except AttributeError as err:
            assert "no_such_name" in str(err)
        else:
            raise AssertionError(f"{package.__name__}.no_such_name did not raise")
        assert not hasattr(package, "no_such_name")
