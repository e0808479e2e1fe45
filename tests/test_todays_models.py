"""Tests for attention_course/chapters/todays_models.py: the helpers of the chapter on today's models."""

import json
import math
import os
import platform
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from attention_course.chapters import training
from attention_course.chapters.todays_models import (
    QK_NORM_EPS, _qk_forward, model_changes, qk_loss_and_grads, rescaled_pairs, train_spread, write_checkpoint,
)
from attention_course.core.rope_scaling import RopeScaling
from attention_course.decoder import DecoderConfig, load_decoder
from attention_course.decoder.load import random_tensors
from attention_course.decoder.published import PUBLISHED_CONFIGS, published_config


# --- model_changes ---------------------------------------------------------------------

def test_model_changes_reads_each_change_from_the_config_fields():
    changes = {e.name: model_changes(e.config) for e in PUBLISHED_CONFIGS}
    assert changes["Qwen/Qwen3-8B"] == ("QK-norm",)
    assert changes["meta-llama/Llama-3.1-8B"] == ("RoPE llama3 x8",)
    assert changes["google/gemma-2-2b-it"] == ("soft-cap 50", "window 4,096 in 13 of 26 layers")
    assert changes["google/gemma-3-27b-it"] == ("QK-norm", "window 1,024 in 52 of 62 layers",
                                                 "RoPE bases 10,000 / 1,000,000", "RoPE linear x8")
    assert changes["openai/gpt-oss-120b"] == ("sinks", "window 128 in 18 of 36 layers", "RoPE yarn x32")
    assert changes["HuggingFaceTB/SmolLM3-3B"] == ("no RoPE in 9 of 36 layers",)
    assert changes["deepseek-ai/DeepSeek-V3"] == ("RoPE yarn x40", "latent 512 + 64")


def test_model_changes_of_a_plain_decoder_is_empty_and_it_refuses_a_dict():
    cfg = {"model_type": "llama", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
           "num_key_value_heads": 2, "intermediate_size": 16, "rms_norm_eps": 1e-5, "max_position_embeddings": 64}
    assert model_changes(DecoderConfig.from_dict(cfg)) == ()
    with pytest.raises(TypeError, match="DecoderConfig"):
        model_changes(cfg)


# --- rescaled_pairs -----------------------------------------------------------------------

def test_llama3_keeps_the_fast_pairs_and_slows_those_longer_than_the_trained_context():
    rope = published_config("meta-llama/Llama-3.1-8B").ropes[0]  # factor 8, low 1, high 4, 8,192 tokens
    pairs = rescaled_pairs(rope, 128)
    wavelength = 2 * math.pi * 500000.0 ** (np.arange(0, 128, 2) / 128)  # computed here, not by the package
    np.testing.assert_allclose(pairs.wavelength, wavelength, rtol=1e-12)
    assert pairs.kept == int((wavelength < 8192 / 4).sum()) and pairs.slowed == int((wavelength > 8192).sum())
    assert pairs.kept + pairs.between + pairs.slowed == 64 and pairs.between > 0
    assert np.all(np.diff(pairs.ratio) <= 0) and pairs.ratio[0] == 1.0 and pairs.ratio[-1] == pytest.approx(1 / 8)
    assert pairs.attention_factor == 1.0


def test_yarn_ramps_between_its_two_turn_counts_and_scales_the_queries_and_keys():
    rope = published_config("openai/gpt-oss-120b").ropes[0]  # factor 32, beta 32 and 1, 4,096 tokens, no truncation
    pairs = rescaled_pairs(rope, 64)
    turns = 4096 / pairs.wavelength  # turns of each pair over the trained context
    assert pairs.kept == int((turns >= 32).sum()) and pairs.slowed == int((turns <= 1).sum())
    assert pairs.attention_factor == pytest.approx(0.1 * math.log(32) + 1)
    assert pairs.ratio.min() == pytest.approx(1 / 32)


@pytest.mark.parametrize(("rule", "kept", "slowed"), [("default", 8, 0), ("linear", 0, 8)])
def test_the_plain_and_the_linear_rules_keep_or_slow_every_pair(rule, kept, slowed):
    pairs = rescaled_pairs(RopeScaling(rule, 10000.0, factor=4.0), 16)
    assert (pairs.kept, pairs.slowed, pairs.between) == (kept, slowed, 0)


def test_dynamic_ntk_changes_nothing_within_the_trained_context_and_slows_every_pair_but_the_first_beyond():
    rope = RopeScaling("dynamic", 10000.0, factor=2.0, max_positions=64)
    assert rescaled_pairs(rope, 16, seq_len=64).kept == 8
    beyond = rescaled_pairs(rope, 16, seq_len=1000)
    assert beyond.kept == 1 and beyond.between == 7
    with pytest.raises(TypeError, match="RopeScaling"):
        rescaled_pairs("llama3", 16)


# --- QK-norm: the gradients by hand, and the run --------------------------------------------

def _problem(seed=0, d_k=4):
    task = training.ToyTask(n_symbols=5, n_context=4, d_value=3)
    rng = np.random.default_rng(seed)
    batch = task.sample(6, rng)
    params = training.init_params(task, d_k, rng, std=0.8)
    params["g_q"], params["g_k"] = 1 + 0.3 * rng.standard_normal(d_k), 1 + 0.3 * rng.standard_normal(d_k)
    return batch, params


def test_without_qk_norm_the_loss_and_gradients_are_the_training_chapters():
    batch, params = _problem()
    plain = {k: params[k] for k in training.PARAM_NAMES}
    loss, grads = qk_loss_and_grads(plain, batch.x, batch.y, qk_norm=False)
    ref_loss, ref_grads, _ = training.loss_and_grads(plain, batch)
    assert loss == pytest.approx(ref_loss, rel=1e-14)
    for name in training.PARAM_NAMES:
        np.testing.assert_allclose(grads[name], ref_grads[name], rtol=1e-12, atol=1e-15)


def test_qk_norm_gradients_equal_finite_differences():
    batch, params = _problem(seed=3)

    def loss(p):
        return qk_loss_and_grads(p, batch.x, batch.y, qk_norm=True)[0]

    _, grads = qk_loss_and_grads(params, batch.x, batch.y, qk_norm=True)
    numeric = training.numerical_gradient(loss, params)
    for name in params:
        assert training.relative_difference(grads[name], numeric[name]) < 1e-7, name


def test_qk_norm_gradients_equal_torch_autograd():
    torch = pytest.importorskip("torch")
    batch, params = _problem(seed=5, d_k=6)
    _, grads = qk_loss_and_grads(params, batch.x, batch.y, qk_norm=True)
    t = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    x, y = torch.tensor(batch.x), torch.tensor(batch.y)
    norm = torch.nn.functional.rms_norm
    q = norm(x[:, -1] @ t["w_q"], (6,), t["g_q"], QK_NORM_EPS)
    k = norm(x @ t["w_k"], (6,), t["g_k"], QK_NORM_EPS)
    weights = torch.softmax(torch.einsum("bd,bnd->bn", q, k) / math.sqrt(6), dim=-1)
    out = torch.einsum("bn,bnd->bd", weights, x @ t["w_v"])
    ((out - y) ** 2).sum(-1).mean().backward()
    for name in params:
        np.testing.assert_allclose(grads[name], t[name].grad.numpy(), rtol=1e-10, atol=1e-13)


def test_qk_norm_scores_ignore_the_size_of_the_projections_and_stay_within_the_gains_bound():
    batch, params = _problem(seed=1)
    bigger = {**params, "w_q": 10 * params["w_q"], "w_k": 3 * params["w_k"]}

    normed = _qk_forward(params, batch.x, qk_norm=True)["scores"]
    bigger_normed = _qk_forward(bigger, batch.x, qk_norm=True)["scores"]
    np.testing.assert_allclose(bigger_normed, normed, rtol=1e-4)  # equal but for the epsilon in each norm
    plain = _qk_forward(params, batch.x, qk_norm=False)["scores"]
    np.testing.assert_allclose(_qk_forward(bigger, batch.x, qk_norm=False)["scores"], 30 * plain, rtol=1e-12)
    d_k = params["w_q"].shape[1]  # |q . k| / sqrt(d) <= sqrt(d) max|g_q| max|g_k|: each normed vector has length sqrt(d)
    assert np.abs(normed).max() <= math.sqrt(d_k) * np.abs(params["g_q"]).max() * np.abs(params["g_k"]).max()


def test_train_spread_shows_the_plain_scores_growing_with_the_weights_and_the_normed_ones_settling():
    plain, normed = train_spread(qk_norm=False, steps=300), train_spread(qk_norm=True, steps=300)
    assert plain.spread.shape == normed.spread.shape == (301,)
    assert plain.projection_size[0] == normed.projection_size[0]  # the same starting W_q and W_k
    assert plain.projection_size[-1] > 100 * plain.projection_size[0] and normed.projection_size[-1] > 100 * normed.projection_size[0]
    assert plain.spread[-1] > 2 * plain.spread[100]  # still growing
    assert abs(normed.spread[-1] / normed.spread[100] - 1) < 0.1  # flat
    assert normed.accuracy[-1] == 1.0 and set(normed.params) == {"w_q", "w_k", "w_v", "g_q", "g_k"}
    # with QK-norm the loss does not depend on the size of W_q: its gradient is orthogonal to W_q ...
    assert normed.gradient_cosine.shape == normed.step_cosine.shape == normed.step_size.shape == (300,)
    assert np.abs(normed.gradient_cosine).max() < 1e-5 < np.abs(plain.gradient_cosine).max()
    # ... but Adam's step, scaled entry by entry, is not: the projections grow until the steps shrink
    assert normed.step_cosine[:50].max() > 0.5
    step = normed.params["w_q"] - train_spread(qk_norm=True, steps=299).params["w_q"]
    np.testing.assert_allclose(normed.step_size[-1], np.linalg.norm(step), rtol=1e-10)
    assert normed.step_size[100:].max() < normed.step_size[0] / 100 and normed.loss[100] < 0.05
    assert plain.step_size[100:].max() > 10 * normed.step_size[100:].max()
    again = train_spread(qk_norm=True, steps=300)
    np.testing.assert_array_equal(again.spread, normed.spread)
    with pytest.raises(ValueError, match="lr"):
        train_spread(qk_norm=True, lr=0)


_SPREAD_NUMBERS = """
import json, numpy as np
from attention_course.chapters.todays_models import train_spread
plain, normed = train_spread(qk_norm=False), train_spread(qk_norm=True)
print(json.dumps({
    "quoted": [f"{normed.step_cosine[:50].max():.2f}", f"{normed.projection_size[0]:.1f}",
               f"{normed.projection_size[300]:,.0f}", f"{normed.step_size[0]:.1f}", f"{normed.loss[100]:.3f}",
               f"{normed.spread[100]:.1f}", f"{normed.spread[300]:.1f}"],
    "normed_late_step": normed.step_size[100:].max(),
    "plain_late_step": plain.step_size[100:].max(),
    "plain_growth": [plain.spread[300] / plain.spread[100], plain.projection_size[300] / plain.projection_size[100]],
}))
"""


def _openblas_for_several_x86_processors() -> bool:
    """Whether NumPy's BLAS is an OpenBLAS that picks its kernel by processor (DYNAMIC_ARCH), on x86-64, where
    OPENBLAS_CORETYPE=Prescott names a kernel every such processor runs."""
    try:
        config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except (KeyError, TypeError):  # a NumPy that does not describe its build
        return False
    return (platform.machine().lower() in ("x86_64", "amd64") and config.get("name", "").endswith("openblas")
            and "DYNAMIC_ARCH" in config.get("openblas configuration", ""))


@pytest.mark.sandbox
@pytest.mark.skipif(not _openblas_for_several_x86_processors(),
                    reason="needs NumPy's OpenBLAS built for several x86-64 processors")
def test_the_numbers_the_chapter_quotes_of_train_spread_hold_on_another_processors_blas_kernel():
    # OPENBLAS_CORETYPE picks the kernel another processor would get (Prescott: SSE3, no AVX), in a fresh process.
    runs = {}
    for coretype in ("", "Prescott"):
        env = {**os.environ, "OPENBLAS_CORETYPE": coretype} if coretype else os.environ
        done = subprocess.run([sys.executable, "-c", _SPREAD_NUMBERS], capture_output=True, text=True, env=env,
                              timeout=120, check=True)
        runs[coretype or "this machine"] = json.loads(done.stdout)
    here, other = runs["this machine"], runs["Prescott"]
    assert here["quoted"] == other["quoted"]  # the QK-norm layer's numbers, as the chapter prints them
    for run in (here, other):  # the plain layer's, only as the chapter states them: they differ in the last digits
        assert run["normed_late_step"] < 0.04 and run["plain_late_step"] > 1
        assert min(run["plain_growth"]) > 2


# --- write_checkpoint -----------------------------------------------------------------------

def test_a_written_checkpoint_loads_back_as_the_same_model(tmp_path):
    fields = {**dict(next(e for e in PUBLISHED_CONFIGS if e.name == "openai/gpt-oss-120b").fields),
              "vocab_size": 50, "hidden_size": 16, "intermediate_size": 8, "head_dim": 4, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "num_local_experts": 4, "num_experts_per_tok": 2,
              "sliding_window": 3, "layer_types": ["sliding_attention", "full_attention"]}
    config = DecoderConfig.from_dict(fields)
    tensors = random_tensors(np.random.default_rng(0), config, np.float32)
    tensors["model.layers.0.self_attn.sinks"] = np.array([2.0, -1.0, 0.5, 0.0], np.float32)
    folder = write_checkpoint(tmp_path / "oss", fields, tensors)
    assert json.loads((folder / "config.json").read_text())["torch_dtype"] == "float32"
    model = load_decoder(folder)
    assert model.config == replace(config, dtype="float32")
    np.testing.assert_array_equal(model.weights.layers[0].sinks, tensors["model.layers.0.self_attn.sinks"])
    out = model.forward([1, 2, 3, 4])
    rows = out.attentions.sum(axis=-1)  # (L, h, n): a sink takes a share of every row
    assert np.all(rows < 1) and np.all(rows > 0)
    with pytest.raises(FileExistsError):
        write_checkpoint(folder, fields, tensors)


def test_a_written_checkpoint_is_a_safetensors_file(tmp_path):
    safetensors = pytest.importorskip("safetensors.numpy")
    tensors = {"a": np.arange(6, dtype=np.float64).reshape(2, 3), "b": np.ones(5, np.float32)}
    folder = write_checkpoint(tmp_path, {"model_type": "llama"}, tensors)
    back = safetensors.load_file(str(folder / "model.safetensors"))
    assert back["a"].dtype == np.float32 and back["a"].tolist() == tensors["a"].tolist()
    np.testing.assert_array_equal(back["b"], tensors["b"])
    with pytest.raises(ValueError, match="model_type"):
        write_checkpoint(tmp_path / "other", {}, tensors)


def test_llama4_and_minimax_changes_are_named():
    from attention_course.decoder.published import published_config as default_config

    scout = model_changes(default_config("meta-llama/Llama-4-Scout-17B-16E"))
    assert scout == ("QK-norm without gain in 36 of 48 layers", "no RoPE in 12 of 48 layers",
                     "chunk 8,192 in 36 of 48 layers", "NoPE temperature")
    minimax = DecoderConfig.from_dict({"model_type": "minimax_m2", "vocab_size": 64, "hidden_size": 32,
                                       "num_hidden_layers": 2, "num_attention_heads": 4, "head_dim": 8,
                                       "intermediate_size": 16, "num_local_experts": 4, "num_experts_per_tok": 2,
                                       "rotary_dim": 4})
    assert model_changes(minimax) == ("QK-norm", "RoPE on 4 of 8")
