"""load_decoder against transformers for Gemma 3n's text model: tiny random checkpoints built and saved here.

For each configuration of tests/decoder_models.py's GEMMA3N transformers
builds a Gemma3nForCausalLM from a config (no download), saves it with
save_pretrained and computes the reference with eager attention in float32:
KV sharing (layers with no keys and values of their own), the value norm and
a score scale of 1, AltUp's copies, LAuReL, per-layer inputs, sparse gates,
a sliding window shorter than the prompt. Checked: logits to 1e-4, every
layer's attention weights to 1e-5, every AltUp copy entering and leaving
each layer to 1e-4, cached decoding equal to the whole prompt, greedy tokens
with and without the cache equal to transformers' own. Skipped without torch.
"""

import copy
from statistics import NormalDist

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]' to cross-check against it")
transformers = pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[torch]'")

from attention_course.decoder import DecoderConfig, UnsupportedConfigError, cache_bytes, load_decoder  # noqa: E402
from attention_course.decoder.gemma3n import gaussian_top_k  # noqa: E402
from decoder_models import GEMMA3N, config_json, reference_run, save, tiny_model  # noqa: E402

N_TOKENS, PREFILL, MAX_NEW_TOKENS = 13, 4, 6


@pytest.fixture(scope="module", params=sorted(GEMMA3N))
def checkpoint(request, tmp_path_factory):
    """(name, transformers model never run, its folder, our model, prompt ids, transformers' reference)."""
    name = request.param
    hf = tiny_model(name, seed=len(name))
    with torch.no_grad():
        for param_name, p in hf.named_parameters():
            if param_name.endswith("correct_output_scale"):
                p.copy_(1 + 0.3 * torch.randn_like(p))  # near 1, as a trained scale: the per-layer input shows
    folder = save(hf, tmp_path_factory.mktemp(name))
    ids = np.random.default_rng(len(name)).integers(1, hf.config.vocab_size, size=N_TOKENS)  # eos (0) left out
    ref = reference_run(hf, ids, MAX_NEW_TOKENS)
    with torch.no_grad():
        out = copy.deepcopy(hf)(torch.tensor(ids)[None], output_hidden_states=True)
    ref["hidden_states"] = torch.stack(out.hidden_states)[:, :, 0].numpy()  # (L + 1, A, n, d_model)
    return name, hf, folder, load_decoder(folder), ids, ref


def test_each_layer_reads_as_transformers_builds_it(checkpoint):
    """Window, KV source, MLP width and sparsity per layer, as transformers' modules hold them."""
    _, hf, _, ours, _, _ = checkpoint
    c, g, h = ours.config, ours.config.gemma3n, hf.config
    assert c.scale == 1.0 and g.altup_num_inputs == h.altup_num_inputs
    for i, layer in enumerate(hf.model.layers):
        attn = layer.self_attn
        assert c.windows[i] == attn.sliding_window, f"layer {i}"
        assert (g.kv_sources[i] != i) == attn.is_kv_shared_layer, f"layer {i}"
        assert g.d_ffs[i] == layer.mlp.intermediate_size and g.sparsity[i] == layer.mlp.activation_sparsity
    assert any(w is not None and w < N_TOKENS for w in c.windows)


def test_logits_attention_weights_and_hidden_states_equal_transformers(checkpoint):
    *_, ours, ids, ref = checkpoint
    out = ours.forward(ids)
    np.testing.assert_allclose(out.logits, ref["logits"], rtol=0, atol=1e-4)
    assert out.attentions.shape == ref["attentions"].shape
    np.testing.assert_allclose(out.attentions, ref["attentions"], rtol=0, atol=1e-5)
    assert out.hidden_states.shape == ref["hidden_states"].shape
    np.testing.assert_allclose(out.hidden_states, ref["hidden_states"], rtol=0, atol=1e-4)


def test_cached_steps_equal_the_whole_prompt_and_shared_layers_cache_nothing(checkpoint):
    *_, ours, ids, ref = checkpoint
    cache = ours.new_cache(keep_window=True)
    steps = [ours.forward(ids[:PREFILL], cache)] + [ours.forward(ids[t:t + 1], cache) for t in range(PREFILL, N_TOKENS)]
    np.testing.assert_allclose(np.concatenate([s.logits for s in steps]), ref["logits"], rtol=0, atol=1e-4)
    c = ours.config
    want = [0 if c.gemma3n.kv_sources[i] != i else N_TOKENS if w is None else w - 1 for i, w in enumerate(c.windows)]
    assert [cache.kept(i) for i in range(c.n_layers)] == want
    assert cache.nbytes == cache_bytes(c, N_TOKENS, dtype="float32", keep_window=True)


def test_greedy_generation_equals_transformers_with_and_without_the_cache(checkpoint):
    *_, ours, ids, ref = checkpoint
    assert np.array_equal(ref["generated_with_cache"], ref["generated_without_cache"])
    assert np.array_equal(ours.generate(ids, MAX_NEW_TOKENS), ref["generated_with_cache"])
    assert np.array_equal(ours.generate(ids, MAX_NEW_TOKENS, use_cache=False), ref["generated_without_cache"])


@pytest.mark.parametrize("sparsity", [0.5, 0.8, 0.95])
def test_gaussian_top_k_equals_transformers(sparsity):
    from transformers.models.gemma3n.modeling_gemma3n import Gemma3nTextMLP

    rng = np.random.default_rng(0)
    gate = rng.standard_normal((5, 64)).astype(np.float32) * 2 + 0.3
    mlp = Gemma3nTextMLP.__new__(Gemma3nTextMLP)
    mlp.activation_sparsity = sparsity
    want = mlp._gaussian_topk(torch.from_numpy(gate)).numpy()
    got = gaussian_top_k(gate, sparsity)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    kept = (got > 0).mean()
    assert abs(kept - (1 - NormalDist().cdf(NormalDist().inv_cdf(sparsity)))) < 0.1  # about 1 - sparsity kept


@pytest.mark.parametrize("change, match", [
    ({"num_kv_shared_layers": 6}, "num_kv_shared_layers"),
    ({"num_kv_shared_layers": 5}, "no earlier layer"),
    ({"activation_sparsity_pattern": [0.5, 0.5]}, "activation_sparsity_pattern"),
    ({"intermediate_size": [40, 40]}, "intermediate_size"),
    ({"hidden_activation": "silu"}, "hidden_activation"),
    ({"altup_active_idx": 3}, "altup_active_idx"),
])
def test_config_refuses_what_is_not_implemented(change, match):
    with pytest.raises(UnsupportedConfigError, match=match):
        DecoderConfig.from_dict({**config_json("gemma3n"), **change})


def test_qkv_of_one_layer_is_refused_with_the_reason(checkpoint):
    *_, ours, ids, _ = checkpoint
    with pytest.raises(NotImplementedError, match="kv_sources"):
        ours.qkv(0, np.zeros((len(ids), ours.config.d_model), np.float32), np.arange(len(ids)))
