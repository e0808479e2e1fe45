"""Tests for attention_course/chapters/without_all_scores.py and benchmarks/bench_frontier.py."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

import attention_course as ac
from attention_course.chapters import without_all_scores as w
from attention_course.core import scaled_dot_product_attention
from attention_course.core.sparse import sparse_attention, top_k_mask
from attention_course.decoder.published import published_entry

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_frontier.py"


def test_bank_bot_indexer_is_its_formula_written_out_and_keeps_card_and_blocked():
    ix = w.BANK_BOT_INDEXER
    by_hand = [sum(max(float(ix.q_index[h, 0] @ k), 0.0) for h in range(2)) for k in ix.k_index]
    np.testing.assert_allclose(ix.scores()[0], by_hand, rtol=1e-15)
    np.testing.assert_array_equal(ix.k_index, ac.BANK_BOT.keys[:, [1, 3]])
    assert top_k_mask(ix.scores(), 2, causal=False)[0].tolist() == [False, True, False, True]


def test_attention_sequence_raises_the_planted_keys_scores_by_exactly_the_boost():
    plain = w.attention_sequence(np.random.default_rng(3), 50, 8, 2, n_q=1)
    planted = w.attention_sequence(np.random.default_rng(3), 50, 8, 2, n_q=1, relevant=4, boost=5.0)
    np.testing.assert_array_equal(plain[0], planted[0])
    gain = (planted[0] @ planted[1].T - plain[0] @ plain[1].T)[0] / math.sqrt(8)  # (n_k,)
    moved = np.flatnonzero(np.abs(gain) > 1e-9)
    assert len(moved) == 4 and np.all(moved < 49)  # never the query's own key
    np.testing.assert_allclose(gain[moved], 5.0, rtol=1e-12)
    with pytest.raises(ValueError, match="relevant"):
        w.attention_sequence(np.random.default_rng(0), 5, 4, 2, n_q=2, relevant=4)


def test_top_k_loss_is_zero_with_every_key_and_matches_sparse_attention():
    q, k, v = w.attention_sequence(np.random.default_rng(4), 40, 8, 3, n_q=5)
    scores = q @ k.T / math.sqrt(8)
    loss = w.top_k_loss(q, k, v, scores, (3, 10, 40))
    assert loss.dropped_mass[-1] == 0 and loss.output_error[-1] < 1e-12
    assert np.all(np.diff(loss.dropped_mass) <= 1e-12)  # more keys kept, less weight dropped
    out, _ = sparse_attention(q[None], k[None], v[None], scores, 3)  # h = 1
    full = scaled_dot_product_attention(q, k, v, is_causal=False, attn_mask=top_k_mask(scores, 40))
    size = np.sqrt(np.mean(np.sum(v * v, axis=-1)))
    expected = np.mean(np.linalg.norm(out[0] - full, axis=-1)) / size
    assert loss.output_error[0] == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="index_scores"):
        w.top_k_loss(q, k, v, scores[:, :-1], (3,))


def test_projected_indexer_ranks_like_the_scores_when_d_index_is_large():
    q, k, _ = w.attention_sequence(np.random.default_rng(5), 200, 16, 2, n_q=4)
    exact = q @ k.T / 4
    approx = w.projected_indexer(np.random.default_rng(6), q, k, 4096)
    best = np.argmax(exact, axis=-1)
    assert np.array_equal(np.argmax(approx, axis=-1), best)


def test_recall_is_exact_up_to_d_k_for_the_best_state_and_never_past_it():
    rng = np.random.default_rng
    assert w.recall_error(rng(0), 16, 16, 4, "least_squares") < 1e-10
    assert w.recall_error(rng(0), 64, 16, 4, "least_squares") > 0.5
    assert w.recall_error(rng(0), 1, 16, 4, "delta") < 1e-5  # one pair, written once, read back
    assert w.recall_error(rng(0), 64, 16, 4, "delta") > w.recall_error(rng(0), 64, 16, 4, "least_squares")
    assert w.recall_error(rng(0), 256, 64, 4, "softmax") < 1e-3
    with pytest.raises(ValueError, match="memory"):
        w.recall_error(rng(0), 4, 4, 4, "cache")


def test_first_token_weight_scales_the_output_as_the_gate_does():
    q, K, V = ac.BANK_BOT.query, ac.BANK_BOT.keys, ac.BANK_BOT.values
    scores = K @ q * 0.5
    full = ac.scaled_dot_product_attention(q[None], K, V)[0]
    for f in (0.5, 0.1, 0.01):
        r = w.first_token_weight(scores, f)
        # a first token of key score r.first_score and value 0, joined in front
        row = np.exp(np.r_[r.first_score, scores] - np.max(np.r_[r.first_score, scores]))
        row /= row.sum()
        assert row[0] == pytest.approx(1 - f, rel=1e-12)
        np.testing.assert_allclose(row[1:] @ V, f * full, rtol=1e-12)
        np.testing.assert_allclose(ac.core.output_gate(full, np.full(2, r.gate_logit)), f * full, rtol=1e-12)
    assert w.first_token_weight(scores, 1.0).first_score == -np.inf
    with pytest.raises(ValueError, match="fraction"):
        w.first_token_weight(scores, 0.0)


def test_layer_memories_count_the_published_fields():
    m = w.layer_memories()
    assert m["qwen_full"].cached(1) == 2 * 2 * 256
    state, conv = 32 * 128 * 128, 3 * (2 * 16 * 128 + 32 * 128)  # 32 heads of 128 x 128; 3 inputs of q, k, v
    assert m["qwen_delta"].cached(10) == m["qwen_delta"].cached(10**6) == state + conv
    assert m["ds_sparse"].read(100) == 100 * (576 + 128)  # fewer than k tokens: all of them read
    assert m["ds_sparse"].read(10_000) == 2048 * 576 + 10_000 * 128
    assert m["ds_latent"].read(10_000) == 10_000 * 576


def test_frontier_configs_are_transformers_defaults_and_deepseek_s_the_published_table_s():
    ds_entry = published_entry("deepseek-ai/DeepSeek-V3.2-Exp")
    for name, value in w.FRONTIER_CONFIGS["DeepSeek-V3.2-Exp"].items():
        assert value == (ds_entry.source if name == "source" else ds_entry.fields[name]), name
    qwen_module = pytest.importorskip("transformers.models.qwen3_next.configuration_qwen3_next")
    ds_module = pytest.importorskip("transformers.models.deepseek_v32.configuration_deepseek_v32")
    qwen = qwen_module.Qwen3NextConfig()
    fields = w.FRONTIER_CONFIGS["Qwen3-Next-80B-A3B"]
    for name, value in fields.items():
        if name not in ("source", "full_attention_interval"):
            assert getattr(qwen, name) == value, name
    assert qwen.layer_types.count("full_attention") * fields["full_attention_interval"] == qwen.num_hidden_layers
    ds = ds_module.DeepseekV32Config()
    for name, value in w.FRONTIER_CONFIGS["DeepSeek-V3.2-Exp"].items():
        if name != "source":
            assert getattr(ds, name) == value, name


@pytest.mark.parametrize("name, module, cls", [
    ("Qwen/Qwen3-Next-80B-A3B-Instruct", "qwen3_next.configuration_qwen3_next", "Qwen3NextConfig"),
    ("moonshotai/Kimi-Linear-48B-A3B-Instruct", "kimi_linear.configuration_kimi_linear", "KimiLinearConfig"),
])
def test_the_hybrids_published_entries_are_the_defaults_of_the_transformers_class_their_source_names(name, module,
                                                                                                     cls):
    config_module = pytest.importorskip(f"transformers.models.{module}")
    defaults = getattr(config_module, cls)()
    entry = published_entry(name)
    assert cls in entry.source and name in entry.source
    for field, value in entry.fields.items():
        assert getattr(defaults, field) == value, field
    assert entry.config.delta.layer_types == tuple(defaults.layer_types)


def test_layer_kind_costs_sum_to_cache_bytes_for_every_configuration_of_the_table():
    from attention_course.decoder.cache import cache_bytes
    from attention_course.decoder.published import published_config

    for label, name in w.COST_MODELS.items():
        rows = w.layer_kind_costs(label)
        config = published_config(name)
        assert sum(r.layers for r in rows) == config.n_layers
        for n in (1, 7, 131_072):
            assert sum(r.layers * (r.per_token * n + r.state) for r in rows) == cache_bytes(config, n, "bfloat16")
        assert {r.source for r in rows} == {published_entry(name).source}
    qwen = {r.kind: r for r in w.layer_kind_costs("Qwen3-Next 80B-A3B", dtype="float32")}
    assert qwen["full attention"].per_token == 4 * 2 * 2 * 256  # 2 key/value heads, a key and a value of 256
    assert qwen["gated delta rule"].state == 4 * (32 * 128 * 128 + 3 * (2 * 16 * 128 + 32 * 128))
    scout = {r.kind: r for r in w.layer_kind_costs("Llama 4 Scout")}
    assert (scout["chunked attention"].layers, scout["chunked attention"].chunk) == (36, 8192)
    with pytest.raises(ValueError, match="label"):
        w.layer_kind_costs("MiniMax-M2")


def test_sparse_decode_step_equals_sparse_attention_for_the_last_query():
    rng = np.random.default_rng(7)
    h, n, d = 2, 30, 4
    q, k, v = rng.standard_normal((h, d)), rng.standard_normal((h, n, d)), rng.standard_normal((h, n, d))
    qi, ki, hw = rng.standard_normal((3, 5)), rng.standard_normal((n, 5)), rng.standard_normal(3)
    out = w.sparse_decode_step(q, k, v, qi, ki, hw, 7)
    scores = ac.core.sparse.indexer_scores(qi[:, None, :], ki, hw[None, :])  # (1, n)
    ref, _ = sparse_attention(q[:, None, :], k, v, scores, 7)
    np.testing.assert_allclose(out, ref[:, 0], rtol=1e-12)
    np.testing.assert_allclose(w.sparse_decode_step(q, k, v, qi, ki, hw, 100),
                               scaled_dot_product_attention(q[:, None, :], k, v)[:, 0], rtol=1e-12)


def test_crossovers():
    shape = w.DecodeShape(heads=2, head_dim=8, top_k=16, index_dim=4)
    assert w.predicted_crossover(shape, "delta") == 4  # h d^2 = 2 h d n
    n = w.predicted_crossover(shape, "sparse")
    read = shape.numbers_read
    below, above = read(math.floor(n)), read(math.ceil(n) + 1)
    assert below["sparse"] >= below["full"] and above["sparse"] < above["full"]
    expected = 10 ** (1 + math.log(1.5) / math.log(3))  # log(time ratio) falls from log 1.5 to log 0.5 over a decade
    assert w.measured_crossover([1, 10, 100], [1, 1, 1], [2, 1.5, 0.5]) == pytest.approx(expected)
    assert w.measured_crossover([1, 10], [1, 1], [2, 2]) is None
    assert w.measured_crossover([1, 10], [1, 1], [0.5, 2]) == 1


def test_time_decode_steps_times_every_kind():
    times = w.time_decode_steps([8, 40], w.DecodeShape(heads=2, head_dim=4, top_k=4, index_dim=2), rounds=1, repeat=1)
    assert set(times) == {"full", "sparse", "delta"}
    assert all(t.shape == (2,) and np.all(t > 0) for t in times.values())


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_frontier", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_prints_every_length_the_slopes_and_the_crossovers(bench, capsys):
    assert bench.main(["--contexts", "8", "32", "64", "--rounds", "1", "--repeat", "1", "--heads", "2",
                       "--head-dim", "4", "--top-k", "4", "--slope-from", "8"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.split() and line.split()[0] in ("8", "32", "64")]
    assert [r[0] for r in rows] == ["8", "32", "64"] and all(len(r) == 10 for r in rows)
    assert "slopes over n >= 8" in out and out.count("crossover") == 1
    assert "sparse  measured" in out and "delta   measured" in out


@pytest.mark.parametrize("argv", [["--contexts", "0"], ["--rounds", "0"], ["--top-k", "0"]])
def test_bench_refuses_bad_arguments(bench, argv):
    with pytest.raises(SystemExit):
        bench.main(argv)
