"""Tests for attention_course/chapters/io_traffic.py: the bytes the plain and the tiled attention move, counted on the
course's own loop, agree with a count over its tiles, and the tiled loop still computes attention."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_course import scaled_dot_product_attention
from attention_course.chapters import io_traffic
from attention_course.chapters.io_traffic import (
    PUBLISHED_FLASH_FIGURES, SlowMemory, Traffic, flash_block_sizes, flash_io_formula, plain_numbers, plain_traffic,
    tiled_traffic,
)
from attention_course.tiled.online_softmax import keys_seen, tiles


@settings(max_examples=60, deadline=None)
@given(n_q=st.integers(1, 40), n_k=st.integers(1, 40), d=st.integers(1, 9), d_v=st.integers(1, 9),
       block_q=st.integers(1, 17), block_k=st.integers(1, 17), causal=st.booleans(), seed=st.integers(0, 2**16))
def test_the_tiled_loop_reads_each_tile_it_visits_once_and_writes_the_output_once(n_q, n_k, d, d_v, block_q, block_k,
                                                                                  causal, seed):
    if causal:
        n_k = n_q
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, n_q, d)) if n_q == n_k else (rng.standard_normal((n_q, d)), rng.standard_normal((n_k, d)))
    v = rng.standard_normal((n_k, d_v))
    out, traffic = tiled_traffic(q, k, v, block_q, block_k, is_causal=causal)
    np.testing.assert_allclose(out, scaled_dot_product_attention(q, k, v, is_causal=causal), rtol=1e-12, atol=1e-14)
    # an independent count: over the key tiles the loop visits, in order; a tile is read unless it is the one
    # fast memory already holds (the same keys as the tile before: all the keys fit in one tile)
    visited = [keys for rows in tiles(n_q, block_q) for keys in tiles(keys_seen(rows, n_k, causal), block_k)]
    key_rows = sum(keys.stop - keys.start for i, keys in enumerate(visited) if i == 0 or keys != visited[i - 1])
    assert traffic.reads == {"Q": n_q * d * 8, "K": key_rows * d * 8, "V": key_rows * d_v * 8}
    assert traffic.writes == {"O": n_q * d_v * 8}
    assert "S" not in traffic.reads and "S" not in traffic.writes  # no score ever leaves fast memory
    bq, bk = min(block_q, n_q), min(block_k, n_k)
    assert traffic.fast_numbers <= bq * d + bk * (d + d_v) + bq * bk + bq * (d_v + 2)


def test_the_plain_computation_writes_and_reads_the_scores_and_the_weights():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((50, 8)).astype(np.float32) for _ in range(3))
    out, traffic = plain_traffic(q, k, v)
    np.testing.assert_allclose(out, scaled_dot_product_attention(q, k, v), rtol=1e-5)
    square = 50 * 50 * 4
    assert traffic.reads == {"Q": 1600, "K": 1600, "S": square, "P": square, "V": 1600}
    assert traffic.writes == {"S": square, "P": square, "O": 1600}
    assert traffic.total == plain_numbers(50, 8) * 4 and traffic.of("S") == 2 * square


@pytest.mark.parametrize("fast_memory", [2**9, 2**11, 2**12, 2**13, 2**14])
def test_tiles_chosen_for_a_fast_memory_fit_in_it_and_follow_n2_d2_over_m(fast_memory):
    n, d = 256, 16
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((n, d)).astype(np.float32) for _ in range(3))
    block_q, block_k = flash_block_sizes(fast_memory, d)
    _, traffic = tiled_traffic(q, k, v, block_q, block_k)
    assert traffic.fast_numbers <= fast_memory
    numbers = traffic.total // 4
    assert numbers == 2 * n * d + -(-n // block_q) * 2 * n * d  # Q and O once; K and V once per tile of queries
    ratio = numbers / flash_io_formula(n, d, fast_memory)
    assert ratio >= 12  # each of the n / b_q passes reads 2 n d numbers, b_q <= M / 6d
    if fast_memory <= n * d / 4:
        assert ratio <= 16  # within a constant of the formula while M is well below n d


def test_the_tiled_loop_moves_less_than_the_plain_one_once_fast_memory_holds_a_few_d_squared():
    n, d = 512, 32
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((n, d)) for _ in range(3))
    _, plain = plain_traffic(q, k, v)
    moved = {m: tiled_traffic(q, k, v, *flash_block_sizes(m, d))[1].total for m in (2**10, 2**12, 2**14)}
    assert moved[2**10] > plain.total > moved[2**12] > moved[2**14]


def test_slow_memory_counts_a_slice_again_only_after_another_was_read_or_written():
    traffic = Traffic()
    x = SlowMemory(np.arange(12.0).reshape(6, 2), "X", traffic)
    assert x.shape == (6, 2) and x.dtype == np.float64
    x[0:2]
    x[0:2]  # still in fast memory
    assert traffic.reads == {"X": 32}
    x[2:4]
    x[0:2]
    assert traffic.reads == {"X": 96}
    x[0:2] = 0.0
    x[0:2]
    assert traffic.reads == {"X": 128} and traffic.writes == {"X": 32} and traffic.total == 160


def test_block_sizes_need_room_for_one_query_and_one_key():
    assert flash_block_sizes(6 * 64, 64) == (1, 1)
    assert flash_block_sizes(100_000, 64) == (260, 64)
    with pytest.raises(ValueError, match="at least 6 d"):
        flash_block_sizes(100, 64)
    with pytest.raises(ValueError, match="one head"):
        tiled_traffic(np.ones((2, 3, 4)), np.ones((2, 3, 4)), np.ones((2, 3, 4)), 2, 2)


def test_published_figures_are_fractions_with_their_sources():
    assert [f.method for f in PUBLISHED_FLASH_FIGURES] == ["FlashAttention", "FlashAttention-2", "FlashAttention-3",
                                                           "FlashAttention-4"]
    for figure in PUBLISHED_FLASH_FIGURES:
        low, high = figure.fraction_of_peak
        assert 0 < low <= high < 1
        assert "arXiv:" in figure.source and f"{round(100 * high)}%" in figure.reported
    assert io_traffic.PUBLISHED_FLASH_FIGURES is PUBLISHED_FLASH_FIGURES
