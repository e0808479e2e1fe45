"""Tests for attention_course/decoder/published.py and size.py: published configurations, their caches and sizes.

The parameter counts are checked against the figures the models' own cards
give (Llama 3.1 8B: 8,030,261,248; gpt-oss-120b: 116.83 billion, 5.13
billion active; DeepSeek-V3: 671 billion, 37 billion active): the package
counts them from the config fields alone.
"""

import numpy as np
import pytest

import attention_course.decoder as decoder
from attention_course.decoder import cache_bytes, kv_cache_bytes, latent_cache_bytes, random_decoder
from attention_course.decoder import UnsupportedConfigError
from attention_course.decoder.published import (
    GENERATION_CONFIGS, PUBLISHED_CONFIGS, ModelShape, model_shape, published_config,
)
from attention_course.decoder.size import (
    active_parameter_count, decode_flops_per_token, parameter_count, weight_bytes,
)


def test_every_published_configuration_reads_and_names_its_source():
    for entry in PUBLISHED_CONFIGS:
        config = entry.config
        assert config.n_layers > 0 and entry.source.startswith("https://huggingface.co/" + entry.name)
    assert len({e.name for e in PUBLISHED_CONFIGS}) == len(PUBLISHED_CONFIGS)
    with pytest.raises(ValueError, match="name must be one of"):
        published_config("gpt-5")
    with pytest.raises(TypeError):
        PUBLISHED_CONFIGS[0].fields["num_hidden_layers"] = 1  # the table is read-only


def test_the_generation_chapters_models_read_as_transformers_reads_them():
    names = [e.name for e in PUBLISHED_CONFIGS + GENERATION_CONFIGS]
    assert len(set(names)) == len(names)
    for entry in GENERATION_CONFIGS:
        assert entry.source.startswith("https://huggingface.co/" + entry.name)
        if entry.fields["model_type"] in ("gpt2", "falcon"):  # model types this package does not run
            with pytest.raises(UnsupportedConfigError, match="model_type"):
                published_config(entry.name)
            continue
        c, shape = published_config(entry.name), model_shape(entry)
        assert (shape.n_layers, shape.n_heads, shape.n_kv_heads, shape.head_dim, shape.context, shape.dtype) == \
            (c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim, c.max_positions, c.dtype)
        assert all(w == shape.window for w in c.windows)
    shapes = {e.name: model_shape(e) for e in GENERATION_CONFIGS}
    # GPT-2's own field names (n_layer, n_head, n_embd, n_positions), and no torch_dtype: float32, as it loads
    assert shapes["openai-community/gpt2"] == ModelShape("openai-community/gpt2", 12, 12, 12, 64, 1024, None, "float32")
    # Falcon's multi_query: one key/value head; no max_position_embeddings in its config.json: FalconConfig's 2048
    assert shapes["tiiuae/falcon-7b"] == ModelShape("tiiuae/falcon-7b", 32, 71, 1, 64, 2048, None, "bfloat16")
    assert shapes["mistralai/Mistral-7B-v0.1"].window == 4096 and shapes["Qwen/Qwen2-7B"].window is None
    # the model cards' counts: Llama 2 7B 6.74 billion, Llama 3 8B as Llama 3.1 8B, Mistral 7B 7.24 billion
    assert parameter_count(published_config("meta-llama/Llama-2-7b-hf")) == 6_738_415_616
    assert parameter_count(published_config("meta-llama/Meta-Llama-3-8B")) == 8_030_261_248
    assert parameter_count(published_config("mistralai/Mistral-7B-v0.1")) == 7_241_732_096


def test_deepseek_v3_caches_a_latent_and_one_rope_key_per_token():
    c = published_config("deepseek-ai/DeepSeek-V3")
    m = c.latent
    assert (c.n_layers, m.kv_lora_rank, m.qk_rope_head_dim, c.n_heads, m.qk_nope_head_dim, m.v_head_dim) == \
        (61, 512, 64, 128, 128, 128)
    per_token = cache_bytes(c, dtype="bfloat16")
    assert per_token == latent_cache_bytes(61, 512, 64, 1, "bfloat16") == 61 * (512 + 64) * 2
    per_head = cache_bytes(c, dtype="bfloat16", latent=False)  # each head's rebuilt key (192) and value (128)
    assert per_head == 61 * 128 * (192 + 128) * 2
    assert 70 < per_head / per_token < 72


@pytest.mark.parametrize("name, kind", [("meta-llama/Llama-3.1-8B", "grouped-query"), ("Qwen/Qwen3-8B", "grouped-query"),
                                        ("google/gemma-3-27b-it", "grouped-query"), ("openai/gpt-oss-120b", "grouped-query"),
                                        ("google/gemma-3-270m", "multi-query")])
def test_the_other_caches_keep_a_key_and_a_value_per_key_value_head(name, kind):
    c = published_config(name)
    assert c.attention_kind == kind
    assert cache_bytes(c, 1000) == kv_cache_bytes(c.n_layers, c.n_kv_heads, c.head_dim, 1000, "bfloat16")
    kept = cache_bytes(c, 100_000, keep_window=True)  # sliding layers keep window - 1 tokens
    full_layers = sum(w is None for w in c.windows)
    expected = sum(kv_cache_bytes(1, c.n_kv_heads, c.head_dim, 100_000 if w is None else w - 1, "bfloat16")
                   for w in c.windows)
    assert kept == expected and (kept < cache_bytes(c, 100_000)) == (full_layers < c.n_layers)


def test_parameter_counts_match_the_model_cards():
    assert parameter_count(published_config("meta-llama/Llama-3.1-8B")) == 8_030_261_248
    oss = published_config("openai/gpt-oss-120b")
    assert parameter_count(oss) == pytest.approx(116.83e9, rel=1e-3)
    assert active_parameter_count(oss) == pytest.approx(5.13e9, rel=1e-3)
    deepseek = published_config("deepseek-ai/DeepSeek-V3")
    assert parameter_count(deepseek) == pytest.approx(671e9, rel=1e-3)
    assert active_parameter_count(deepseek) == pytest.approx(37e9, rel=0.02)
    qwen = published_config("Qwen/Qwen3-0.6B")  # "0.6B, 0.44B without the embeddings"
    assert parameter_count(qwen) - qwen.vocab_size * qwen.d_model == pytest.approx(0.44e9, rel=2e-3)
    gemma = published_config("google/gemma-3-270m")  # "170M embedding parameters and 100M in the blocks"
    assert gemma.vocab_size * gemma.d_model == pytest.approx(170e6, rel=0.02)
    assert parameter_count(gemma) - gemma.vocab_size * gemma.d_model == pytest.approx(100e6, rel=0.01)
    assert decode_flops_per_token(qwen) == 2 * parameter_count(qwen)  # tied: the embedding is the output projection


def test_the_memory_the_package_docstring_gives_is_what_the_package_computes():
    doc = " ".join(decoder.__doc__.split())
    for name in ("Qwen/Qwen3-0.6B", "google/gemma-3-270m"):
        c = published_config(name)
        assert f"{parameter_count(c) / 1e6:.0f} million" in doc
        assert f"{weight_bytes(c, 'float32') / 1e9:.1f} GB" in doc
        assert f"{weight_bytes(c) / 1e9:.1f} GB on disk" in doc and c.dtype == "bfloat16"


def test_a_random_model_of_a_published_shape_is_built_from_its_config_alone():
    c = published_config("google/gemma-3-270m")
    tiny = {**dict(PUBLISHED_CONFIGS[-1].fields), "vocab_size": 64, "hidden_size": 16, "intermediate_size": 32,
            "head_dim": 8, "sliding_window": 4}
    model = random_decoder(np.random.default_rng(0), config=tiny)
    assert model.config.windows == tuple(None if w is None else 4 for w in c.windows)  # five local, one global
    assert model.config.windows[:6] == (4,) * 5 + (None,)
    assert model.generate([1, 2, 3], 3).shape == (6,)


def test_gemma_2_caps_its_scores_and_smollm3_leaves_every_fourth_layer_without_positions():
    gemma = published_config("google/gemma-2-2b-it")
    assert (gemma.attn_softcap, gemma.final_softcap) == (50.0, 30.0)
    assert gemma.windows == (4096, None) * 13 and gemma.scale == 256 ** -0.5  # query_pre_attn_scalar
    assert parameter_count(gemma) == pytest.approx(2.61e9, rel=2e-3)  # the Hub's "2.61B params"
    smol = published_config("HuggingFaceTB/SmolLM3-3B")
    assert [i for i, rope in enumerate(smol.ropes) if rope is None] == list(range(3, 36, 4))
    assert {rope.base for rope in smol.ropes if rope is not None} == {5_000_000.0}
    assert parameter_count(smol) == pytest.approx(3.08e9, rel=2e-3)  # the Hub's "3.08B params"


def test_the_readme_s_table_of_what_runs_on_24_gib_is_what_runs_here_computes():
    from pathlib import Path

    from attention_course.decoder.published import SPARSE_CONFIGS, runs_here

    rows = []
    for entry in PUBLISHED_CONFIGS + SPARSE_CONFIGS:
        fit = runs_here(entry)
        rows.append(f"| {fit.name} | {fit.parameters / 1e9:,.2f} billion | {'yes' if fit.runs else 'no'} | {fit.reason} |")
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    table = readme.split("| checkpoint | parameters | runs on 24 GiB | why |\n| --- | --- | --- | --- |\n")[1]
    assert table.split("\n\n")[0].splitlines() == rows


def test_runs_here_weighs_float32_and_refuses_mxfp4():
    from attention_course.decoder.published import MACHINE_MEMORY, published_entry, runs_here

    small = runs_here(published_entry("Qwen/Qwen3-0.6B"))
    assert small.runs and small.loaded_bytes == 4 * small.parameters < MACHINE_MEMORY
    assert not runs_here(published_entry("meta-llama/Llama-3.1-8B")).runs  # 8 billion x 4 bytes > 24 GiB
    assert runs_here(published_entry("meta-llama/Llama-3.1-8B"), memory=40 * 2 ** 30).runs
    assert "MXFP4" in runs_here(published_entry("openai/gpt-oss-120b"), memory=2 ** 50).reason
    glm = runs_here(published_entry("zai-org/GLM-5"))
    assert not glm.runs and 743e9 < glm.parameters < 745e9  # GLM-5's published 744 billion, from its defaults


def test_the_24_gib_summary_of_the_package_docstring_is_what_runs_here_computes():
    from attention_course.decoder.published import published_entry, runs_here

    doc = " ".join(decoder.__doc__.split())
    fits = {name: runs_here(published_entry(name)) for name in (
        "google/gemma-2-2b-it", "HuggingFaceTB/SmolLM3-3B", "meta-llama/Llama-3.1-8B", "Qwen/Qwen3-8B",
        "deepseek-ai/DeepSeek-V3.2-Exp", "zai-org/GLM-5", "openai/gpt-oss-120b", "Qwen/Qwen3-0.6B")}
    assert f"Gemma 2 2B ({fits['google/gemma-2-2b-it'].loaded_bytes / 2 ** 30:.1f} GiB in float32)" in doc
    assert f"SmolLM3 3B ({fits['HuggingFaceTB/SmolLM3-3B'].loaded_bytes / 2 ** 30:.1f} GiB)" in doc
    for name in ("meta-llama/Llama-3.1-8B", "Qwen/Qwen3-8B"):  # "about 30 GiB in float32"
        assert round(fits[name].loaded_bytes / 2 ** 30, -1) == 30 and not fits[name].runs
    v32, glm = fits["deepseek-ai/DeepSeek-V3.2-Exp"], fits["zai-org/GLM-5"]
    assert f"({v32.parameters / 1e9:.0f} billion parameters, about {round(v32.loaded_bytes / 2 ** 30, -2):,.0f} GiB" in doc
    assert f"GLM-5 ({glm.parameters / 1e9:.0f} billion)" in doc
    assert fits["Qwen/Qwen3-0.6B"].runs and not fits["openai/gpt-oss-120b"].runs
