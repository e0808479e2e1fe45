"""load_decoder against transformers: tiny random checkpoints of every architecture it runs, built and saved here.

For each configuration of tests/decoder_models.py (Llama with its RoPE
scalings, Mistral, Qwen2, Qwen3, Gemma 2, Gemma 3, SmolLM3, gpt-oss,
DeepSeek-V3; GQA and MQA, biases, tied and untied output projections,
head_dim apart from hidden / heads, sliding windows shorter than the prompt,
soft-caps, sinks, NoPE layers, experts, latent attention) transformers builds
a model from a config (no download), saves it with save_pretrained and
computes the reference with eager attention in float32: logits to 1e-4,
every layer's attention weights to 1e-5, and greedy tokens with and without
the cache, each equal to transformers' own. Skipped, with the reason, without torch.
"""

import copy
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]' to cross-check against it")
pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[torch]'")

from attention_course.decoder import DecoderConfig, cache_bytes, load_decoder  # noqa: E402
from attention_course.decoder.size import parameter_count  # noqa: E402
from attention_course.decoder.weights import read_checkpoint  # noqa: E402
from decoder_models import (  # noqa: E402
    ARCHITECTURES, PROMPT, config_json, older_form, reference_run, save, tiny_model, tiny_tokenizer,
)

MAX_NEW_TOKENS = 10


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


@pytest.fixture(scope="module", params=sorted(ARCHITECTURES))
def checkpoint(request, tokenizer, tmp_path_factory):
    """(name, transformers model never run, its folder, our model, prompt ids, transformers' reference)."""
    name = request.param
    hf = tiny_model(name, seed=len(name))
    folder = save(hf, tmp_path_factory.mktemp(name), tokenizer)
    ids = np.array(tokenizer.encode(PROMPT).ids)
    return name, hf, folder, load_decoder(folder), ids, reference_run(hf, ids, MAX_NEW_TOKENS)


def test_the_configuration_is_read_as_transformers_reads_it(checkpoint):
    name, hf, _, ours, ids, _ = checkpoint
    c, h = ours.config, hf.config
    assert all(w < len(ids) for w in c.windows if w is not None)  # every window hides keys of the prompt
    assert (c.n_layers, c.n_heads, c.n_kv_heads) == (h.num_hidden_layers, h.num_attention_heads, h.num_key_value_heads)
    assert c.head_dim == (h.qk_head_dim if c.latent else getattr(h, "head_dim", None) or h.hidden_size // h.num_attention_heads)
    # config.json as written in decoder_models, with our defaults, reads as transformers' saved one
    assert DecoderConfig.from_dict(config_json(name)) == c


def test_logits_equal_transformers(checkpoint):
    *_, ours, ids, ref = checkpoint
    out = ours.forward(ids)
    assert out.logits.dtype == np.float32 and out.hidden_states.dtype == np.float32  # float32 all the way, as transformers
    np.testing.assert_allclose(out.logits, ref["logits"], rtol=0, atol=1e-4)


def test_attention_weights_equal_transformers(checkpoint):
    *_, ours, ids, ref = checkpoint
    got = ours.forward(ids).attentions
    assert got.shape == ref["attentions"].shape
    np.testing.assert_allclose(got, ref["attentions"], rtol=0, atol=1e-5)
    sums = got.sum(axis=-1)  # (L, h, n)
    if ours.config.sinks:  # the sink's column is dropped, as transformers drops it: rows sum to less than 1
        assert sums.max() <= 1 + 1e-6 and sums.min() < 0.9
    else:
        np.testing.assert_allclose(sums, 1, atol=1e-5)


@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_tokens_equal_transformers(checkpoint, use_cache):
    *_, ours, ids, ref = checkpoint
    assert np.array_equal(ref["generated_with_cache"], ref["generated_without_cache"])  # transformers agrees with itself
    np.testing.assert_array_equal(ours.generate(ids, MAX_NEW_TOKENS, use_cache=use_cache), ref["generated_with_cache"])


def test_cached_steps_equal_transformers_cached_steps(checkpoint):
    """A prompt, then one token at a time, both sides with their cache: the logits of every step, and what each cache keeps."""
    _, hf, _, ours, ids, _ = checkpoint
    from transformers import DynamicCache

    hf = copy.deepcopy(hf)  # a model never run: a dynamic RoPE remembers the longest sequence it saw
    hf_cache, our_cache = DynamicCache(config=hf.config), ours.new_cache(keep_window=True)
    start = 0
    for step in [ids[:9], *([t] for t in ids[9:])]:
        t = torch.tensor(np.asarray(step))[None]
        with torch.no_grad():
            want = hf(t, cache=hf_cache, use_cache=True,
                      position_ids=torch.arange(start, start + len(step))[None]).logits[0].numpy()
        np.testing.assert_allclose(ours.forward(step, our_cache).logits, want, rtol=0, atol=1e-4)
        start += len(step)
    for layer in range(ours.config.n_layers):  # the same tokens kept per layer: windows, and latents for MLA
        hf_keys = hf_cache.layers[layer].keys  # (1, h_kv, kept, d), or (1, 1, kept, r) for latent attention
        assert our_cache.kept(layer) == hf_keys.shape[-2]
        np.testing.assert_allclose(our_cache.keys(layer), hf_keys[0].numpy(), rtol=0, atol=1e-4)
    assert our_cache.nbytes == cache_bytes(ours.config, len(ids), dtype="float32", keep_window=True)


def test_rope_frequencies_equal_transformers(checkpoint):
    """Each layer's RoPE frequencies and attention factor, as transformers' rotary module computes them at first."""
    _, hf, _, ours, _, _ = checkpoint
    rotary, c = hf.model.rotary_emb, ours.config
    layer_types = getattr(hf.config, "layer_types", None) or ["full_attention"] * c.n_layers
    for layer, rope in enumerate(c.ropes):
        if rope is None:
            continue
        kind = layer_types[layer]
        per_type = hasattr(rotary, f"{kind}_inv_freq")  # Gemma 3: one set per layer type
        want = getattr(rotary, f"{kind}_inv_freq" if per_type else "inv_freq").numpy()
        factor = getattr(rotary, f"{kind}_attention_scaling" if per_type else "attention_scaling")
        theta, got_factor = rope.frequencies(c.rope_dim, seq_len=c.max_positions)  # dynamic: not grown yet
        np.testing.assert_allclose(theta, want, rtol=2e-6, err_msg=f"layer {layer}")
        assert got_factor == pytest.approx(factor, rel=1e-12)


def test_the_older_form_of_config_json_reads_the_same(checkpoint, tmp_path):
    """rope_theta / rope_scaling at the top level (and Gemma 3's rope_local_base_freq): the same model, both sides."""
    name, _, folder, ours, ids, ref = checkpoint
    from transformers import AutoModelForCausalLM

    old = tmp_path / "older"
    old.mkdir()
    for part in folder.iterdir():
        (old / part.name).write_bytes(part.read_bytes())
    cfg = json.loads((folder / "config.json").read_text())
    (old / "config.json").write_text(json.dumps(older_form(cfg)))
    ours_old = load_decoder(old)
    assert ours_old.config == ours.config
    np.testing.assert_array_equal(ours_old.forward(ids).logits, ours.forward(ids).logits)
    hf_old = AutoModelForCausalLM.from_pretrained(old, attn_implementation="eager").eval()  # transformers agrees
    with torch.no_grad():
        np.testing.assert_allclose(hf_old(torch.tensor(ids)[None]).logits[0].numpy(), ref["logits"], rtol=0, atol=1e-5)


def test_the_parameters_counted_from_the_config_are_those_in_the_file(checkpoint):
    _, hf, folder, ours, _, _ = checkpoint
    in_file = sum(t.size for t in read_checkpoint(folder).values())
    assert parameter_count(ours.config) == in_file
    buffers = sum(b.numel() for n, b in hf.named_buffers() if n.endswith("e_score_correction_bias"))
    assert in_file == hf.num_parameters() + buffers  # DeepSeek's correction bias is a saved buffer


def test_a_bfloat16_checkpoint_is_read_as_torch_widens_it(checkpoint, tmp_path):
    _, hf, _, _, ids, _ = checkpoint
    bf16 = copy.deepcopy(hf).to(torch.bfloat16)  # a copy: the module's float32 model stays as it is
    folder = tmp_path / "bf16"
    bf16.save_pretrained(folder)
    assert json.loads((folder / "config.json").read_text())["dtype"] == "bfloat16"
    ours = read_checkpoint(folder)
    state = bf16.state_dict()
    for name, p in state.items():
        if name in ours:
            assert ours[name].dtype == np.float32
            np.testing.assert_array_equal(ours[name], p.float().numpy(), err_msg=name)
    from transformers import AutoModelForCausalLM

    # transformers reading the same file in float32: the rounded weights, computed (RoPE included) in float32
    widened = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    with torch.no_grad():
        want = widened(torch.tensor(ids)[None]).logits[0].numpy()
    np.testing.assert_allclose(load_decoder(folder).forward(ids).logits, want, rtol=0, atol=1e-4)


def test_the_committed_fixture_is_what_transformers_computes_today(tokenizer):
    """tests/fixtures/tiny_decoder/reference.npz, made by make_decoder_checkpoint.py, still holds."""
    from pathlib import Path

    from transformers import AutoModelForCausalLM

    folder = Path(__file__).parent / "fixtures" / "tiny_decoder"
    ref = dict(np.load(folder / "reference.npz"))
    hf = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
    fresh = reference_run(hf, ref["ids"], int(json.loads(str(ref["meta"]))["max_new_tokens"]))
    # float32 logits of size up to about 20: another CPU sums in another order (seen: 1.05e-5 apart),
    # so allow a few float32 steps at that size; a change in what transformers computes is far larger
    np.testing.assert_allclose(fresh["logits"], ref["logits"], rtol=0, atol=5e-5)
    np.testing.assert_allclose(fresh["attentions"], ref["attentions"], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(fresh["generated_with_cache"], ref["generated_with_cache"])
    assert tokenizer.encode(str(ref["prompt"])).ids == ref["ids"].tolist()
