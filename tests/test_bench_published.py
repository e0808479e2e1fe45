"""benchmarks/bench_published.py runs: shrunk models of each published layout, loaded from bfloat16 (no timing asserts)."""

import importlib.util
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_published.py"


def load_script():
    spec = importlib.util.spec_from_file_location("bench_published", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_shrunk_run_prints_every_model_and_context(capsys):
    bench = load_script()
    assert bench.main(["--shrink", "--contexts", "6", "9", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    for name in bench.MODELS:
        assert f"{name} (shrunk)" in out
    assert out.count("ms per token") == 2 * len(bench.MODELS) and out.count("peak resident memory") == len(bench.MODELS)


def test_the_bfloat16_checkpoint_it_writes_loads_as_the_weights_rounded(tmp_path):
    import ml_dtypes

    from attention_course.decoder import DecoderConfig, load_decoder
    from attention_course.decoder.load import random_tensors

    bench = load_script()
    fields = bench.shrunk("Qwen/Qwen3-0.6B")
    config = DecoderConfig.from_dict(fields)
    bench.write_bf16_checkpoint(tmp_path, fields, config)
    model = load_decoder(tmp_path)
    drawn = random_tensors(np.random.default_rng(0), config, np.float32)["model.layers.0.self_attn.q_proj.weight"]
    rounded = drawn.astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(model.weights.layers[0].w_q, rounded.T)
    assert model.config.dtype == "bfloat16"
