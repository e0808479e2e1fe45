"""Tests for attention_course/grading/run/sandbox/runner.py (one notebook, run again without what killed it) and
for how `run/plan.py` reads a notebook's file."""

from pathlib import Path

import numpy as np
import pytest

from attention_course.grading.checks.engine import calls
from attention_course.grading.run.plan import InvalidNotebook, code_cells, read_notebook
from attention_course.grading.run.sandbox.runner import Call, Limits, run_notebook
from attention_course.grading.run.status import CellOutcome

FAST = Limits(cell_seconds=2, call_seconds=2, grace_seconds=1, notebook_seconds=60)
DOUBLE = "def double(x):\n    return x * 2"

ROOT = Path(__file__).resolve().parents[1]


def call(function="double", group="g", call_id=0, args=None):
    return Call(call_id, group, function, (np.arange(3.0),) if args is None else args, seconds=2)


def test_cells_run_and_calls_come_back_as_arrays():
    run = run_notebook(["import numpy as np\nprint('hi')", "%time y = 1", DOUBLE], [call(), call("nope", call_id=1)], FAST)
    np.testing.assert_array_equal(run.observations[0].value, [0.0, 2.0, 4.0])
    assert run.observations[1].status == calls.CallOutcome.MISSING
    assert [c.status for c in run.cells.values()] == [CellOutcome.OK] * 3  # IPython magics work
    assert "hi" in run.output and run.incidents == [] and run.restarts == 0


def test_a_failing_cell_does_not_stop_the_next_ones():
    run = run_notebook(["1 / 0", DOUBLE], [call()], FAST)
    assert run.cells[0].status == CellOutcome.ERROR and "ZeroDivisionError" in run.cells[0].error
    assert run.observations[0].status == calls.CallOutcome.RETURNED


def test_os_exit_in_a_cell_costs_only_that_cell():
    run = run_notebook(["import os\nos._exit(0)", DOUBLE], [call()], FAST)
    assert run.cells[0].status == CellOutcome.KILLED and run.restarts == 1
    assert run.observations[0].status == calls.CallOutcome.RETURNED
    assert "os._exit" in run.incidents[0]


def test_a_call_that_kills_the_process_skips_the_rest_of_its_group():
    code = "import os\ndef boom(x):\n    os._exit(1)\n" + DOUBLE
    run = run_notebook([code], [call("boom", "b", 0), call("boom", "b", 1), call("double", "d", 2)], FAST)
    assert run.observations[0].status == calls.CallOutcome.CRASHED
    assert run.observations[1].status == calls.CallOutcome.SKIPPED
    assert run.observations[2].status == calls.CallOutcome.RETURNED


def test_read_notebook_rejects_what_is_not_a_notebook(tmp_path):
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{ not json")
    with pytest.raises(InvalidNotebook, match="not a valid notebook"):
        read_notebook(bad)
    wrong = tmp_path / "wrong.ipynb"
    wrong.write_text('{"cells": 3}')
    with pytest.raises(InvalidNotebook):
        read_notebook(wrong)


def _altered(solution: dict) -> dict[str, object]:
    """A solution notebook and versions of it that nbformat reads, converts, repairs or refuses."""
    import copy

    def changed(edit):
        nb = copy.deepcopy(solution)
        edit(nb)
        return nb

    def without_ids(nb, minor=5):
        nb["nbformat_minor"] = minor
        for cell in nb["cells"]:
            cell.pop("id", None)

    code = next(i for i, c in enumerate(solution["cells"]) if c["cell_type"] == "code")
    return {
        "as written": solution,
        "4.5 without cell ids": changed(without_ids),
        "4.4": changed(lambda nb: without_ids(nb, 4)),
        "4.6, from a later nbformat": changed(lambda nb: nb.update(nbformat_minor=6, extra=1)),
        "the same cell id twice": changed(lambda nb: [c.update(id="same") for c in nb["cells"]]),
        "sources as one string": changed(lambda nb: [c.update(source="".join(c["source"])) for c in nb["cells"]]),
        "an output": changed(lambda nb: nb["cells"][code].update(outputs=[{"output_type": "stream", "name": "stdout",
                                                                          "text": ["hi\n"]}])),
        "an unknown output": changed(lambda nb: nb["cells"][code].update(outputs=[{"output_type": "bogus"}])),
        "a text execution count": changed(lambda nb: nb["cells"][code].update(execution_count="1")),
        "no metadata": changed(lambda nb: nb.pop("metadata")),
        "a minor version True": changed(lambda nb: nb.update(nbformat_minor=True)),
        "format 3, cells of format 4": changed(lambda nb: nb.update(nbformat=3)),
        "format 3": {"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": ""}, "worksheets": [{"metadata": {}, "cells": [
            {"cell_type": "code", "input": ["def softmax(x):\n", "    return x"], "language": "python",
             "metadata": {}, "outputs": []}]}]},
        "a list": [1, 2],
    }


@pytest.mark.filterwarnings("ignore")  # nbformat warns as it repairs cell ids
def test_read_notebook_accepts_what_nbformat_accepts_and_reads_the_same_cells(tmp_path):
    import json
    from pathlib import Path

    import nbformat

    solution = json.loads((Path(__file__).resolve().parents[1] / "solutions" / "03_softmax.ipynb").read_text())
    for name, content in _altered(solution).items():
        path = tmp_path / "notebook.ipynb"
        path.write_text(json.dumps(content))
        try:
            expected = nbformat.reads(path.read_text(), as_version=4)
            nbformat.validate(expected)
        except Exception as err:  # noqa: BLE001 -- nbformat's verdict, whichever error it raises
            with pytest.raises(InvalidNotebook) as refused:
                read_notebook(path)
            assert str(err).strip().splitlines()[0][:300] in str(refused.value), name
            continue
        nb = read_notebook(path)
        assert nb["metadata"] == expected.metadata, name
        assert [(c["cell_type"], c["source"]) for c in nb["cells"]] == [
            (c.cell_type, c.source) for c in expected.cells], name


def test_read_notebook_never_follows_a_link_nor_quotes_what_it_read(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$SECRETHASH:19000:0:99999:7:::\n")
    (tmp_path / "link.ipynb").symlink_to(secret)
    with pytest.raises(InvalidNotebook, match="is a link to another file"):
        read_notebook(tmp_path / "link.ipynb")
    copy = tmp_path / "copy.ipynb"
    copy.write_bytes(secret.read_bytes())
    with pytest.raises(InvalidNotebook, match="it is not JSON") as caught:
        read_notebook(copy)
    assert "SECRET" not in str(caught.value)


def test_read_notebook_reads_a_byte_order_mark_and_utf16_as_json_does(tmp_path):
    text = (ROOT / "solutions" / "05_causal_mask.ipynb").read_text(encoding="utf-8")
    want = code_cells(read_notebook(ROOT / "solutions" / "05_causal_mask.ipynb"))
    for name, data in [("notepad", b"\xef\xbb\xbf" + text.encode()), ("powershell", text.encode("utf-16")),
                       ("utf16le", text.encode("utf-16-le"))]:
        (tmp_path / f"{name}.ipynb").write_bytes(data)
        assert code_cells(read_notebook(tmp_path / f"{name}.ipynb")) == want, name
    (tmp_path / "latin1.ipynb").write_bytes(text.encode().replace(b"attend", b"attend\xe9"))  # an editor's Latin-1
    with pytest.raises(InvalidNotebook, match="could not be read: 'utf-8' codec can't decode"):
        read_notebook(tmp_path / "latin1.ipynb")


def test_read_notebook_refuses_a_huge_file_without_reading_it(tmp_path):
    huge = tmp_path / "huge.ipynb"
    with huge.open("wb") as f:
        f.truncate(200_000_000)  # 200 MB of outputs, as far as the size says (a sparse file: nothing is written)
    with pytest.raises(InvalidNotebook, match=r"is 200.0 MB, more than the 67.1 MB a notebook may be; clear its outputs"):
        read_notebook(huge)


def test_a_fork_bomb_is_one_sentence_whichever_step_its_children_were_seen_in():
    # The worker's watch saw the cell fork; the children forked on while the grader called the functions, so the
    # sandbox's listing dates some of them to calls and to no step at all: they are the cell's, said once.
    from attention_course.grading.run.status import Finding
    from attention_course.grading.run.sandbox.channel import Alert
    from attention_course.grading.run.sandbox.runner import _places, _process_incidents, _Seen
    from attention_course.grading.run.sandbox.tree import Leftover

    seen = _Seen()
    seen.alerts = [Alert(Finding.PROCESS, "`os.fork()`", ("cell", 1))]
    seen.counts = {("cell", 1): {Finding.PROCESS: 7}}
    seen.leftovers = [Leftover("", False, step) for step in [("cell", 1)] * 40 + [("call", 3)] * 20 + [None] * 3]
    seen.peak = len(seen.leftovers) + 1  # as `_Seen.add` counts them: the sandbox held that many at once
    limits = Limits(processes=64)
    incidents = _process_incidents(seen, _places(["import numpy", "import os\nos.fork()"], []), limits)
    assert incidents == ["code cell 2 (`import os`) started processes (`os.fork()`), and tried to run more processes "
                         "than the 64 it may run at once (a thread counts as one); any still running when the notebook "
                         "finished were killed with its sandbox"]
    # one finding: whether any were still running depends on the machine's speed, not on what the notebook did
    assert incidents[0].kind == "too many processes" and seen.flags == {"too many processes"}


def test_a_fork_bomb_is_told_the_same_sentence_however_many_forks_were_refused():
    # How many forks a bomb tried before its cell was stopped depends on the machine's speed: a class graded twice
    # (or in shards) must get the same feedback, so no count is given once the limit was reached.
    from attention_course.grading.run.status import Finding
    from attention_course.grading.run.sandbox.channel import Alert
    from attention_course.grading.run.sandbox.runner import _places, _process_incidents, _Seen
    from attention_course.grading.run.sandbox.tree import Leftover

    said = []
    for tries in (2957, 5377):
        seen = _Seen()
        seen.alerts = [Alert(Finding.PROCESS, "`os.fork()`", ("cell", 1)), Alert(Finding.PROCESS_LIMIT, "", ("cell", 1))]
        seen.counts = {("cell", 1): {Finding.PROCESS: tries, Finding.PROCESS_LIMIT: 1}}
        seen.leftovers = [Leftover("", False, ("cell", 1))] * 63
        seen.peak = 64
        said.append(_process_incidents(seen, _places(["import numpy", "import os\nos.fork()"], []), Limits(processes=64)))
    assert said[0] == said[1] and len(said[0]) == 1
    assert "in all" not in said[0][0] and "more processes than the 64 it may run at once" in said[0][0]
