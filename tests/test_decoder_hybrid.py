"""load_decoder against transformers on the hybrid decoders: Gated DeltaNet layers beside softmax attention.

For each configuration of tests/decoder_models.py's HYBRIDS (Qwen3-Next with its experts, Qwen3.5, OLMo
hybrid, Kimi Linear with its per-channel decay and latent attention, each with its options), transformers builds a tiny model from a config (no download), saves it with
save_pretrained and runs it in float32 with eager attention, its delta rule through its pure-torch fallbacks.
A prompt of 70 tokens (longer than the rule's chunks of 64, so a prefill takes a full chunk and a part) gives:
logits to 1e-4, every softmax layer's attention weights to 1e-5, every layer's hidden state to 1e-4; the
cache (a prefill, then one token at a time) equal to one pass over everything, and to transformers' cached
steps; greedy tokens with and without the cache equal to transformers' `generate` (greedy, with its cache).
Skipped without torch.
"""

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]' to cross-check against it")
pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[torch]'")

from attention_course.core.norms import rms_norm  # noqa: E402
from attention_course.decoder import DecoderConfig, cache_bytes, load_decoder  # noqa: E402
from attention_course.decoder.hybrid_cache import HybridCache  # noqa: E402
from attention_course.decoder.size import parameter_count  # noqa: E402
from attention_course.decoder.weights import read_checkpoint  # noqa: E402
from decoder_models import COMMON, HYBRIDS, config_json, save, tiny_model  # noqa: E402

N_PROMPT = 70
"""Prompt tokens: more than the delta rule's chunk of 64."""
PREFILL = 66
"""The cached run's first call (a full chunk and a part); the other tokens follow one at a time."""
MAX_NEW_TOKENS = 4


@pytest.fixture(scope="module", params=sorted(HYBRIDS))
def checkpoint(request, tmp_path_factory):
    """(name, transformers model never run, its folder, our model, prompt ids, transformers' reference)."""
    name = request.param
    hf = tiny_model(name, seed=len(name))
    folder = save(hf, tmp_path_factory.mktemp(name))
    ids = np.random.default_rng(len(name)).integers(1, COMMON["vocab_size"], N_PROMPT)  # no 0: the end token
    t = torch.tensor(ids)[None]
    with torch.no_grad():
        out = copy.deepcopy(hf)(t, output_attentions=True, output_hidden_states=True)
        generated = copy.deepcopy(hf).generate(t, max_new_tokens=MAX_NEW_TOKENS, do_sample=False, use_cache=True,
                                               attention_mask=torch.ones_like(t))[0]
    ref = {"logits": out.logits[0].numpy(), "attentions": [a[0].numpy() for a in out.attentions],
           "hidden_states": [h[0].numpy() for h in out.hidden_states], "generated": generated.numpy()}
    return name, hf, folder, load_decoder(folder), ids, ref


def _softmax_layers(config: DecoderConfig) -> list[int]:
    return [i for i in range(config.n_layers) if not config.delta.is_delta_layer(i)]


def test_the_configuration_is_read_as_transformers_reads_it(checkpoint):
    name, hf, _, ours, _, _ = checkpoint
    c, h = ours.config, hf.config
    assert c.delta.layer_types == tuple(h.layer_types)
    assert "linear_attention" in c.delta.layer_types and "full_attention" in c.delta.layer_types
    assert (c.n_layers, c.n_heads, c.n_kv_heads) == (h.num_hidden_layers, h.num_attention_heads, h.num_key_value_heads)
    if c.latent is not None:  # Kimi Linear: one number of heads and one size for keys and values
        assert (c.delta.n_k_heads, c.delta.n_v_heads, c.delta.d_k, c.delta.d_v) == (
            h.linear_num_heads, h.linear_num_heads, h.linear_head_dim, h.linear_head_dim)
        assert c.delta.per_channel_decay and c.head_dim == h.qk_head_dim
        assert tuple(h.mlp_layer_types) == tuple("sparse" if c.is_moe_layer(i) else "dense" for i in range(c.n_layers))
    else:
        assert (c.delta.n_k_heads, c.delta.n_v_heads, c.delta.d_k, c.delta.d_v) == (
            h.linear_num_key_heads, h.linear_num_value_heads, h.linear_key_head_dim, h.linear_value_head_dim)
        attn = next(layer.self_attn for layer in hf.model.layers if hasattr(layer, "self_attn"))
        assert c.head_dim == attn.head_dim
    assert c.delta.conv_width == h.linear_conv_kernel_dim
    rotary = getattr(hf.model, "rotary_emb", None)
    if rotary is None:  # OLMo hybrid with a null rope_theta, Kimi Linear: no positions in the softmax layers
        assert all(r is None for r in c.ropes)
    else:
        assert c.rope_dim == 2 * rotary.inv_freq.shape[0]
        layer = _softmax_layers(c)[0]
        theta, _ = c.ropes[layer].frequencies(c.rope_dim, seq_len=c.max_positions)
        np.testing.assert_allclose(theta, rotary.inv_freq.numpy(), rtol=2e-6)
    assert DecoderConfig.from_dict(config_json(name)) == c  # as written, with our defaults: the saved file's config


def test_logits_equal_transformers(checkpoint):
    *_, ours, ids, ref = checkpoint
    out = ours.forward(ids)
    assert out.logits.dtype == np.float32 and out.hidden_states.dtype == np.float32
    np.testing.assert_allclose(out.logits, ref["logits"], rtol=0, atol=1e-4)


def test_attention_weights_of_the_softmax_layers_equal_transformers(checkpoint):
    *_, ours, ids, ref = checkpoint
    got = ours.forward(ids).attentions
    c = ours.config
    assert got.shape == (c.n_layers, c.n_heads, len(ids), len(ids))
    softmax_layers = _softmax_layers(c)
    assert len(ref["attentions"]) == len(softmax_layers)  # transformers returns the softmax layers' alone
    for layer, want in zip(softmax_layers, ref["attentions"]):
        np.testing.assert_allclose(got[layer], want, rtol=0, atol=1e-5, err_msg=f"layer {layer}")
        np.testing.assert_allclose(got[layer].sum(axis=-1), 1, atol=1e-5)
    delta_layers = [i for i in range(c.n_layers) if i not in softmax_layers]
    assert not np.any(got[delta_layers])  # a delta-rule layer weighs no keys


def test_every_hidden_state_equals_transformers(checkpoint):
    *_, ours, ids, ref = checkpoint
    got = ours.forward(ids).hidden_states  # (L + 1, n, d_model): the embeddings, then each layer's output
    want = ref["hidden_states"]  # transformers' last one is after the final norm
    assert got.shape[0] == len(want)
    for layer in range(len(want) - 1):
        np.testing.assert_allclose(got[layer], want[layer], rtol=0, atol=1e-4, err_msg=f"layer {layer}")
    final = rms_norm(got[-1], ours.weights.final_norm, ours.config.rms_norm_eps)
    np.testing.assert_allclose(final, want[-1], rtol=0, atol=1e-4)


def test_a_prefill_then_one_token_at_a_time_equals_one_pass_and_transformers_cached_steps(checkpoint):
    _, hf, _, ours, ids, _ = checkpoint
    from transformers import DynamicCache

    whole = ours.forward(ids)
    hf = copy.deepcopy(hf)
    hf_cache, cache = DynamicCache(config=hf.config), ours.new_cache()
    assert isinstance(cache, HybridCache)
    start = 0
    for step in [ids[:PREFILL], *([t] for t in ids[PREFILL:])]:
        step = np.asarray(step)
        with torch.no_grad():
            want = hf(torch.tensor(step)[None], cache=hf_cache, use_cache=True,
                      position_ids=torch.arange(start, start + len(step))[None]).logits[0].numpy()
        out = ours.forward(step, cache)
        stop = start + len(step)
        np.testing.assert_allclose(out.logits, whole.logits[start:stop], rtol=0, atol=1e-4)  # float32: other chunks
        np.testing.assert_allclose(out.attentions, whole.attentions[:, :, start:stop, :stop], rtol=0, atol=1e-6)
        np.testing.assert_allclose(out.logits, want, rtol=0, atol=1e-4)
        start = stop
    assert len(cache) == len(ids)
    c = ours.config
    for layer in range(c.n_layers):
        if c.delta.is_delta_layer(layer):  # a state and the convolution's last inputs, as transformers keeps them
            conv, state = cache.state(layer)
            hf_layer = hf_cache.layers[layer]
            assert state.shape == (c.delta.n_v_heads, c.delta.d_k, c.delta.d_v) and cache.kept(layer) == 0
            np.testing.assert_allclose(state, hf_layer.recurrent_states[0][0].numpy(), rtol=0, atol=1e-4)
            hf_conv = hf_layer.conv_states[0][0].numpy()  # (channels, w): the last w inputs
            np.testing.assert_allclose(conv, hf_conv[:, 1:].T, rtol=0, atol=1e-5)  # (w - 1, channels)
        else:
            np.testing.assert_allclose(cache.keys(layer), hf_cache.layers[layer].keys[0].numpy(), rtol=0, atol=1e-4)
    assert cache.nbytes == cache_bytes(c, len(ids), dtype="float32")
    per_layer = c.latent.kv_lora_rank + c.latent.qk_rope_head_dim if c.latent else c.n_kv_heads * (c.head_dim + c.v_head_dim)
    per_token = len(_softmax_layers(c)) * per_layer * 4  # float32 keys and values (Kimi: latents and RoPE keys)
    assert cache_bytes(c, 2 * len(ids), dtype="float32") - cache.nbytes == len(ids) * per_token  # the states stay


@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_tokens_equal_transformers(checkpoint, use_cache):
    *_, ours, ids, ref = checkpoint
    np.testing.assert_array_equal(ours.generate(ids, MAX_NEW_TOKENS, use_cache=use_cache), ref["generated"])


def test_the_parameters_counted_from_the_config_are_those_in_the_file(checkpoint):
    _, hf, folder, ours, _, _ = checkpoint
    in_file = sum(t.size for t in read_checkpoint(folder).values())
    buffers = sum(b.numel() for n, b in hf.named_buffers() if n.endswith("e_score_correction_bias"))
    assert parameter_count(ours.config) == in_file == hf.num_parameters() + buffers  # Kimi's correction bias: a buffer


def test_a_delta_rule_layer_has_no_queries_and_keys_to_show(checkpoint):
    *_, ours, ids, _ = checkpoint
    layer = ours.config.delta.layer_types.index("linear_attention")
    with pytest.raises(ValueError, match="delta-rule layer"):
        ours.qkv(layer, np.zeros((2, ours.config.d_model), np.float32), np.arange(2))
    with pytest.raises(TypeError, match="HybridCache"):
        from attention_course.decoder import KVCache
        ours.forward(ids[:3], KVCache(ours.config.n_layers))
