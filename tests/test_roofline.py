"""Tests for attention_course/chapters/roofline.py and kv_memory.py: FLOPs and bytes counted from a configuration agree
with counts taken from the arrays a step touches; the measurements and the figure behave."""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from attention_course import causal_mask
from attention_course.chapters import decoding, kv_memory, roofline
from attention_course.chapters.cost import attention_flops
from attention_course.chapters.roofline import (
    LAYOUTS, LLAMA_3_8B, PUBLISHED_LAYOUTS, AttentionLayout, Ceilings, Cost, DecoderShape, attention_cost, step_cost,
)
from attention_course.decoder import (
    KVCache, PagedKVCache, QuantizedKVCache, ReservedKVCache, kv_cache_bytes, random_decoder,
)


def small_model(n_kv_heads=2, dtype=np.float64):
    return random_decoder(np.random.default_rng(0), vocab_size=50, d_model=24, n_layers=3, n_heads=6,
                          n_kv_heads=n_kv_heads, head_dim=4, d_ff=40, dtype=dtype)


@pytest.mark.parametrize("layout", [*LAYOUTS, *PUBLISHED_LAYOUTS], ids=lambda c: c.name)
@pytest.mark.parametrize("context", [1, 7, 4096])
def test_a_decoding_step_counts_the_flops_the_cost_chapter_counts(layout, context):
    counted = attention_cost(layout, 1, context - 1, batch=3)
    flops = attention_flops(1, context, layout.score_size, layout.mix_size, batch=layout.n_layers * layout.n_heads * 3)
    assert counted.flops == flops.scores + flops.mix  # the softmax is left out


@pytest.mark.parametrize("n", [1, 2, 9, 64])
def test_prefill_counts_the_pairs_the_causal_mask_allows(n):
    layout = LAYOUTS[1]
    pairs = int(causal_mask(n).sum())
    assert attention_cost(layout, n).flops == layout.n_layers * layout.n_heads * pairs * 4 * layout.head_dim
    chunk = attention_cost(layout, 3, n)  # 3 tokens after n: the lower-right mask
    assert chunk.flops == layout.n_layers * layout.n_heads * int(causal_mask(3, n + 3, lower_right=True).sum()) * 4 * 128


@pytest.mark.parametrize("n_kv_heads", [6, 2, 1])
@pytest.mark.parametrize(("n_new", "n_past"), [(5, 0), (1, 11), (3, 4)])
def test_step_bytes_and_flops_agree_with_the_arrays_the_decoder_touches(n_kv_heads, n_new, n_past):
    model = small_model(n_kv_heads)
    c, w = model.config, model.weights
    counted = step_cost(DecoderShape.of(model), n_new, n_past, dtype="float64")
    # the weights: every array of every layer, the final norm and the output matrix, one embedding row a token
    layer_arrays = [a for layer in w.layers for a in vars(layer).values() if isinstance(a, np.ndarray)]
    read = sum(a.nbytes for a in layer_arrays) + w.final_norm.nbytes + w.lm_head.nbytes + n_new * w.embeddings[0].nbytes
    assert counted.weights.bytes == read
    matrices = [a for a in layer_arrays if a.ndim == 2] + [w.lm_head]
    assert counted.weights.flops == sum(2 * a.size for a in matrices) * n_new
    # attention: the cache as it is after the step, read once; the new keys and values written; queries and outputs
    cache = decoding.filled_cache(model, n_past, np.random.default_rng(1)) if n_past else model.new_cache()
    out = model.forward(np.arange(n_new), cache)
    q = np.zeros((c.n_heads, n_new, c.head_dim))  # what model.qkv gives for the new tokens
    new_kv = 2 * c.n_kv_heads * n_new * c.head_dim * 8
    assert counted.attention.bytes == cache.nbytes + c.n_layers * (new_kv + 2 * q.nbytes)
    weights_seen = int((out.attentions[0, 0] > 0).sum())  # (query, key) pairs that got a weight, one head, one layer
    assert counted.attention.flops == c.n_layers * c.n_heads * weights_seen * 4 * c.head_dim


@pytest.mark.parametrize("n", [1, 5, 300])
def test_a_cached_step_counts_what_the_decoding_chapter_counts(n):
    model = small_model()
    assert step_cost(DecoderShape.of(model), 1, n - 1).total.flops == decoding.decode_flops(model.config, n, True)


def test_what_each_layout_caches_per_token():
    mha, gqa, mqa, mla = LAYOUTS
    assert [x.kind for x in LAYOUTS] == ["MHA", "GQA", "MQA", "MLA"]
    for layout in (mha, gqa, mqa):
        assert layout.cached_per_token * layout.n_layers * 2 == kv_cache_bytes(layout.n_layers, layout.n_kv_heads,
                                                                               layout.head_dim, 1, "bfloat16")
    assert mla.cached_per_token == 512 + 64
    v3 = PUBLISHED_LAYOUTS[3]
    assert v3.kind == "MLA" and attention_cost(v3, 1, 0).bytes > 0
    assert v3.n_layers * v3.cached_per_token * 2 == 61 * 576 * 2  # 70,272 bytes a token in bfloat16
    assert [x.readers for x in LAYOUTS] == [1, 4, 32, 32]


@pytest.mark.parametrize("layout", [*LAYOUTS, *PUBLISHED_LAYOUTS], ids=lambda c: c.name)
@pytest.mark.parametrize("batch", [1, 16])
def test_a_decoding_step_does_readers_multiply_adds_per_cached_number_whatever_the_batch(layout, batch):
    context = 8192
    step = attention_cost(layout, 1, context - 1, batch=batch, dtype="bfloat16")
    cached_read = layout.n_layers * batch * context * layout.cached_per_token  # numbers
    per_number = step.flops / 2 / cached_read
    expected = layout.readers * (layout.score_size + layout.mix_size) * layout.n_kv_heads / layout.cached_per_token
    assert per_number == pytest.approx(expected, rel=1e-12)
    if layout.kind == "MHA":
        assert per_number == 1  # one multiply-add per number read, however many heads
    assert 0.9 * per_number <= step.intensity <= per_number  # bfloat16: 2 FLOPs per 2 bytes, minus the queries


def test_batching_requests_raises_the_intensity_of_the_weights_not_of_the_cache():
    one, many = (step_cost(LLAMA_3_8B, 1, 4095, batch=b) for b in (1, 32))
    assert many.weights.bytes < one.weights.bytes * 1.001  # read once for the whole batch
    assert many.weights.intensity == pytest.approx(32 * one.weights.intensity, rel=1e-3)
    assert many.attention.intensity == one.attention.intensity  # each request reads its own cache
    assert one.total.intensity < 2 < 10 < step_cost(LLAMA_3_8B, 512).total.intensity  # decode low, prefill high
    embeddings = LLAMA_3_8B.vocab_size * LLAMA_3_8B.d_model
    assert LLAMA_3_8B.weights + embeddings == pytest.approx(8.03e9, rel=0.001)  # Llama 3 8B's 8.03 billion parameters


def test_layouts_check_their_fields():
    with pytest.raises(ValueError, match="multiple of n_kv_heads"):
        AttentionLayout("x", 2, 6, 4, 8)
    with pytest.raises(ValueError, match="n_kv_heads must be 1"):
        AttentionLayout("x", 2, 4, 2, 8, kv_lora_rank=16)
    with pytest.raises(ValueError, match="kv_lora_rank"):
        AttentionLayout("x", 2, 4, 2, 8, kv_lora_rank=-1)
    with pytest.raises(ValueError, match="n_past"):
        attention_cost(LAYOUTS[0], 1, -1)
    with pytest.raises(ValueError, match="n_new"):
        step_cost(LLAMA_3_8B, 0)


def test_ceilings_give_the_roofline():
    ceilings = Ceilings(bandwidth=10e9, flops=100e9)
    assert ceilings.ridge == 10.0
    np.testing.assert_allclose(ceilings.attainable([1, 10, 1000]), [10e9, 100e9, 100e9])
    assert ceilings.time(Cost(flops=10**9, bytes=10**9)) == 0.1  # memory-bound: 1 GB at 10 GB/s
    assert ceilings.time(Cost(flops=10**12, bytes=10**9)) == 10.0  # compute-bound
    with pytest.raises(ValueError, match="bandwidth"):
        Ceilings(bandwidth=0.0, flops=1.0)


def test_the_measurements_report_their_runs():
    bandwidth = roofline.measure_bandwidth(n_bytes=2**22, repeat=2)
    assert bandwidth.times.shape == (2,) and bandwidth.work == 2**22 and bandwidth.per_second > 0
    assert bandwidth.per_second == bandwidth.work / bandwidth.times.min()
    rate = roofline.measure_matmul_rate(n=64, repeat=3)
    assert rate.work == 2 * 64**3 and rate.times.shape == (3,)
    ceilings = roofline.measure_ceilings(repeat=1, n_bytes=2**20, n=32)
    assert ceilings.bandwidth > 0 and ceilings.flops > 0 and ceilings.threads == 1
    model = small_model(dtype=np.float32)
    assert roofline.time_decode_step(model, 10, repeat=2, cache=ReservedKVCache(3, 20)).shape == (2,)
    assert roofline.time_prefill(model, 6, repeat=1).shape == (1,)
    with pytest.raises(ValueError, match="repeat"):
        roofline.measure_bandwidth(repeat=0)


def test_the_roofline_figure_draws_both_ceilings_and_the_points():
    ceilings = Ceilings(bandwidth=10e9, flops=100e9)
    points = [roofline.RooflinePoint("decode", Cost(flops=10**6, bytes=2 * 10**6), 1e-3),
              roofline.RooflinePoint("prefill", Cost(flops=10**9, bytes=10**7), 0.02)]
    ax = roofline.roofline_plot(ceilings, points, styles={"decode": {"marker": "s", "label": "decode"}})
    roof = ax.lines[0]
    x, y = roof.get_data()
    np.testing.assert_allclose(y, np.minimum(100, 10 * x))  # GFLOP/s
    assert x.min() <= 0.5 / 4 * 1.0001 and x.max() >= 100 * 3.99
    dots = [line for line in ax.lines if line.get_marker() in ("s", "o")]
    assert [(d.get_xdata()[0], d.get_ydata()[0]) for d in dots] == [(0.5, 1.0), (100.0, 50.0)]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert points[1].bandwidth == 10**7 / 0.02 and math.isclose(points[0].achieved, 1e9)
    matplotlib.pyplot.close(ax.figure)


def test_the_memory_label_of_the_roofline_covers_no_point_under_the_slope():
    ceilings = Ceilings(bandwidth=25.7e9, flops=90e9)  # a ridge near 3.5, as on the course machine
    points = [roofline.RooflinePoint(f"decode {i}", Cost(flops=int(f * 1e6), bytes=10**6), f * 1e6 / (share * 25.7e9 * f))
              for i, (f, share) in enumerate([(0.5, 0.2), (0.55, 0.4), (0.7, 0.3), (1.0, 0.15), (0.9, 0.45)])]
    # the figure as the book draws it (plots.PHONE_WIDTH wide; a phone shows the same image, scaled)
    ax = roofline.roofline_plot(ceilings, points, intensity_range=(0.1, 1000))
    ax.figure.canvas.draw()
    label, = [t for t in ax.texts if t.get_text().startswith("memory:")]
    box = label.get_window_extent()
    for line in ax.lines[1:]:  # the points (the first line is the roof)
        x, y = ax.transData.transform((line.get_xdata()[0], line.get_ydata()[0]))
        assert not (box.x0 - 6 <= x <= box.x1 + 6 and box.y0 - 6 <= y <= box.y1 + 6), line.get_label()
    assert ax.bbox.x0 <= box.x0 and box.x1 <= ax.bbox.x1  # inside the axes
    matplotlib.pyplot.close(ax.figure)


def test_a_gpus_cited_ridge_is_about_295_flops_per_byte():
    gpu = roofline.H100_SXM
    assert round(gpu.ceilings.ridge) == 295 and gpu.ceilings.ridge == 989e12 / 3.35e12
    assert "dense" in gpu.what and "datasheet" in gpu.source


def test_memory_held_reads_each_cache_and_paging_wastes_less_than_reservation():
    lengths = np.array([5, 40, 17, 1, 64])
    shape = dict(n_layers=2, n_kv_heads=2, head_dim=4)
    per_token = 2 * 2 * 2 * 4 * 4  # layers x (keys, values) x h_kv x d x float32
    used = kv_memory.memory_held(lambda: KVCache(2), lengths, **shape)
    assert used.tolist() == (lengths * per_token).tolist()
    reserved = kv_memory.memory_held(lambda: ReservedKVCache(2, 64), lengths, **shape)
    assert reserved.tolist() == [64 * per_token] * 5
    paged = kv_memory.memory_held(lambda: PagedKVCache(2, block_size=16), lengths, **shape)
    assert paged.tolist() == (-(-lengths // 16) * 16 * per_token).tolist()
    assert np.all(paged - used < 16 * per_token) and paged.sum() < reserved.sum()
    quantized = kv_memory.memory_held(lambda: QuantizedKVCache(2, key_axis="token"), lengths, **shape)
    assert quantized.tolist() == (lengths * 2 * 2 * 2 * (4 + 4)).tolist()  # 4 one-byte codes and a 4-byte scale
    with pytest.raises(ValueError, match="lengths"):
        kv_memory.memory_held(lambda: KVCache(2), [0, 3], **shape)


def test_logit_errors_are_zero_for_an_exact_cache_and_small_for_int8():
    model = small_model()
    ids = np.random.default_rng(2).integers(0, 50, 20)
    assert np.all(kv_memory.logit_errors(model, ids, 8, PagedKVCache(3, block_size=3)) == 0)
    errors = kv_memory.logit_errors(model, ids, 8, QuantizedKVCache(3, "int8", group_size=4))
    assert errors.shape == (13,) and 0 < errors.max() < 0.05
