"""The head-view explorer: its state is the model's weights, and the page draws them.

The browser part mounts the explorer's static HTML (what the book page holds)
in Chromium, without a kernel and without network, and checks what it shows
against the forward pass.
"""

from __future__ import annotations


import numpy as np
import pytest
import traitlets

from attention_course.explorers.bundle import bundle
from attention_course.explorers.head_view import HeadViewExplorer, decode_weights, encode_passage
from attention_course.explorers.widget import script_json
from attention_course.pretrained import fetch_model, load_model

LEGAL = "The Lessee shall indemnify the Lessor. Such indemnity survives termination."


@pytest.fixture(scope="module")
def model():
    fetch_model()  # as `attention-course fetch-model`; nothing to do if the set-up ran it
    return load_model()


@pytest.fixture(scope="module")
def explorer(model):
    return HeadViewExplorer(model, [LEGAL, "my card was blocked"], layer=2, head=9, query=14)


def test_the_state_holds_every_weight_to_a_thousandth(model, explorer):
    run = model(LEGAL)
    passage = explorer.passages[0]
    assert passage["text"] == LEGAL and passage["tokens"] == list(run.tokens.pieces)
    assert len(passage["weights"]) == 6 * 12 * 21 * 21 and all(isinstance(w, int) for w in passage["weights"][:50])
    assert np.abs(decode_weights(passage, 6, 12) - run.attentions).max() <= 0.5e-3 + 1e-9
    np.testing.assert_allclose(explorer.weights(), run.attention(2, 9), atol=0.5e-3 + 1e-9)
    assert "14:ind → 5:ind (0.975)" in explorer.summary()


def test_encode_rounds_to_the_nearest_thousandth(model):
    run = model("my card was blocked")
    w = encode_passage(run)["weights"]
    assert w == np.rint(run.attentions.astype(np.float64) * 1000).astype(int).ravel().tolist()


def test_a_typed_sentence_is_run_by_the_kernel_and_selected(model):
    e = HeadViewExplorer(model, [LEGAL])
    e.text = "Such indemnity survives termination."
    assert len(e.passages) == 2 and e.passage == 1 and e.query == -1 and e.error == "" and e.text == ""
    np.testing.assert_allclose(decode_weights(e.passages[1], 6, 12), model(e.passages[1]["text"]).attentions, atol=6e-4)


@pytest.mark.parametrize(("text", "message"), [("   ", "at least one word"), ("lease " * 600, "only 512 positions")])
def test_bad_sentences_show_an_error_and_change_nothing(model, text, message):
    e = HeadViewExplorer(model, [LEGAL])
    e.text = text
    assert message in e.error and len(e.passages) == 1 and e.passage == 0 and e.text == ""


@pytest.mark.parametrize(("name", "value"), [("layer", 6), ("head", -1), ("passage", 2), ("query", 21)])
def test_out_of_range_choices_are_refused(explorer, name, value):
    with pytest.raises(traitlets.TraitError, match=f"{name} must be in"):
        setattr(explorer, name, value)


def test_sentences_must_be_a_list(model):
    with pytest.raises(ValueError, match="non-empty list"):
        HeadViewExplorer(model, LEGAL)


def test_the_static_page_needs_no_network(explorer):
    page = explorer.static_html()
    assert script_json(bundle("head_view.js")) in page  # the module itself, inlined
    assert 'data-explorer-host="head_view"' in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page


def test_the_page_draws_the_head_and_lists_the_query_keys(explorer, offline, tmp_path, model):
    html_file = tmp_path / "head_view.html"
    html_file.write_text(f"<!doctype html><meta charset='utf-8'><body>{explorer.static_html()}</body>", encoding="utf-8")
    new_page, problems = offline  # network cut off; console errors fail the test
    page = new_page()
    page.goto(html_file.as_uri())
    page.wait_for_selector('[data-explorer="head-view"] svg line')
    run = model(LEGAL)

    # query 14 ("ind" of "indemnity") in layer 2 head 9: its strongest key is 5, "ind" of "indemnify"
    first = page.locator('[data-role="top-keys"] tr').first
    assert first.locator("th").inner_text() == "5: ind"
    assert first.locator("td").first.inner_text() == "0.975"
    weights = [float(x) for x in page.locator("svg line").evaluate_all("ls => ls.map(l => l.dataset.weight)")]
    expected = np.round(run.attention(2, 9)[14].astype(np.float64) * 1000) / 1000
    assert sorted(weights, reverse=True) == sorted(expected[expected >= 0.01].tolist(), reverse=True)
    assert page.locator('form').count() == 0  # no kernel: no sentence box, a note instead

    # every query, then another head, another sentence
    page.select_option('[data-role="query"]', "-1")
    n_all = page.locator("svg line").count()
    A = np.round(run.attention(2, 9).astype(np.float64) * 1000) / 1000
    assert n_all == int((A >= 0.01).sum())
    page.select_option('[data-role="layer"]', "5")
    page.select_option('[data-role="head"]', "9")
    B = np.round(run.attention(5, 9).astype(np.float64) * 1000) / 1000
    assert page.locator("svg line").count() == int((B >= 0.01).sum())
    page.locator('svg text[data-side="query"][data-index="16"]').click()  # "##nity"
    assert page.locator('[data-role="query"]').input_value() == "16"
    top = page.locator('[data-role="top-keys"] tr th').first.inner_text()
    assert top == f"{int(np.argmax(B[16]))}: {run.tokens.pieces[int(np.argmax(B[16]))]}"
    page.select_option('[data-role="passage"]', "1")
    assert page.locator('svg text[data-side="key"]').count() == 6  # [CLS] my card was blocked [SEP]
    assert page.locator('[data-role="query"]').input_value() == "-1"
    problems.assert_none()
