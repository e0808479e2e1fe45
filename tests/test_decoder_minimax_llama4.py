"""load_decoder against transformers for MiniMax-M2 and Llama 4 (text): tiny random checkpoints built and saved here.

For each configuration below transformers builds a model from a config (no
download), saves it with save_pretrained and computes the reference with
eager attention in float32. MiniMax-M2: partial RoPE (the legacy rotary_dim,
or partial_rotary_factor in rope_parameters), QK-norm over the whole
projection, sigmoid routing with a correction bias. Llama 4: chunked layers
with attention_chunk_size below the prompt's length beside NoPE layers
attending to everything, the weightless QK-norm, the NoPE temperature with a
floor_scale small enough to change it inside the prompt, experts interleaved
with dense layers, a shared expert. Checked: logits to 1e-4, every layer's
attention weights to 1e-5, every layer's hidden state to 1e-4, cached
decoding equal to the whole prompt, greedy tokens with and without the cache
equal to transformers' own. Skipped without torch.
"""

import copy
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]' to cross-check against it")
transformers = pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[torch]'")

from attention_course.core.masks import chunked_causal_mask  # noqa: E402
from attention_course.core.norms import rms_norm  # noqa: E402
from attention_course.core.temperature import nope_temperature  # noqa: E402
from attention_course.decoder import DecoderConfig, UnsupportedConfigError, cache_bytes, load_decoder  # noqa: E402
from decoder_models import MINIMAX_LLAMA4, config_json, reference_run, save, tiny_model  # noqa: E402

N_TOKENS, PREFILL, MAX_NEW_TOKENS = 13, 4, 6

@pytest.fixture(scope="module", params=sorted(MINIMAX_LLAMA4))
def checkpoint(request, tmp_path_factory):
    """(name, transformers model never run, its folder, our model, prompt ids, transformers' reference)."""
    name = request.param
    hf = tiny_model(name, seed=len(name))
    folder = save(hf, tmp_path_factory.mktemp(name))
    ids = np.random.default_rng(len(name)).integers(1, hf.config.vocab_size, size=N_TOKENS)  # eos (0) left out
    ref = reference_run(hf, ids, MAX_NEW_TOKENS)
    with torch.no_grad():
        out = copy.deepcopy(hf)(torch.tensor(ids)[None], output_hidden_states=True)
    ref["hidden_states"] = torch.stack(out.hidden_states)[:, 0].numpy()  # (L + 1, n, d_model), the last one normed
    return name, hf, folder, load_decoder(folder), ids, ref


def test_each_layer_reads_as_transformers_builds_it(checkpoint):
    """RoPE or NoPE, chunk, QK-norm, temperature and experts per layer, as transformers' modules hold them."""
    name, hf, _, ours, _, _ = checkpoint
    c, h = ours.config, hf.config
    assert c.model_type == h.model_type and c.n_layers == h.num_hidden_layers
    theta, _ = c.ropes[0 if c.ropes[0] is not None else 1].frequencies(c.rope_dim, seq_len=c.max_positions)
    np.testing.assert_allclose(theta, hf.model.rotary_emb.inv_freq.numpy(), rtol=2e-6)  # partial RoPE: rope_dim / 2
    for i, layer in enumerate(hf.model.layers):
        attn = layer.self_attn
        if c.model_type == "minimax_m2":
            assert c.qk_norm and c.qk_norm_scope == "projection" and c.chunks[i] is None
            assert tuple(attn.q_norm.weight.shape) == (c.n_heads * c.head_dim,)
            assert c.is_moe_layer(i)
            continue
        assert (c.ropes[i] is not None) == bool(attn.use_rope), f"layer {i}"
        assert (c.l2_qk_norm and c.ropes[i] is not None) == hasattr(attn, "qk_norm"), f"layer {i}"
        assert c.chunks[i] == (h.attention_chunk_size if h.layer_types[i] == "chunked_attention" else None)
        assert c.is_moe_layer(i) == layer.is_moe_layer, f"layer {i}"
        assert c.nope_temperature == (float(h.floor_scale), float(h.attn_scale))
    if c.model_type == "llama4_text":
        assert set(c.chunks) >= {None, h.attention_chunk_size}, "both kinds of layer are present"
        assert h.attention_chunk_size < N_TOKENS


def test_logits_attention_weights_and_hidden_states_equal_transformers(checkpoint):
    *_, ours, ids, ref = checkpoint
    out = ours.forward(ids)
    np.testing.assert_allclose(out.logits, ref["logits"], rtol=0, atol=1e-4)
    assert out.attentions.shape == ref["attentions"].shape
    np.testing.assert_allclose(out.attentions, ref["attentions"], rtol=0, atol=1e-5)
    # transformers' last hidden state is the one after the final norm
    c = ours.config
    hidden = np.concatenate([out.hidden_states[:-1], rms_norm(out.hidden_states[-1:], ours.weights.final_norm,
                                                               c.rms_norm_eps)])
    np.testing.assert_allclose(hidden, ref["hidden_states"], rtol=0, atol=1e-4)


def test_chunked_layers_attend_only_inside_their_chunk(checkpoint):
    *_, ours, ids, ref = checkpoint
    for layer, chunk in enumerate(ours.config.chunks):
        want = chunked_causal_mask(N_TOKENS, N_TOKENS, chunk) if chunk else np.tri(N_TOKENS, dtype=bool)
        assert np.array_equal(ref["attentions"][layer] > 0, np.broadcast_to(want, ref["attentions"][layer].shape))


def test_cached_steps_equal_the_whole_prompt_and_keep_only_the_current_chunk(checkpoint):
    *_, ours, ids, ref = checkpoint
    cache = ours.new_cache(keep_window=True)
    steps = [ours.forward(ids[:PREFILL], cache)] + [ours.forward(ids[t:t + 1], cache) for t in range(PREFILL, N_TOKENS)]
    np.testing.assert_allclose(np.concatenate([s.logits for s in steps]), ref["logits"], rtol=0, atol=1e-4)
    np.testing.assert_allclose(steps[-1].attentions[:, :, 0], ref["attentions"][:, :, -1], rtol=0, atol=1e-5)
    c = ours.config
    assert [cache.kept(i) for i in range(c.n_layers)] == [N_TOKENS % k if k else N_TOKENS for k in c.chunks]
    assert cache.nbytes == cache_bytes(c, N_TOKENS, dtype="float32", keep_window=True)


def test_greedy_generation_equals_transformers_with_and_without_the_cache(checkpoint):
    *_, ours, ids, ref = checkpoint
    assert np.array_equal(ours.generate(ids, MAX_NEW_TOKENS), ref["generated_with_cache"])
    assert np.array_equal(ours.generate(ids, MAX_NEW_TOKENS, use_cache=False),
                          ref["generated_without_cache"])
    assert np.array_equal(ref["generated_with_cache"], ref["generated_without_cache"])


@pytest.mark.parametrize("n_q, n_k, chunk", [(1, 1, 1), (7, 7, 3), (13, 13, 5), (1, 9, 4), (3, 11, 4), (6, 6, 8),
                                             (5, 9, 2)])
def test_chunked_mask_equals_transformers(n_q, n_k, chunk):
    from transformers.masking_utils import chunked_causal_mask_function

    fn = chunked_causal_mask_function(chunk, torch.zeros(1, dtype=torch.long))
    zero = torch.tensor(0)
    for first in (0, 3):  # 3: a cache that dropped its first 3 keys, positions 3.. of the same sequence
        q_pos = first + n_k - n_q + torch.arange(n_q)[:, None]  # (n_q, 1): the queries are the last n_q positions
        want = fn(zero, zero, q_pos, first + torch.arange(n_k)[None, :]).numpy()  # (n_q, n_k)
        assert np.array_equal(chunked_causal_mask(n_q, n_k, chunk, first_position=first), want)


def test_nope_temperature_equals_transformers_formula():
    positions = np.arange(40)
    want = (torch.log1p(torch.floor((torch.arange(40).float() + 1.0) / 7)) * 0.3 + 1.0).numpy()
    got = nope_temperature(positions, 7, 0.3)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("change, match", [
    ({"model_type": "llama4"}, "text_config"),
    ({"layer_types": ["chunked_attention", "sliding_attention", "chunked_attention", "full_attention"]}, "layer_types"),
    ({"attention_chunk_size": None, "layer_types": ["chunked_attention"] * 4}, "attention_chunk_size"),
    ({"no_rope_layers": [1, 0]}, "no_rope_layers"),
    ({"num_experts_per_tok": 5}, "num_experts_per_tok"),
])
def test_llama4_config_refuses_what_is_not_implemented(change, match):
    with pytest.raises(UnsupportedConfigError, match=match):
        DecoderConfig.from_dict({**config_json("llama4_text"), **change})


@pytest.mark.parametrize("change, match", [({"rotary_dim": 5}, "rotary_dim"), ({"rotary_dim": 14}, "rotary_dim")])
def test_minimax_config_refuses_a_rotary_dim_it_cannot_rotate(change, match):
    with pytest.raises(UnsupportedConfigError, match=match):
        DecoderConfig.from_dict({**config_json("minimax_m2"), **change})


def test_released_minimax_config_form_reads_half_rope():
    """The released config.json writes rotary_dim and no partial_rotary_factor: half of each head rotates."""
    c = DecoderConfig.from_dict({**config_json("minimax_m2"), "rotary_dim": 6})
    assert c.rotary_dim == 6 and c.rope_dim == 6 and c.head_dim == 12
    assert DecoderConfig.from_dict({**config_json("minimax_m2"), "rotary_dim": 12}).rotary_dim is None


def test_the_config_json_transformers_writes_reads_the_same_without_its_derived_keys(checkpoint, tmp_path):
    """Llama 4's layer_types and moe_layers, MiniMax-M2's partial_rotary_factor, left for the defaults to derive."""
    name, _, folder, ours, _, _ = checkpoint
    cfg = json.loads((folder / "config.json").read_text())
    if name == "llama4_text":
        cfg.pop("layer_types"), cfg.pop("moe_layers"), cfg.pop("no_rope_layers")
    elif name == "minimax_m2":
        cfg["rope_parameters"].pop("partial_rotary_factor")  # rotary_dim alone, as the released file
    else:
        pytest.skip("written with explicit keys")
    assert DecoderConfig.from_dict(cfg) == ours.config


def test_llama4_scout_entry_is_transformers_defaults():
    """DEFAULT_CONFIGS' Llama 4 Scout: every field it gives is Llama4TextConfig's default, and reads as the defaults do."""
    from attention_course.decoder.published import DEFAULT_CONFIGS, published_config

    entry = next(e for e in DEFAULT_CONFIGS if e.name == "meta-llama/Llama-4-Scout-17B-16E")
    defaults = transformers.Llama4TextConfig().to_dict()
    theta = defaults["rope_parameters"]["rope_theta"]
    assert {k: v for k, v in entry.fields.items()} == {k: theta if k == "rope_theta" else defaults[k] for k in entry.fields}
    c = published_config(entry.name)
    assert (c.n_layers, sum(c.is_moe_layer(i) for i in range(c.n_layers)), c.chunks.count(8192)) == (48, 48, 36)
