"""What the chapters say torch and transformers do: the stored measurements and a fresh one.

The book is built without torch, so its chapters show the measurements stored
in attention_course/chapters/frameworks_measured.json, with the versions that
made them. Where torch and transformers are installed (CI installs them), the
stored results must equal a fresh measurement made with the same versions;
otherwise the stored file is out of date and this test says how to rewrite it.
"""

from __future__ import annotations

import json
import math

import pytest

from attention_course.chapters import frameworks

RECORD = "python -m attention_course.chapters.frameworks"

TOLERANCE = {"sdpa_16bit": {"abs_tol": 0.05}}
"""Per measurement, how far a fresh one may be from the stored one. The share of 16-bit outputs
that differ depends on the CPU's instructions the kernel picks; everything else must be equal."""


def test_every_measurement_is_stored_with_its_versions():
    data = json.loads(frameworks.MEASURED.read_text(encoding="utf-8"))
    assert set(data["results"]) == set(frameworks.MEASUREMENTS)
    assert data["versions"]["torch"] and data["versions"]["transformers"]
    stored = frameworks.stored_measurements()
    assert not stored.fresh and stored.source == "stored results (no torch here)"
    assert stored.versions == f"torch {data['versions']['torch']}, transformers {data['versions']['transformers']}"


def test_without_torch_the_chapters_read_the_stored_file(monkeypatch):
    monkeypatch.setattr(frameworks, "installed_versions", lambda: None)
    shown = frameworks.framework_measurements()
    assert not shown.fresh and shown["masked_row"] == frameworks.stored_measurements()["masked_row"]


def test_a_stored_file_missing_a_measurement_is_refused(tmp_path):
    data = json.loads(frameworks.MEASURED.read_text(encoding="utf-8"))
    del data["results"]["sdpa_16bit"]
    path = tmp_path / "measured.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"no stored result for \['sdpa_16bit'\].*attention_course.chapters.frameworks"):
        frameworks.stored_measurements(path)


def test_measurements_compare_by_structure_and_tolerance():
    same = frameworks.same_measurement
    assert same({"a": [1.0, math.nan], "b": "x"}, {"a": [1.0, math.nan], "b": "x"})
    assert not same({"a": 1.0}, {"a": 1.0, "b": 2})
    assert not same([1, 2], [1, 2, 3]) and not same(True, 1) and not same("2", 2)
    assert same(0.40, 0.42, abs_tol=0.05) and not same(0.40, 0.42)


def test_the_stored_measurements_equal_a_fresh_one():
    pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]' to re-measure")
    pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[torch]'")
    stored = frameworks.stored_measurements()
    fresh = frameworks.measure_all()
    assert (stored.torch, stored.transformers) == (fresh.torch, fresh.transformers), (
        f"the stored measurements were made with {stored.versions}, this is {fresh.versions}: "
        f"re-record them with `{RECORD}` and read the chapters' claims again")
    for name in frameworks.MEASUREMENTS:
        assert frameworks.same_measurement(stored[name], fresh[name], **TOLERANCE.get(name, {})), (
            f"{name}: stored {stored[name]}\nfresh {fresh[name]}\nre-record with `{RECORD}`")


def test_the_masked_row_measurement_says_what_the_stable_softmax_chapter_says():
    torch = pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]'")
    pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[torch]'")
    seen = frameworks.measure_masked_row(torch)
    assert all(math.isnan(x) for x in seen["softmax_row"])  # torch.softmax of all -inf
    assert seen["sdpa_row"] == [0.0] * 8 and seen["sdpa_rows_finite"]  # SDPA's safe softmax (torch >= 2.5)
    assert (seen["nan_rows_layer_1"], seen["nan_rows_layer_2"]) == (2, seen["n_rows"])  # the nan spreads
    assert "overflow" in seen["float16_fill_error"]
    assert seen["fill"]["float16"] == float(torch.finfo(torch.float16).min) == -65504
    assert seen["fill"]["float32"] == float(torch.finfo(torch.float32).min)
    assert seen["fill_weights"] == [0.25] * 4


def test_a_chapter_asks_for_the_measurements_it_shows(monkeypatch):
    monkeypatch.setattr(frameworks, "installed_versions", lambda: None)
    assert frameworks.framework_measurements("masked_row")["masked_row"]["n_rows"] == 4
    with pytest.raises(ValueError, match=r"unknown measurement \['masked_rows'\]; the measurements are masked_row"):
        frameworks.framework_measurements("masked_rows")
