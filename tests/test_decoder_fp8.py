"""attention_course/decoder/fp8.py: FP8 checkpoints with block scales widened at load, as transformers widens them.

The checkpoint is quantized here by transformers' own `Fp8Quantize` (a tiny
DeepSeek-V3.2 saved by save_pretrained, its projection weights turned into
float8_e4m3fn with a float32 scale per block), loaded by `load_decoder`, and
compared with transformers running the weights its `Fp8Dequantize` gives
back. The NumPy-only tests need no torch.
"""

import json
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

from attention_course.decoder import UnsupportedConfigError, load_decoder
from attention_course.decoder.fp8 import dequantize_fp8, fp8_blocks, widen


def test_each_weight_is_times_its_block_s_scale_a_last_partial_block_included():
    rng = np.random.default_rng(0)
    q = rng.uniform(-448, 448, (5, 7)).astype(ml_dtypes.float8_e4m3fn)  # 5 x 7 in blocks of 2 x 3: a partial last row
    scales = rng.uniform(0.5, 2.0, (3, 3)).astype(np.float32)  # ceil(5 / 2) x ceil(7 / 3)
    got = widen(q, scales, (2, 3))
    want = np.array([[float(q[i, j]) * float(scales[i // 2, j // 3]) for j in range(7)] for i in range(5)])
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-7)
    with pytest.raises(UnsupportedConfigError, match=r"scales of shape \(3, 3\)"):
        widen(q, scales[:2], (2, 3))


def test_stacked_weights_and_power_of_two_scales():
    q = np.ones((2, 4, 4), dtype=ml_dtypes.float8_e4m3fn)  # (E, out, in)
    scales = np.array([[[0.5, 2.0]], [[4.0, 0.25]]]).astype(ml_dtypes.float8_e8m0fnu)  # (E, 1, 2), exact powers of 2
    got = widen(q, scales, (4, 2))
    np.testing.assert_array_equal(got[1, :, 2:], 0.25)
    np.testing.assert_array_equal(got[0, :, :2], 0.5)


def test_dequantize_drops_the_scales_and_refuses_what_cannot_be_widened():
    q = np.ones((2, 2), dtype=ml_dtypes.float8_e4m3fn)
    tensors = {"a.weight": q, "a.weight_scale_inv": np.full((1, 1), 3.0, np.float32), "norm.weight": np.ones(2)}
    out = dequantize_fp8(tensors, (2, 2), "here")
    assert set(out) == {"a.weight", "norm.weight"}
    np.testing.assert_array_equal(out["a.weight"], 3.0)
    with pytest.raises(UnsupportedConfigError, match="without 'a.weight_scale_inv'"):
        dequantize_fp8({"a.weight": q}, (2, 2), "here")
    with pytest.raises(UnsupportedConfigError, match="no quantization_config"):
        dequantize_fp8(tensors, None, "here")
    with pytest.raises(UnsupportedConfigError, match="scales no weight"):
        dequantize_fp8({"b.weight_scale_inv": np.ones((1, 1))}, (2, 2), "here")


@pytest.mark.parametrize("config, match", [
    ({"quant_method": "mxfp4"}, "MXFP4"),
    ({"quant_method": "gptq"}, r"\('gptq'\)"),
    ({"quant_method": "fp8", "weight_block_size": [128]}, "weight_block_size"),
    ({"quant_method": "fp8", "weight_block_size": [128, 128], "activation_scheme": "static"}, "static"),
])
def test_other_formats_are_refused_with_the_reason(config, match):
    with pytest.raises(UnsupportedConfigError, match=match):
        fp8_blocks(config, "config.json")
    assert fp8_blocks({"quant_method": "fp8", "weight_block_size": [128, 64]}, "config.json") == (128, 64)


# ---- against transformers ----------------------------------------------------------------------------------------

BLOCKS = [4, 4]


@pytest.fixture(scope="module")
def quantized(tmp_path_factory):
    """(folder of the FP8 checkpoint, folder of the same widened by transformers, the transformers model of it)."""
    torch = pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]'")
    transformers = pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[torch]'")
    from safetensors.torch import load_file, save_file
    from transformers.integrations.finegrained_fp8 import Fp8Dequantize, Fp8Quantize

    from decoder_models import save, tiny_model

    plain = save(tiny_model("deepseek-v32", seed=3), tmp_path_factory.mktemp("plain"))
    tensors = load_file(str(plain / "model.safetensors"))
    config = SimpleNamespace(quantization_config=SimpleNamespace(weight_block_size=BLOCKS, scale_fmt=None))
    quantize, dequantize = Fp8Quantize(config), Fp8Dequantize(config)
    stored, widened = {}, {}
    for name, value in tensors.items():
        if value.ndim == 2 and not any(part in name for part in ("embed_tokens", "lm_head", "mlp.gate.", "weights_proj")):
            pair = quantize.convert({name: value})  # {name: float8_e4m3fn, name + "_scale_inv": float32}
            stored.update(pair)
            widened[name] = dequantize._dequantize_one(pair[name], pair[name + "_scale_inv"], torch.float32)
        else:
            stored[name] = widened[name] = value
    cfg = json.loads((plain / "config.json").read_text())
    folders = {}
    for kind, weights, extra in (("fp8", stored, {"quantization_config": {
            "quant_method": "fp8", "weight_block_size": BLOCKS, "activation_scheme": "dynamic"}}), ("widened", widened, {})):
        folder = tmp_path_factory.mktemp(kind)
        save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
        (folder / "config.json").write_text(json.dumps({**cfg, **extra}))
        folders[kind] = folder
    assert any(t.dtype == torch.float8_e4m3fn for t in stored.values())
    hf = transformers.AutoModelForCausalLM.from_pretrained(folders["widened"], attn_implementation="eager").eval()
    return folders["fp8"], folders["widened"], hf


def test_the_weights_are_widened_as_transformers_widens_them(quantized):
    fp8, widened, _ = quantized
    ours, theirs = load_decoder(fp8), load_decoder(widened)
    assert ours.config.weight_blocks == tuple(BLOCKS)
    for a, b in zip(ours.weights.layers, theirs.weights.layers):
        np.testing.assert_array_equal(a.latent.w_q_b, b.latent.w_q_b)  # bit for bit
        np.testing.assert_array_equal(a.indexer.w_q, b.indexer.w_q)
        np.testing.assert_array_equal(a.w_o, b.w_o)


def test_logits_of_the_fp8_checkpoint_equal_transformers(quantized):
    torch = pytest.importorskip("torch")
    fp8, _, hf = quantized
    ids = np.arange(3, 17)
    with torch.no_grad():
        want = hf(torch.tensor(ids)[None]).logits[0].numpy()
    np.testing.assert_allclose(load_decoder(fp8).forward(ids).logits, want, rtol=0, atol=1e-4)
