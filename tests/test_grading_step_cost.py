"""Tests for attention_course/grading/checks/exercises/step_cost.py: exercise 13's counts and the inputs it shows.

The mistakes are predicted by `counted_attention` and `assembled_step`, the
package's counts rebuilt with one part changed; with nothing changed they
must be the references themselves, `attention_cost` and `step_cost`.
"""

import numpy as np
import pytest

from attention_course.chapters.roofline import AttentionLayout, DecoderShape, attention_cost, step_cost
from attention_course.decoder.cache import itemsize
from attention_course.grading.checks.exercises import step_cost as ex

LAYOUTS = [
    AttentionLayout("MHA", 3, 4, 4, 8),
    AttentionLayout("GQA", 2, 12, 3, 16),
    AttentionLayout("MQA", 5, 7, 1, 32),
    AttentionLayout("MLA", 4, 6, 1, 16, kv_lora_rank=48, qk_rope_head_dim=8),
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda c: c.name)
@pytest.mark.parametrize("context", [0, 1, 37])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "int8"])
def test_the_rebuilt_attention_count_is_attention_cost(layout, context, dtype):
    cost = attention_cost(layout, 1, context, dtype=dtype)
    assert ex.counted_attention(layout, context, itemsize(dtype)) == (cost.flops, cost.bytes)


@pytest.mark.parametrize("layout", LAYOUTS[:3], ids=lambda c: c.name)
@pytest.mark.parametrize("batch", [1, 5])
def test_the_assembled_step_is_step_cost(layout, batch):
    shape = DecoderShape(layout, d_model=40, d_ff=96, vocab_size=77)
    total = step_cost(shape, 1, 11, batch=batch, dtype="float16").total
    got = ex.assembled_step(shape, attention_cost(layout, 1, 11, dtype="float16"), batch, 2)
    assert got == (total.flops, total.bytes, total.intensity)


def test_an_independent_count_of_a_gqa_step_agrees():
    # 2 layers of 4 query heads sharing 2 key/value heads of 8, 16 cached tokens, bfloat16, one request
    flops, nbytes, _ = ex.step_reference(2, 4, 2, 8, 32, 64, 100, 16, 1, "bfloat16")
    per_layer = 32 * 32 + 2 * 32 * 16 + 32 * 32 + 3 * 32 * 64  # W_q, W_k and W_v, W_o, the feed-forward
    matrices = 2 * per_layer + 32 * 100
    attention_flops = 2 * 4 * 17 * 2 * (8 + 8)  # layers x query heads x keys x 2 x (score + mix)
    cache = 2 * 17 * 2 * 2 * 8  # layers x tokens x (key, value) x h_kv x d, read
    written = 2 * 2 * 2 * 8  # the new token's keys and values, every layer
    queries_outputs = 2 * 4 * 2 * 8
    assert flops == 2 * matrices + attention_flops
    assert nbytes == 2 * (matrices + 2 * 2 * 32 + 32 + 32 + cache + written + queries_outputs)


def test_the_visible_inputs_show_every_property_the_chapter_counts():
    attention = [c.args for c in ex.DECODE_ATTENTION_COST.cases if not c.hidden]
    layouts = [ex._layout(*a[:6]) for a in attention]
    assert {c.kind for c in layouts} == {"MHA", "GQA", "MQA", "MLA"}
    assert all(c.n_layers > 2 for c in layouts)  # several layers, and never 2: halving would look like one layer
    assert {itemsize(a[-1]) for a in attention} == {1, 2, 4, 8}
    assert any(a[6] == 0 for a in attention)  # the first token
    assert any(ex.attention_reference(*a)[0] > 2**31 for a in attention)  # counts past 32-bit integers
    step = [c.args for c in ex.DECODE_STEP_COST.cases if not c.hidden]
    assert any(a[8] > 1 for a in step) and any(a[8] == 1 for a in step)  # batches
    assert any(a[4] != a[1] * a[3] for a in step)  # d_model != h_q x d
    assert {itemsize(a[-1]) for a in step} >= {1, 2, 4}


def test_counts_are_compared_exactly_even_when_they_are_large():
    args = next(c.args for c in ex.DECODE_ATTENTION_COST.cases if "131,072" in c.label)
    flops, nbytes = ex.attention_reference(*args)
    compare = ex.DECODE_ATTENTION_COST.compare
    case = ex.DECODE_ATTENTION_COST.cases[0]
    expected = (np.asarray(flops), np.asarray(nbytes))
    assert compare(case, expected, (np.asarray(flops), np.asarray(nbytes)), {}) is None
    message, _ = compare(case, expected, (np.asarray(flops), np.asarray(nbytes + 2)), {})
    assert message.startswith("bytes: expected") and "(flops right)" in message
