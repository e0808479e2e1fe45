"""What `import attention_course`, `import attention_course.grading` and a check load, pinned in a fresh interpreter.

A student's check waits for every module these imports load, so the next heavy
import (SciPy, matplotlib, numba, IPython, nbformat, a chapter's measurements,
another exercise's checks) fails here and has to be made lazy, or added to the
pins on purpose. `import attention_course` loads the package's `__init__`
alone; the core's functions (each with its own module), the chapter helpers,
the decoders (each name of `attention_course.decoder` from its own module) and
the tiled attention are loaded on first use (`ac.softmax`,
`ac.flash_attention`, `ac.chapters.cost`), an exercise's checks when one of
them is first asked for (`from attention_course.grading import
check_softmax`), and each name of `__all__` is still there.
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


def test_import_attention_course_loads_the_package_alone_not_even_numpy():
    assert loaded("import attention_course") == {"course": ["attention_course"], "libraries": []}


def test_a_core_function_loads_its_own_module_and_what_it_imports():
    found = loaded("from attention_course import softmax")
    assert found["libraries"] == ["numpy"]
    assert found["course"] == ["attention_course", "attention_course.core", "attention_course.core._checks",
                               "attention_course.core.softmax"]
    found = loaded("import attention_course as ac\nac.scaled_dot_product_attention")  # as the book's chapters do
    assert found["course"] == ["attention_course", "attention_course.core"] + [
        f"attention_course.core.{name}" for name in ("_checks", "attention", "masks", "softmax")]
    found = loaded("import attention_course.core")
    assert found == {"course": ["attention_course", "attention_course.core"], "libraries": []}


def test_import_decoder_loads_the_package_alone_and_a_decode_step_no_checkpoint_reader():
    assert loaded("import attention_course.decoder")["course"] == ["attention_course", "attention_course.decoder"]
    found = loaded("from attention_course.decoder import decode_step, KVCache")["course"]
    assert {"attention_course.decoder.step", "attention_course.decoder.cache"} <= set(found)
    assert not [m for m in found if m.split(".")[-1].startswith(("config", "checkpoint", "weights", "layout", "load"))]
    found = loaded("from attention_course.decoder import random_decoder")["course"]
    assert {"attention_course.decoder.load", "attention_course.decoder.weights"} <= set(found)


def test_softmax_and_softcap_stay_the_functions_when_their_modules_are_imported_first():
    code = ("import attention_course.core.softcap, attention_course.core.softmax\n"  # as the decoders import them
            "from attention_course.core import softcap, softmax\n"
            "import attention_course as ac, attention_course.core as core, sys\n"
            "assert softcap is core.softcap is sys.modules['attention_course.core.softcap'].softcap\n"
            "assert softmax is core.softmax is ac.softmax is sys.modules['attention_course.core.softmax'].softmax\n"
            "import attention_course.core.masks\n"
            "assert core.masks is sys.modules['attention_course.core.masks']  # a module named otherwise stays one\n"
            "print(softmax.__module__, softcap.__module__)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.split() == ["attention_course.core.softmax", "attention_course.core.softcap"], done.stderr


def test_import_grading_loads_the_registry_and_no_exercise_s_checks():
    found = loaded("import attention_course.grading")
    assert found["libraries"] == []
    grading = [n for n in found["course"] if n.startswith("attention_course.grading")]
    assert grading == ["attention_course.grading", "attention_course.grading.checks",
                       "attention_course.grading.checks.engine", "attention_course.grading.checks.engine.code",
                       "attention_course.grading.checks.engine.results", "attention_course.grading.checks.exercises"]
    assert {".".join(n.split(".")[:2]) for n in found["course"]} == {"attention_course", "attention_course.grading"}


def test_a_check_loads_its_own_exercise_s_checks_and_what_their_references_need():
    found = loaded("from attention_course.grading import check_softmax")
    assert [n for n in found["course"] if n.startswith("attention_course.grading.checks.exercises.")] == [
        "attention_course.grading.checks.exercises.softmax"]
    assert {".".join(n.split(".")[:2]) for n in found["course"]} == {"attention_course", "attention_course.core",
                                                                      "attention_course.grading"}
    assert not [n for n in found["course"] if n.startswith("attention_course.grading.classroom")]
    # exercise 13's references are the roofline's counts, with the two small modules they import
    found = loaded("from attention_course.grading import check_decode_step_cost")
    assert [n for n in found["course"] if n.startswith("attention_course.grading.checks.exercises.")] == [
        "attention_course.grading.checks.exercises.step_cost"]
    assert [n for n in found["course"] if n.startswith("attention_course.chapters.")] == [
        "attention_course.chapters.cost", "attention_course.chapters.decoding", "attention_course.chapters.roofline"]


def test_the_check_command_loads_the_checks_of_the_notebook_s_exercise_alone(tmp_path):
    notebook = tmp_path / "03_softmax.ipynb"
    notebook.write_bytes((ROOT / "solutions" / "03_softmax.ipynb").read_bytes())
    found = loaded("import contextlib, io\nfrom attention_course.cli import main\n"
                   "with contextlib.redirect_stdout(io.StringIO()):\n"
                   f"    assert main(['check', {str(notebook)!r}]) == 0")
    assert [n for n in found["course"] if n.startswith("attention_course.grading.checks.exercises.")] == [
        "attention_course.grading.checks.exercises.softmax"]
    assert not [n for n in found["course"] if n.startswith(("attention_course.chapters", "attention_course.decoder",
                                                            "attention_course.tiled"))]


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
    code = ("import json, attention_course as ac, attention_course.chapters as ch, attention_course.grading as gr\n"
            "import attention_course.core as co, attention_course.decoder as de\n"
            "from attention_course import *\n"
            "from attention_course.core import *\n"
            "from attention_course.decoder import *\n"
            "from attention_course.grading import *\n"
            "print(json.dumps({m.__name__: [[n, getattr(m, n).__module__ if hasattr(getattr(m, n), '__module__') "
            "else None, n in dir(m)] for n in m.__all__] for m in (ac, co, ch, de, gr)}))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    for package, names in json.loads(done.stdout).items():
        assert names, package
        for name, module, listed in names:
            assert listed, (package, name)
            assert module is None or module.startswith("attention_course"), (package, name, module)


def test_lazy_names_are_the_objects_of_their_modules():
    import attention_course as ac
    from attention_course import chapters, core, grading
    from attention_course.chapters import roofline, worked_example
    from attention_course.core import masks as core_masks, softmax as core_softmax
    from attention_course.grading.checks.exercises import masks
    from attention_course.decoder import KVCache
    from attention_course.tiled.flash import flash_attention

    assert ac.flash_attention is flash_attention and ac.KVCache is KVCache
    assert ac.softmax is core_softmax is core.softmax and ac.causal_mask is core_masks.causal_mask is core.causal_mask
    assert ac.BANK_BOT is worked_example.BANK_BOT is chapters.BANK_BOT
    assert chapters.time_decode_step is roofline.time_decode_step  # the roofline's, as before the lazy imports
    assert ac.tiled.default_backend() in ac.tiled.available_backends()  # a subpackage on first use
    assert ac.chapters.cost.tile_count is ac.tile_count
    assert grading.check_causal_mask is masks.check_causal_mask and ac.grading is grading
    for package in (ac, core, chapters):
        assert set(package.__all__) <= set(dir(package))
    np.testing.assert_allclose(ac.BANK_BOT.trace().weights.sum(), 1.0)


def test_an_unknown_name_is_an_attribute_error():
    import attention_course as ac
    from attention_course import chapters, core, decoder, grading

    for package in (ac, core, chapters, decoder, grading):
        try:
            package.no_such_name
        except AttributeError as err:
            assert "no_such_name" in str(err)
        else:
            raise AssertionError(f"{package.__name__}.no_such_name did not raise")
        assert not hasattr(package, "no_such_name")
