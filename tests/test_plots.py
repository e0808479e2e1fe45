"""Tests for attention_course.chapters.plots: each figure shows exactly the arrays it was given."""

import matplotlib

matplotlib.use("Agg")  # no display in tests

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attention_course import BANK_BOT, attention_weights, causal_mask  # noqa: E402
from attention_course.chapters import plots  # noqa: E402

TOKENS = list(BANK_BOT.tokens)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture
def trace():
    return BANK_BOT.trace()


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def _arrows(ax):
    """{gid: (tail, head)} of the annotations drawn as arrows."""
    return {t.get_gid(): (np.array(t.xyann), np.array(t.xy)) for t in ax.texts if t.get_gid()}


# -- token_bars / weights_bar -------------------------------------------------


def test_weights_bar_heights_and_labels_are_the_weights(trace):
    ax = plots.weights_bar(trace.weights, TOKENS)
    heights = [bar.get_height() for bar in ax.patches]
    np.testing.assert_array_equal(heights, trace.weights)
    assert [t.get_text() for t in ax.get_xticklabels()] == TOKENS
    assert _texts(ax) == [f"{w:.3f}" for w in trace.weights]
    assert ax.get_ylim() == (0.0, 1.12)


def test_token_bars_marks_masked_keys_and_draws_minus_infinity_as_no_bar():
    masked = BANK_BOT.trace(attn_mask=np.array([True, True, False, False]))
    ax = plots.token_bars(masked.scaled_scores, TOKENS, mask=masked.mask, ylabel="scaled score")
    heights = [bar.get_height() for bar in ax.patches]
    assert heights == [0.5, 3.0, 0.0, 0.0]
    assert _texts(ax) == ["0.500", "3.000", "\u2212\u221e\nmasked", "\u2212\u221e\nmasked"]
    assert [bar.get_hatch() for bar in ax.patches] == [None, None, "//", "//"]
    assert ax.get_ylabel() == "scaled score"


def test_token_bars_handles_negative_values():
    ax = plots.token_bars([-2.0, 1.0], ["a", "b"])
    low, high = ax.get_ylim()
    assert low < -2.0 and high > 1.0


def test_bars_default_labels_and_given_axes():
    fig, (left, right) = plt.subplots(1, 2)
    ax = plots.weights_bar([0.25, 0.75], ax=right)
    assert ax is right
    assert len(left.patches) == 0
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1"]


def test_bars_reject_wrong_shapes():
    with pytest.raises(ValueError, match=r"values must have shape \(n_k,\); got shape \(2, 2\)"):
        plots.weights_bar(np.eye(2), ["a", "b"])
    with pytest.raises(ValueError, match=r"tokens must have one label per value \(4\); got 3"):
        plots.weights_bar(np.full(4, 0.25), ["a", "b", "c"])
    with pytest.raises(ValueError, match="mask must be a bool array of shape"):
        plots.weights_bar(np.full(4, 0.25), mask=np.ones(4))
    with pytest.raises(TypeError, match="values must hold real numbers"):
        plots.weights_bar(["a", "b"])


# -- attention_heatmap ----------------------------------------------------------


def test_heatmap_image_and_annotations_are_the_weights():
    queries = np.vstack([np.eye(4)[:3], BANK_BOT.query])  # (4, d_k)
    weights = attention_weights(queries, BANK_BOT.keys, is_causal=True)  # (4, 4)
    ax = plots.attention_heatmap(weights, TOKENS, mask=causal_mask(4))
    np.testing.assert_array_equal(ax.images[0].get_array(), weights)
    assert [t.get_text() for t in ax.get_yticklabels()] == TOKENS
    assert [t.get_text() for t in ax.get_xticklabels()] == TOKENS  # keys default to the query labels
    assert _texts(ax) == ["0" if w == 0 else f"{w:.2f}" for w in weights.ravel()]  # masked: "0", never "0.00"
    assert _texts(ax)[1] == "0" and weights[0, 1] == 0
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 6  # the strict upper triangle of a 4 x 4 causal mask
    assert {(p.get_x() + 0.5, p.get_y() + 0.5) for p in hatched} == {
        (j, i) for i in range(4) for j in range(4) if j > i
    }
    assert len(ax.figure.axes) == 2  # the heatmap and its colour bar


def test_heatmap_rectangular_with_separate_key_labels():
    weights = np.full((2, 3), 1 / 3)
    ax = plots.attention_heatmap(weights, ["q0", "q1"], ["a", "b", "c"], annotate=False, colorbar=False)
    assert len(ax.texts) == 0
    assert len(ax.figure.axes) == 1
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]


def test_heatmap_broadcasts_a_padding_mask_row():
    weights = np.array([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0]])
    ax = plots.attention_heatmap(weights, mask=np.array([[True, True, False]]), colorbar=False)
    assert sum(1 for p in ax.patches if p.get_hatch()) == 2  # the padding column, both rows


def test_heatmap_rejects_bad_input():
    with pytest.raises(ValueError, match=r"weights must have shape \(n_q, n_k\); got shape \(4,\)"):
        plots.attention_heatmap(np.full(4, 0.25))
    with pytest.raises(ValueError, match=r"key_tokens must have one label per column \(key\) \(3\); got 2"):
        plots.attention_heatmap(np.full((2, 3), 1 / 3), ["a", "b"], ["x", "y"])
    with pytest.raises(TypeError, match="mask must be boolean"):
        plots.attention_heatmap(np.eye(2), mask=np.eye(2))
    with pytest.raises(ValueError, match=r"mask must broadcast to the weights' shape \(2, 2\)"):
        plots.attention_heatmap(np.eye(2), mask=np.ones((3, 3), dtype=bool))


# -- mask_heatmap -----------------------------------------------------------------


def test_mask_heatmap_shows_the_additive_bias():
    mask = causal_mask(3, 4)
    ax = plots.mask_heatmap(mask, ["a", "b", "c"], ["w", "x", "y", "z"])
    np.testing.assert_array_equal(ax.images[0].get_array(), mask.astype(float))
    expected = ["0" if allowed else "\u2212\u221e" for allowed in mask.ravel()]
    assert _texts(ax) == expected


def test_mask_heatmap_rejects_non_boolean_masks():
    with pytest.raises(TypeError, match="mask must be boolean"):
        plots.mask_heatmap(np.tri(3))
    with pytest.raises(ValueError, match=r"mask must have shape \(n_q, n_k\); got shape \(3,\)"):
        plots.mask_heatmap(np.ones(3, dtype=bool))


# -- value_mix ----------------------------------------------------------------------


def test_value_mix_chain_ends_at_the_output(trace):
    ax = plots.value_mix(trace.weights, BANK_BOT.values, TOKENS)
    arrows = _arrows(ax)
    tail, head = arrows["output"]
    np.testing.assert_array_equal(tail, [0, 0])
    np.testing.assert_allclose(head, trace.output, rtol=0, atol=1e-15)
    # The weighted pieces are chained tip to tail: each starts where the previous ended.
    position = np.zeros(2)
    for j, tok in enumerate(TOKENS):
        tail, head = arrows[f"piece:{tok}"]
        np.testing.assert_allclose(tail, position, atol=1e-15)
        np.testing.assert_allclose(head - tail, trace.weights[j] * BANK_BOT.values[j], atol=1e-15)
        position = head
        np.testing.assert_array_equal(arrows[f"value:{tok}"][1], BANK_BOT.values[j])
    assert "output [0.19, 0.91]" in _texts(ax)


def test_value_mix_rejects_values_that_are_not_two_dimensional():
    with pytest.raises(ValueError, match=r"values must have shape \(n_k, 2\) to be drawn in a plane; got shape \(4, 3\)"):
        plots.value_mix(np.full(4, 0.25), np.ones((4, 3)))
    with pytest.raises(ValueError, match=r"one entry per key: weights \(3,\), values \(4, 2\)"):
        plots.value_mix(np.full(3, 1 / 3), np.ones((4, 2)))


def test_plots_do_not_modify_their_inputs(trace):
    weights = trace.weights.copy()
    values = BANK_BOT.values.copy()
    grid = np.array([[0.3, 0.7], [1.0, 0.0]])
    before = (weights.copy(), values.copy(), grid.copy())
    plots.weights_bar(weights, TOKENS)
    plots.value_mix(weights, values, TOKENS)
    plots.attention_heatmap(grid, mask=np.array([[True, True], [True, False]]))
    for arr, old in zip((weights, values, grid), before):
        np.testing.assert_array_equal(arr, old)


def test_token_colours_are_stable_across_figures(trace):
    bars = plots.weights_bar(trace.weights, TOKENS)
    mix = plots.value_mix(trace.weights, BANK_BOT.values, TOKENS)
    card = TOKENS.index("card")
    assert bars.patches[card].get_facecolor()[:3] == pytest.approx(plots.token_colour(card))
    piece = next(t for t in mix.texts if t.get_gid() == "piece:card")
    assert matplotlib.colors.to_rgb(piece.arrow_patch.get_edgecolor()) == pytest.approx(plots.token_colour(card))


def test_figures_fit_a_phone_and_head_grid_can_put_heads_in_rows():
    from attention_course.pretrained.figures import head_grid

    many = np.full((12, 12), 1 / 12)
    for ax in (plots.attention_heatmap(many), plots.mask_heatmap(causal_mask(12)), plots.weights_bar(np.full(12, 1 / 12))):
        assert ax.figure.get_figwidth() <= plots.PHONE_WIDTH
        plt.close(ax.figure)
    values = np.arange(72.0).reshape(6, 12) / 72  # (L, h)
    wide, tall = head_grid(values), head_grid(values, heads_as_rows=True)
    np.testing.assert_array_equal(tall.images[0].get_array(), values.T)
    assert tall.figure.get_figwidth() < wide.figure.get_figwidth() and tall.get_ylabel() == "head"
    assert tall.figure.get_figwidth() <= plots.PHONE_WIDTH
    plt.close("all")


@pytest.mark.parametrize("n", [5, 13, 21])
def test_heatmap_column_labels_do_not_overlap(n):
    """Long piece labels ("14:ind", "20:[SEP]") at the legal chapter's size: no two column labels overlap."""
    labels = [f"{i}:{'[SEP]' if i == n - 1 else '##nity'}" for i in range(n)]
    fig, ax = plt.subplots(figsize=(5.2, 5.6), layout="constrained")
    plots.attention_heatmap(np.full((n, n), 1 / n), labels, ax=ax, annotate=False)
    ax.tick_params(labelsize=8)
    fig.canvas.draw()
    boxes = [t.get_window_extent() for t in ax.get_xticklabels()]
    for left, right in zip(boxes, boxes[1:]):
        assert left.x1 <= right.x0 + 0.5 or not left.overlaps(right), (left, right)
    plt.close(fig)
