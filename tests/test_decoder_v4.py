"""load_decoder against transformers on DeepSeek-V4: a sliding window plus compressed keys, hyper-connections.

For each configuration of tests/decoder_models.py's DEEPSEEK_V4, transformers builds a tiny model from a
config (no download), saves it with save_pretrained and runs it in float32 with eager attention. The prompt
is longer than the window and than every compression ratio, and the indexer keeps fewer entries than the
queries can see, so the window, the pooling and the choice all matter. Checked: logits to 1e-4, attention
weights (the tokens, then the compressed entries) to 1e-5, every layer's residual streams to 1e-4; a prefill,
a chunk, then one token at a time equal to one pass and to transformers' cached steps (logits and attention
weights over the window it keeps and the entries), the cache holding what
transformers' holds, its size as `cache_bytes` counts it; greedy tokens with and without the cache equal
to transformers' `generate`; the parameters counted from the config equal the file's. Skipped without torch
(the pooling of `core.compress` is checked by tests/test_compress.py).
"""

import copy
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]' to cross-check against it")
pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[torch]'")

from attention_course.decoder import DecoderConfig, cache_bytes, load_decoder, random_decoder  # noqa: E402
from attention_course.decoder.deepseek_v4 import DeepseekV4Model, V4Cache  # noqa: E402
from attention_course.decoder.options import UnsupportedConfigError  # noqa: E402
from attention_course.decoder.size import active_parameter_count, parameter_count  # noqa: E402
from attention_course.decoder.weights import read_checkpoint  # noqa: E402
from decoder_models import COMMON, DEEPSEEK_V4, config_json, save, tiny_model  # noqa: E402

N_PROMPT = 23
"""Prompt tokens: several windows of every layer, several compressed entries."""
PREFILL = 9
"""The cached run's first call (a window left open in every compressed layer); then 5 tokens in one call, then the
rest one token at a time."""
MAX_NEW_TOKENS = 6


@pytest.fixture(scope="module", params=sorted(DEEPSEEK_V4))
def checkpoint(request, tmp_path_factory):
    """(name, transformers model never run, our model, prompt ids, transformers' reference, folder)."""
    name = request.param
    hf = tiny_model(name, seed=len(name))
    folder = save(hf, tmp_path_factory.mktemp(name))
    ids = np.random.default_rng(len(name)).integers(1, COMMON["vocab_size"], N_PROMPT)  # no 0: the end token
    t = torch.tensor(ids)[None]
    with torch.no_grad():
        out = copy.deepcopy(hf)(t, output_attentions=True, output_hidden_states=True, use_cache=False)
        generated = {use_cache: copy.deepcopy(hf).generate(t, max_new_tokens=MAX_NEW_TOKENS, do_sample=False,
                                                           use_cache=use_cache, attention_mask=torch.ones_like(t))[0]
                     for use_cache in (True, False)}
    ref = {"logits": out.logits[0].numpy(), "attentions": [a[0].numpy() for a in out.attentions],
           "hidden_states": [h[0].numpy() for h in out.hidden_states],
           "generated": {k: v.numpy() for k, v in generated.items()}}
    return name, hf, load_decoder(folder), ids, ref, folder


def test_the_configuration_is_read_as_transformers_reads_it(checkpoint):
    name, hf, ours, *_ = checkpoint
    c, h = ours.config, hf.config
    assert isinstance(ours, DeepseekV4Model) and c == DecoderConfig.from_dict(config_json(name))
    o = c.v4
    assert o.layer_types == tuple(h.layer_types) and o.mlp_layer_types == tuple(h.mlp_layer_types)
    assert o.ratios == tuple(h.compress_rates.get(t, 0) for t in h.layer_types)
    assert (o.rope_dim, o.window, o.hc_mult, o.n_experts, o.d_expert, o.index_topk) == (
        h.qk_rope_head_dim, h.sliding_window, h.hc_mult, h.n_routed_experts, h.moe_intermediate_size, h.index_topk)
    assert (o.rope_main.base, o.rope_compress.base) == (h.rope_parameters["main"]["rope_theta"],
                                                      h.rope_parameters["compress"]["rope_theta"])
    assert o.rope_compress.rope_type == h.rope_parameters["compress"]["rope_type"]
    assert max(o.ratios) < N_PROMPT and o.window < N_PROMPT
    assert "compressed_sparse_attention" in o.layer_types and "heavily_compressed_attention" in o.layer_types


def test_logits_equal_transformers(checkpoint):
    _, _, ours, ids, ref, _ = checkpoint
    np.testing.assert_allclose(ours.forward(ids).logits, ref["logits"], rtol=0, atol=1e-4)


def test_attention_weights_over_the_tokens_then_the_compressed_entries_equal_transformers(checkpoint):
    _, _, ours, ids, ref, _ = checkpoint
    out = ours.forward(ids)
    o, n = ours.config.v4, len(ids)
    t_max = max(n // r for r in o.ratios if r)
    assert out.attentions.shape == (ours.config.n_layers, ours.config.n_heads, n, n + t_max)
    chosen = 0
    for layer, want in enumerate(ref["attentions"]):  # (h, n, n + T): transformers' keys axis is ours
        entries = n // o.ratios[layer] if o.ratios[layer] else 0
        assert want.shape[-1] == n + entries
        np.testing.assert_allclose(out.attentions[layer, ..., :n + entries], want, rtol=0, atol=1e-5)
        assert not out.attentions[layer, ..., n + entries:].any()
        window = out.attentions[layer, ..., :n]
        far = np.arange(n)[None, :] <= np.arange(n)[:, None] - o.window  # keys out of the window weigh 0
        assert not window[:, far].any()
        if o.layer_types[layer] == "compressed_sparse_attention":
            picked = (out.attentions[layer, 0, :, n:n + entries] > 0).sum(axis=-1)  # (n,) entries read
            assert picked.max() == o.index_topk < entries  # the indexer left some visible entries out
            chosen += 1
    assert chosen and (out.attentions.sum(axis=-1) < 1).all()  # the sink takes a share of every row


def test_every_hidden_state_equals_transformers(checkpoint):
    _, _, ours, ids, ref, _ = checkpoint
    out = ours.forward(ids)
    n_layers = ours.config.n_layers
    assert out.hidden_states.shape == (n_layers + 1, ours.config.v4.hc_mult, len(ids), ours.config.d_model)
    for layer, want in enumerate(ref["hidden_states"][:-1]):  # (n, N, d_model): the streams before layer `layer`
        np.testing.assert_allclose(out.hidden_states[layer], want.transpose(1, 0, 2), rtol=0, atol=1e-4)
    last = ours.head_input(out.hidden_states[-1].transpose(1, 0, 2))  # transformers' last: the head's collapse, normed
    np.testing.assert_allclose(last, ref["hidden_states"][-1], rtol=0, atol=1e-4)


def test_a_prefill_then_a_chunk_then_one_token_at_a_time_equals_one_pass_and_transformers_cached_steps(checkpoint):
    _, hf, ours, ids, *_ = checkpoint
    from transformers import DynamicCache

    whole = ours.forward(ids)
    hf = copy.deepcopy(hf)
    hf_cache, cache = DynamicCache(config=hf.config), ours.new_cache()
    assert isinstance(cache, V4Cache)
    n, start = len(ids), 0
    for step in [ids[:PREFILL], ids[PREFILL:PREFILL + 5], *([t] for t in ids[PREFILL + 5:])]:
        step = np.asarray(step)
        with torch.no_grad():
            hf_out = hf(torch.tensor(step)[None], cache=hf_cache, use_cache=True, output_attentions=True,
                        position_ids=torch.arange(start, start + len(step))[None])
        out = ours.forward(step, cache)
        stop = start + len(step)
        np.testing.assert_allclose(out.logits, whole.logits[start:stop], rtol=0, atol=1e-4)
        np.testing.assert_allclose(out.logits, hf_out.logits[0].numpy(), rtol=0, atol=1e-4)
        for layer, want in enumerate(hf_out.attentions):  # (h, n, kept + n + T): the window transformers keeps
            tokens = min(start, ours.config.v4.window - 1) + len(step)
            want = want[0].numpy()
            np.testing.assert_allclose(out.attentions[layer, ..., stop - tokens:stop], want[..., :tokens], rtol=0,
                                       atol=1e-5)
            np.testing.assert_allclose(out.attentions[layer, ..., stop:stop + want.shape[-1] - tokens],
                                       want[..., tokens:], rtol=0, atol=1e-5)
        np.testing.assert_allclose(out.attentions[..., :stop], whole.attentions[:, :, start:stop, :stop], rtol=0,
                                   atol=1e-5)
        entries = out.attentions[..., stop:]  # this call's entries: the first of the whole run's
        np.testing.assert_allclose(entries, whole.attentions[:, :, start:stop, n:n + entries.shape[-1]], rtol=0,
                                   atol=1e-5)
        assert cache.nbytes == cache_bytes(ours.config, stop, dtype="float32")  # counted from the config
        start = stop
    assert len(cache) == n
    o = ours.config.v4
    for layer in range(ours.config.n_layers):
        hf_layer = hf_cache.layers[layer]
        np.testing.assert_allclose(cache.layers[layer].window, hf_layer.keys[0, 0].numpy(), rtol=0, atol=1e-5)
        ratio = o.ratios[layer]
        if not ratio:
            continue
        names = ["compressor"] + (["indexer"] if o.layer_types[layer] == "compressed_sparse_attention" else [])
        for name in names:
            entries = cache.entries(layer, name)
            assert entries.shape[0] == n // ratio
            np.testing.assert_allclose(entries, hf_layer.compressed_kv[name][0].numpy(), rtol=0, atol=1e-5)
            np.testing.assert_allclose(cache.layers[layer].pools[name].pending_kv, hf_layer.buffer_kv[name][0].numpy(),
                                       rtol=0, atol=1e-5)  # the open window's projections
            if len(names) == 2:  # CSA: the last closed window's first halves, for the next entry
                np.testing.assert_allclose(cache.layers[layer].pools[name].previous[0],
                                           hf_layer.overlap_kv[name][0].numpy(), rtol=0, atol=1e-5)
    per_token = ours.config.n_layers * (o.window - 1) * ours.config.head_dim * 4
    assert cache_bytes(ours.config, 10 * n, dtype="float32") - cache.nbytes < 10 * n * per_token  # no key per token


def test_the_parameters_counted_from_the_config_are_those_in_the_file(checkpoint):
    _, hf, ours, *_, folder = checkpoint
    tensors = read_checkpoint(folder)
    assert parameter_count(ours.config) == sum(t.size for t in tensors.values())
    o, c = ours.config.v4, ours.config
    idle = c.n_layers * (o.n_experts - o.top_k) * 3 * c.d_model * o.d_expert  # the experts a token is not sent to
    assert active_parameter_count(c) == parameter_count(c) - idle - (0 if c.tie_word_embeddings else c.vocab_size * c.d_model)


def _published_name(name: str) -> str:
    """The name DeepSeek's published files give a tensor transformers saves as `name`."""
    name = name.removeprefix("model.")
    return {"embed_tokens.weight": "embed.weight", "hc_head.hc_fn": "hc_head_fn", "hc_head.hc_base": "hc_head_base",
            "hc_head.hc_scale": "hc_head_scale"}.get(name, name)


def test_the_published_tensor_names_are_read_too_and_other_tensors_refused(checkpoint, tmp_path):
    from safetensors.numpy import save_file

    *_, ours, ids, _, folder = checkpoint
    tensors = {_published_name(k): v for k, v in read_checkpoint(folder).items()}
    tensors["mtp.0.attn.wkv.weight"] = np.zeros((2, 2), np.float32)  # the multi-token-prediction layer: skipped
    shutil.copy(folder / "config.json", tmp_path / "config.json")
    save_file(tensors, str(tmp_path / "model.safetensors"))
    np.testing.assert_array_equal(load_decoder(tmp_path).forward(ids).logits, ours.forward(ids).logits)
    save_file({**tensors, "layers.0.attn.extra": np.zeros(2, np.float32)}, str(tmp_path / "model.safetensors"))
    with pytest.raises(UnsupportedConfigError, match="layers.0.attn.extra"):
        load_decoder(tmp_path)


def test_a_random_model_of_the_configuration_runs(checkpoint):
    name, *_ = checkpoint
    model = random_decoder(np.random.default_rng(0), config=config_json(name))
    assert isinstance(model, DeepseekV4Model)
    ids = np.arange(1, N_PROMPT + 1)
    out = model.forward(ids)
    assert np.isfinite(out.logits).all() and out.logits.shape == (N_PROMPT, model.config.vocab_size)
    cache = model.new_cache()
    model.forward(ids, cache)
    assert [0 if cache.entries(i) is None else len(cache.entries(i)) for i in range(model.config.n_layers)] == [
        N_PROMPT // r if r else 0 for r in model.config.v4.ratios]
    with pytest.raises(TypeError, match="V4Cache"):
        model.forward(ids, cache=object())


@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_tokens_equal_transformers(checkpoint, use_cache):
    _, _, ours, ids, ref, _ = checkpoint
    generated = ours.generate(ids, MAX_NEW_TOKENS, use_cache=use_cache)
    np.testing.assert_array_equal(generated, ref["generated"][use_cache])
    np.testing.assert_array_equal(generated, ref["generated"][not use_cache])
