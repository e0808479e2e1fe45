"""Tests for attention_course/decoder: the NumPy decoder against the committed checkpoint and its reference numbers.

tests/fixtures/tiny_decoder/ is a tiny random Qwen2 checkpoint saved by
transformers (GQA, q/k/v biases, tied embeddings, a sliding window of 5
tokens in layers 1 and 2), with transformers' logits, attention weights and
greedy tokens for one prompt (tests/fixtures/make_decoder_checkpoint.py).
These tests need no torch; tests/test_decoder_transformers.py compares
against transformers itself on more architectures where torch is installed.
"""

import json
import shutil
import struct

import numpy as np
import pytest

from attention_course.decoder import (
    DecoderConfig, KVCache, UnsupportedConfigError, load_decoder, random_decoder, read_checkpoint, rms_norm,
)
from attention_course.decoder.weights import read_safetensors
from decoder_models import PROMPT

FIXTURE = __import__("pathlib").Path(__file__).parent / "fixtures" / "tiny_decoder"
REFERENCE = dict(np.load(FIXTURE / "reference.npz"))


@pytest.fixture(scope="module")
def model():
    return load_decoder(FIXTURE)


@pytest.fixture
def copy_of_fixture(tmp_path):
    folder = tmp_path / "checkpoint"
    shutil.copytree(FIXTURE, folder)
    return folder


def edit_config(folder, **changes):
    path = folder / "config.json"
    cfg = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            cfg.pop(key, None)
        else:
            cfg[key] = value
    path.write_text(json.dumps(cfg))


def test_the_config_is_read_with_every_option(model):
    c = model.config
    assert (c.model_type, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim, c.kv_groups) == ("qwen2", 3, 4, 2, 8, 2)
    assert c.windows == (None, 5, 5) and c.qkv_bias and not c.o_bias and c.tie_word_embeddings
    assert c.rope_theta == 1000.0 and c.eos_token_ids == (0,)
    assert model.weights.lm_head.base is model.weights.embeddings  # tied: the same numbers, not a copy


def test_the_text_is_tokenized_as_the_reference_was(model):
    assert str(REFERENCE["prompt"]) == PROMPT
    np.testing.assert_array_equal(model.encode(PROMPT), REFERENCE["ids"])
    assert model.decode(REFERENCE["ids"]) == PROMPT


def test_logits_and_attention_weights_equal_transformers(model):
    out = model.forward(REFERENCE["ids"])
    n = len(REFERENCE["ids"])
    assert out.logits.shape == (n, 320) and out.attentions.shape == (3, 4, n, n) and out.logits.dtype == np.float32
    np.testing.assert_allclose(out.logits, REFERENCE["logits"], rtol=0, atol=1e-4)
    np.testing.assert_allclose(out.attentions, REFERENCE["attentions"], rtol=0, atol=1e-5)
    # the sliding window of layers 1 and 2 really hides keys: 5 per query at most
    assert ((out.attentions[1:] > 0).sum(axis=-1) <= 5).all() and (out.attentions[0, :, -1] > 0).all()


def test_the_same_text_gives_the_same_numbers(model):
    np.testing.assert_array_equal(model.forward(PROMPT).logits, model.forward(REFERENCE["ids"]).logits)


@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_generation_gives_transformers_tokens(model, use_cache):
    new = int(json.loads(str(REFERENCE["meta"]))["max_new_tokens"])
    got = model.generate(REFERENCE["ids"], new, use_cache=use_cache)
    np.testing.assert_array_equal(got, REFERENCE["generated_with_cache" if use_cache else "generated_without_cache"])


def test_text_in_text_out(model):
    text = model.generate(PROMPT, 6)
    ids = model.generate(REFERENCE["ids"], 6)
    assert text.startswith(PROMPT) and text == PROMPT + model.decode(ids)[len(PROMPT):]


@pytest.mark.parametrize("keep_window", [False, True])
@pytest.mark.parametrize("chunks", [(15,), (7, 8), (1,) * 15, (10, 1, 1, 3)])
def test_the_cache_chunk_by_chunk_equals_one_pass_over_everything(chunks, keep_window):
    model = load_decoder(FIXTURE, dtype=np.float64)  # float64: the two computations agree to rounding
    ids = REFERENCE["ids"]
    assert sum(chunks) == len(ids)
    full = model.forward(ids)
    cache = model.new_cache(keep_window=keep_window)
    start = 0
    for size in chunks:
        out = model.forward(ids[start:start + size], cache)
        stop = start + size
        assert out.attentions.shape == (3, 4, size, stop)
        np.testing.assert_allclose(out.logits, full.logits[start:stop], rtol=0, atol=1e-12)
        np.testing.assert_allclose(out.attentions, full.attentions[:, :, start:stop, :stop], rtol=0, atol=1e-14)
        start = stop
    assert len(cache) == len(ids)
    if keep_window:  # the sliding-window layers keep window - 1 = 4 tokens: the next query needs no more
        assert [cache.kept(layer) for layer in range(3)] == [15, 4, 4]
    else:
        assert [cache.kept(layer) for layer in range(3)] == [15, 15, 15]
    assert cache.nbytes == sum(cache.kept(layer) for layer in range(3)) * 2 * 2 * 8 * 8  # keys and values, 2 heads of 8, float64


def test_float64_weights_give_the_same_logits_closer_to_exact(model):
    exact = load_decoder(FIXTURE, dtype=np.float64).forward(REFERENCE["ids"])
    assert exact.logits.dtype == np.float64
    np.testing.assert_allclose(exact.logits, REFERENCE["logits"], rtol=0, atol=1e-4)
    np.testing.assert_allclose(model.forward(REFERENCE["ids"]).logits, exact.logits, rtol=0, atol=1e-4)


def test_rope_theta_at_the_top_level_as_older_checkpoints_write_it(copy_of_fixture, model):
    edit_config(copy_of_fixture, rope_parameters=None, rope_theta=1000.0, rope_scaling=None)
    old_style = load_decoder(copy_of_fixture)
    assert old_style.config.rope_theta == 1000.0
    np.testing.assert_array_equal(old_style.forward(REFERENCE["ids"]).logits, model.forward(REFERENCE["ids"]).logits)
    edit_config(copy_of_fixture, rope_theta=5000.0)
    assert not np.allclose(load_decoder(copy_of_fixture).forward(REFERENCE["ids"]).logits, REFERENCE["logits"], atol=1e-3)


@pytest.mark.parametrize("changes, match", [
    ({"rope_parameters": {"rope_type": "longrope", "rope_theta": 1e4, "short_factor": [1.0] * 4}},
     r"rope_parameters\.rope_type = 'longrope'"),
    ({"rope_parameters": None, "rope_theta": 1e4, "rope_scaling": {"type": "proportional", "factor": 2.0}},
     r"rope_scaling\.rope_type = 'proportional'"),
    ({"rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0}}, r"rope_parameters: the key 'low_freq_factor'"),
    ({"quantization_config": {"quant_method": "fp8"}}, "quantization_config"),
    ({"rope_parameters": {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.5}}, "partial_rotary_factor"),
    ({"model_type": "gemma"}, "model_type 'gemma'"),
    ({"hidden_act": "gelu_pytorch_tanh"}, "hidden_act"),
    ({"num_key_value_heads": 3}, "multiple of num_key_value_heads"),
    ({"layer_types": ["full_attention", "chunked_attention", "full_attention"]}, "layer_types"),
    ({"hidden_size": 40}, r"'model.layers.0.self_attn.q_proj.weight' has shape \(32, 32\); config.json implies \(40, 40\)"),
    ({"head_dim": 4}, r"'model.layers.0.self_attn.q_proj.weight' has shape \(32, 32\); config.json implies \(16, 32\)"),
    ({"tie_word_embeddings": False}, "'lm_head.weight' that config.json implies is missing"),
    ({"vocab_size": None}, "'vocab_size' is missing"),
])
def test_unsupported_options_are_refused_naming_the_key(copy_of_fixture, changes, match):
    edit_config(copy_of_fixture, **changes)
    with pytest.raises(UnsupportedConfigError, match=match):
        load_decoder(copy_of_fixture)


def write_safetensors(path, tensors: dict[str, tuple[str, tuple, bytes]]):
    """The safetensors format by hand: an 8-byte header length, a JSON header, then the bytes."""
    header, offset, blobs = {}, 0, []
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def test_bfloat16_checkpoints_are_widened_exactly(tmp_path):
    values = np.array([1.0, -2.5, 3.140625, 1e-3, 65280.0, -0.0], dtype=np.float32)
    bf16 = (values.view(np.uint32) >> 16).astype("<u2")  # the top 16 bits: values representable in bf16 stay exact
    write_safetensors(tmp_path / "w.safetensors", {"w": ("BF16", (2, 3), bf16.tobytes())})
    got = read_safetensors(tmp_path / "w.safetensors")["w"]
    assert got.dtype == np.float32 and got.shape == (2, 3)
    np.testing.assert_array_equal(got.ravel(), (bf16.astype(np.uint32) << 16).view(np.float32))
    np.testing.assert_array_equal(got.ravel()[:4], [1.0, -2.5, 3.140625, 0.00099945068359375])
    write_safetensors(tmp_path / "bad.safetensors", {"w": ("I8", (2,), b"\x00\x01")})  # packed 4-bit, say
    with pytest.raises(UnsupportedConfigError, match="I8"):
        read_safetensors(tmp_path / "bad.safetensors")


def test_a_sharded_checkpoint_reads_like_one_file(copy_of_fixture, model):
    tensors = read_checkpoint(copy_of_fixture)
    names = sorted(tensors)
    halves = (names[: len(names) // 2], names[len(names) // 2:])
    weight_map = {}
    for i, half in enumerate(halves):
        shard = f"model-0000{i + 1}-of-00002.safetensors"
        write_safetensors(copy_of_fixture / shard, {n: ("F32", tensors[n].shape, tensors[n].astype("<f4").tobytes()) for n in half})
        weight_map.update({n: shard for n in half})
    (copy_of_fixture / "model.safetensors").unlink()
    (copy_of_fixture / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    np.testing.assert_array_equal(load_decoder(copy_of_fixture).forward(REFERENCE["ids"]).logits,
                                  model.forward(REFERENCE["ids"]).logits)
    (copy_of_fixture / "model.safetensors.index.json").unlink()
    with pytest.raises(FileNotFoundError, match="neither model.safetensors"):
        load_decoder(copy_of_fixture)


def test_tensors_the_config_does_not_describe_are_refused(copy_of_fixture):
    tensors = read_checkpoint(copy_of_fixture)
    tensors["model.layers.0.self_attn.q_norm.weight"] = np.ones(8, np.float32)  # a Qwen3-style query norm
    write_safetensors(copy_of_fixture / "model.safetensors",
                      {n: ("F32", t.shape, t.astype("<f4").tobytes()) for n, t in tensors.items()})
    with pytest.raises(UnsupportedConfigError, match="q_norm.weight"):
        load_decoder(copy_of_fixture)


def test_bad_input_is_refused_naming_the_argument(model, tmp_path):
    with pytest.raises(ValueError, match=r"ids must be in 0\.\.319"):
        model.forward([1, 320])
    with pytest.raises(TypeError, match="ids must be integer token ids"):
        model.forward(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"ids must have shape \(n,\)"):
        model.forward(np.zeros((1, 3), dtype=int))
    with pytest.raises(TypeError, match="cache must be a KVCache"):
        model.forward([1, 2], cache={})
    with pytest.raises(ValueError, match="cache has 2 layers"):
        model.forward([1, 2], cache=KVCache(2))
    with pytest.raises(ValueError, match="max_new_tokens"):
        model.generate([1, 2], -1)
    with pytest.raises(FileNotFoundError, match="not a folder"):
        load_decoder(tmp_path / "nowhere")
    with pytest.raises(TypeError, match="float32 or float64"):
        load_decoder(FIXTURE, dtype=np.float16)


def test_without_a_tokenizer_text_is_refused_and_ids_work(copy_of_fixture):
    (copy_of_fixture / "tokenizer.json").unlink()
    model = load_decoder(copy_of_fixture)
    with pytest.raises(ValueError, match="no tokenizer"):
        model.forward("my card")
    assert model.forward(REFERENCE["ids"][:3]).logits.shape == (3, 320)


def test_the_weights_are_read_only(model):
    with pytest.raises(ValueError, match="read-only"):
        model.weights.layers[0].w_q[0, 0] = 1.0


def test_rms_norm_divides_by_the_root_mean_square():
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(rms_norm(x[:1], np.array([1.0, 2.0]), eps=0.0), [[3 / np.sqrt(12.5), 8 / np.sqrt(12.5)]])
    assert np.all(rms_norm(x, np.ones(2), eps=1e-6)[1] == 0)  # eps keeps 0 / 0 away
    assert rms_norm(x.astype(np.float32), np.ones(2, np.float32), 1e-6).dtype == np.float32


def test_a_random_decoder_is_reproducible_and_consistent():
    a = random_decoder(np.random.default_rng(3), window=4)
    b = random_decoder(np.random.default_rng(3), window=4)
    ids = np.arange(10) % 64
    np.testing.assert_array_equal(a.forward(ids).logits, b.forward(ids).logits)
    assert a.config.windows == (4, 4)
    np.testing.assert_array_equal(a.generate(ids, 5), a.generate(ids, 5, use_cache=False))


def test_repr_names_the_architecture(model):
    assert repr(model) == ("DecoderModel('tiny_decoder': qwen2, 3 layers, 4 query heads sharing 2 key/value heads of "
                           "d = 8, d_model = 32, sliding window [5])")


def test_config_from_dict_without_optional_keys():
    config = DecoderConfig.from_dict({"model_type": "llama", "vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1,
                                      "num_attention_heads": 2, "intermediate_size": 16})
    assert (config.n_kv_heads, config.head_dim, config.rope_theta, config.windows) == (2, 4, 10000.0, (None,))


def test_the_docstring_examples_run():
    import doctest

    import attention_course.decoder as decoder_package
    from attention_course.decoder import cache

    for module in (decoder_package, cache):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__


BASE = {"vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 4, "num_attention_heads": 2, "intermediate_size": 16}


@pytest.mark.parametrize("cfg, windows", [
    ({"model_type": "mistral", "sliding_window": 6}, (6, 6, 6, 6)),
    ({"model_type": "mistral", "sliding_window": None}, (None,) * 4),
    ({"model_type": "qwen2", "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 2}, (None,) * 4),
    ({"model_type": "qwen2", "use_sliding_window": True, "sliding_window": 5, "max_window_layers": 2},
     (None, None, 5, 5)),  # an older Qwen2 config.json, without layer_types
    ({"model_type": "qwen2", "use_sliding_window": True, "sliding_window": 5,
      "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]}, (5, None, 5, None)),
    ({"model_type": "llama"}, (None,) * 4),
])
def test_sliding_windows_are_read_per_layer_as_transformers_reads_them(cfg, windows):
    assert DecoderConfig.from_dict({**BASE, **cfg}).windows == windows


def test_qwen2_has_qkv_biases_and_llama_follows_attention_bias():
    qwen = DecoderConfig.from_dict({**BASE, "model_type": "qwen2"})
    llama = DecoderConfig.from_dict({**BASE, "model_type": "llama", "attention_bias": True, "mlp_bias": True})
    assert (qwen.qkv_bias, qwen.o_bias, qwen.mlp_bias) == (True, False, False)
    assert (llama.qkv_bias, llama.o_bias, llama.mlp_bias) == (True, True, True)
    with pytest.raises(UnsupportedConfigError, match="sliding_window is null"):
        DecoderConfig.from_dict({**BASE, "model_type": "qwen2", "layer_types": ["sliding_attention"] * 4})


def test_a_damaged_safetensors_file_is_refused_naming_the_file(tmp_path):
    data = np.arange(6, dtype="<f4").tobytes()
    write_safetensors(tmp_path / "short.safetensors", {"w": ("F32", (2, 4), data)})  # 8 numbers claimed, 6 stored
    with pytest.raises(ValueError, match=r"short.safetensors: tensor 'w' of shape \(2, 4\) and dtype F32 does not fit"):
        read_safetensors(tmp_path / "short.safetensors")
    (tmp_path / "bad.safetensors").write_bytes(struct.pack("<Q", 5) + b"{nope")
    with pytest.raises(ValueError, match="bad.safetensors is not a safetensors file: its header is not JSON"):
        read_safetensors(tmp_path / "bad.safetensors")
    (tmp_path / "tiny.safetensors").write_bytes(b"\x01")
    with pytest.raises(ValueError, match="shorter than its 8-byte header length"):
        read_safetensors(tmp_path / "tiny.safetensors")
