"""The explorers' Python side: state, mime bundle, bundler, and the JS checked against the package.

The JavaScript runs under node (installed with the book's tooling, see
README): once unbundled (`node --test tests/js`) and once as the bundled
module text the widget and the book page actually run (`run_vectors.mjs`).
Both must reproduce the package's numbers in tests/js/vectors.json.
"""

from __future__ import annotations

import base64
import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import traitlets

from attention_course import BANK_BOT, BANK_BOT_QUERIES, alibi_bias, apply_rope, attention_weights, causal_mask, padding_mask, trace_attention
from attention_course.chapters.cost import attention_flops, score_matrix_bytes
from attention_course.decoder import kv_cache_bytes
from attention_course.chapters.roofline import LLAMA_3_8B, Ceilings, step_cost
from attention_course.explorers import (
    EXPLORERS, CostExplorer, FrontierExplorer, KVCacheExplorer, MaskExplorer, PositionsExplorer, RooflineExplorer, ScalingExplorer,
    ScoresExplorer,
)
from attention_course.explorers.bundle import bundle
from attention_course.explorers.scaling import compute_scaling, decode_sample, encode_sample, scaling_stats
from attention_course.explorers.widget import script_json
from explorer_vectors import VECTORS_PATH, build_vectors, from_json, js_fixed

JS_TESTS = Path(__file__).parent / "js"


def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.fail("node (Node.js 18+) is needed to check the explorers' JavaScript; see README.md")
    return path


def assert_close(actual, expected, path="", rtol=1e-9, atol=1e-12):
    """Recursive comparison: numbers to rtol (exact for 0 and infinities), everything else equal."""
    if isinstance(expected, dict):
        for key in expected:
            assert key in actual, f"{path}.{key} missing"
            assert_close(actual[key], expected[key], f"{path}.{key}", rtol, atol)
    elif isinstance(expected, (list, tuple, np.ndarray)):
        assert len(actual) == len(expected), f"{path}: {len(actual)} items, expected {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, f"{path}[{i}]", rtol, atol)
    elif isinstance(expected, (bool, np.bool_, str)) or expected is None:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"
    else:
        e, a = float(expected), float(actual)
        if e == 0 or math.isinf(e):
            assert a == e, f"{path}: {a!r} != {e!r} (must be exact)"
        else:
            assert math.isclose(a, e, rel_tol=rtol, abs_tol=atol), f"{path}: {a!r} != {e!r}"


def run_bundled(tmp_path: Path, module_text: str, function: str, calls: list) -> list:
    """Call `function(*args)` of the module text for each args in `calls`, under node."""
    module = tmp_path / "bundle.mjs"
    module.write_text(module_text, encoding="utf-8")
    done = subprocess.run(
        [node(), str(JS_TESTS / "run_vectors.mjs"), str(module), function],
        input=json.dumps(calls), capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    return from_json(json.loads(done.stdout))


# --- the shared vectors -------------------------------------------------------------

def test_committed_vectors_equal_what_the_package_computes():
    committed = from_json(json.loads(VECTORS_PATH.read_text(encoding="utf-8")))
    fresh = from_json(build_vectors())
    assert_close(committed, fresh, rtol=1e-12, atol=1e-15)
    assert committed.keys() == fresh.keys()


def test_node_tests_of_the_unbundled_modules_pass():
    done = subprocess.run([node(), "--test", str(JS_TESTS)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert re.search(r"^# pass [1-9]", done.stdout, re.MULTILINE), done.stdout[-1000:]
    assert re.search(r"^# fail 0$", done.stdout, re.MULTILINE), done.stdout[-1000:]


def test_bundled_scores_module_reproduces_the_package(tmp_path):
    cases = build_vectors()["scores"]
    results = run_bundled(tmp_path, ScoresExplorer._esm, "computeScores", [[c["state"]] for c in cases])
    for case, result in zip(cases, results):
        assert_close(result, from_json(case["expected"]))


def test_bundled_masks_module_reproduces_the_package(tmp_path):
    cases = build_vectors()["masks"]
    results = run_bundled(tmp_path, MaskExplorer._esm, "computeMasks", [[c["state"]] for c in cases])
    for case, result in zip(cases, results):
        assert_close(result, case["expected"])


def test_bundled_scaling_module_reproduces_the_package(tmp_path):
    states = [{**ScalingExplorer().state(), "d_k": d_k} for d_k in (1, 3, 100, 512)]
    results = run_bundled(tmp_path, ScalingExplorer._esm, "computeScaling", [[state] for state in states])
    for state, result in zip(states, results):
        for name, s in compute_scaling(state).items():
            expected = {"scores": s["scores"], "weights": s["weights"], "spread": s["spread"],
                        "maxWeight": s["max_weight"], "entropy": s["entropy"]}
            assert_close(result[name], expected, f"d_k={state['d_k']} {name}")


def test_bundled_cost_module_counts_exactly_like_the_package(tmp_path):
    cases = build_vectors()["cost"]
    results = run_bundled(tmp_path, CostExplorer._esm, "computeCost", [[c["state"]] for c in cases])
    for case, result in zip(cases, results):
        assert {**result, "flops": result["flops"]["total"]} == case["expected"]


def test_bundled_positions_module_reproduces_the_package(tmp_path):
    cases = build_vectors()["positions"]
    results = run_bundled(tmp_path, PositionsExplorer._esm, "computePositions", [[c["state"]] for c in cases])
    for case, result in zip(cases, results):
        assert_close(result, from_json(case["expected"]))
def test_bundled_kv_cache_module_counts_exactly_like_the_package(tmp_path):
    cases = build_vectors()["kv_cache"]
    results = run_bundled(tmp_path, KVCacheExplorer._esm, "computeKvCache", [[c["state"]] for c in cases])
    for case, result in zip(cases, results):
        assert result == case["expected"]


def test_bundled_frontier_module_reproduces_the_package(tmp_path):
    vectors = build_vectors()["frontier"]
    states = [{**c["state"], "sequences": vectors["sequences"], "presets": vectors["presets"]} for c in vectors["cases"]]
    results = run_bundled(tmp_path, FrontierExplorer._esm, "computeFrontier", [[state] for state in states])
    for case, result in zip(vectors["cases"], results):
        assert_close(result, from_json(case["expected"]))
        assert (result["kept"], result["rows"], result["total"]) == (case["expected"]["kept"], case["expected"]["rows"],
                                                                     case["expected"]["total"])


def test_bundled_roofline_module_counts_like_the_package(tmp_path):
    cases = build_vectors()["roofline"]
    results = run_bundled(tmp_path, RooflineExplorer._esm, "computeRoofline", [[c["state"]] for c in cases])
    for case, result in zip(cases, results):
        assert_close(result, case["expected"], rtol=1e-12)


# --- initial state comes from the package -------------------------------------------

def test_scores_explorer_starts_at_the_seed_example():
    widget = ScoresExplorer()
    trace = trace_attention(BANK_BOT.query, BANK_BOT.keys, BANK_BOT.values)
    assert widget.scores == trace.scores.tolist()
    assert widget.d_k == BANK_BOT.d_k == 4
    assert widget.tokens == list(BANK_BOT.tokens)
    np.testing.assert_array_equal(widget.trace().weights, trace.weights)
    # The bank-bot example's numbers, as the page prints them.
    assert [js_fixed(w, 3) for w in widget.trace().weights] == ["0.064", "0.782", "0.048", "0.106"]
    assert js_fixed(widget.trace().exp_sum, 2) == "25.67"
    assert [js_fixed(x, 2) for x in widget.trace().output] == ["0.19", "0.91"]


def test_scores_typed_by_hand_drive_the_trace():
    widget = ScoresExplorer()
    widget.source, widget.scores = "scores", [0.0, 0.0, 0.0, 0.0]
    np.testing.assert_allclose(widget.trace().weights, [0.25] * 4)
    widget.scores = [2000.0, 0.0, 0.0, 0.0]  # exp(2000 / 2): the unshifted exp overflows; the weights must not
    trace = widget.trace()
    assert trace.exponentials[0] == np.inf
    np.testing.assert_array_equal(trace.weights, [1.0, 0.0, 0.0, 0.0])


@pytest.mark.parametrize(("name", "value"), [("d_k", 0), ("query", [1.0, 2.0]), ("scores", [1.0])])
def test_scores_explorer_rejects_bad_state(name, value):
    with pytest.raises(traitlets.TraitError, match=name):
        setattr(ScoresExplorer(), name, value)


def test_scaling_sample_is_unit_variance_and_round_trips():
    rng = np.random.default_rng(3)
    text = encode_sample(16, 16, 512, rng)
    assert len(text) == math.ceil(32 * 512 / 3) * 4  # base64 of one byte per entry
    queries, keys = decode_sample(text, 16, 16, 512)
    assert queries.shape == (16, 512) and keys.shape == (16, 512)
    entries = np.concatenate([queries, keys]).ravel()
    assert abs(entries.mean()) < 0.03 and abs(entries.var() - 1) < 0.05
    np.testing.assert_array_equal(entries * 32, np.rint(entries * 32))  # steps of exactly 1/32
    with pytest.raises(ValueError, match="expected"):
        decode_sample(text, 16, 16, 256)


def test_scaling_stats_show_the_sqrt_dk_spread_and_the_fix():
    queries, keys = ScalingExplorer().vectors()
    raw = scaling_stats(queries, keys, 512, scaled=False)
    fixed = scaling_stats(queries, keys, 512, scaled=True)
    assert 0.7 * math.sqrt(512) < raw["spread"] < 1.3 * math.sqrt(512)
    assert 0.7 < fixed["spread"] < 1.3
    assert raw["max_weight"] > 0.9 > fixed["max_weight"]
    assert raw["entropy"] < 0.5 < fixed["entropy"] <= math.log(16)
    with pytest.raises(traitlets.TraitError, match="d_k"):
        ScalingExplorer(d_k=513)


def test_mask_explorer_matches_the_package_and_zeroes_masked_keys():
    widget = MaskExplorer()  # causal and padding on; "card" selected
    n = len(widget.tokens)
    assert widget.tokens[widget.selected] == "card" and widget.n_real == len(BANK_BOT.tokens)
    expected_mask = causal_mask(n) & padding_mask([widget.n_real], n)[0]
    np.testing.assert_array_equal(widget.mask(), expected_mask)
    weights = widget.weights()
    np.testing.assert_array_equal(weights[~expected_mask], 0.0)
    # "blocked", the last real token, sees what it saw in the worked example.
    blocked = widget.tokens.index("blocked")
    np.testing.assert_allclose(weights[blocked, :4], trace_attention(BANK_BOT.query, BANK_BOT.keys, BANK_BOT.values).weights)
    # Every row is the masks chapter's: its queries, its causal mask ("card" puts 0.182 and 0.818).
    np.testing.assert_array_equal(widget.query_vectors[:4], BANK_BOT_QUERIES)
    chapter = attention_weights(BANK_BOT_QUERIES, BANK_BOT.keys, is_causal=True)  # (4, 4)
    np.testing.assert_allclose(weights[:4, :4], chapter, rtol=1e-14)
    assert weights[widget.tokens.index("card"), :2].round(3).tolist() == [0.182, 0.818]
    with pytest.raises(ValueError, match="queries"):
        MaskExplorer(queries=np.zeros((3, 4)))
    widget.causal = widget.padding = False
    assert widget.mask() is None
    np.testing.assert_array_equal(widget.weights(), attention_weights(widget.query_vectors, widget.key_vectors))
    assert (widget.weights()[:, widget.n_real:] > 0).all()  # unmasked padding takes weight
    with pytest.raises(ValueError, match="selected"):
        MaskExplorer(selected="bank")
    with pytest.raises(traitlets.TraitError, match="selected"):
        widget.selected = n


def test_cost_explorer_uses_the_package_counts():
    widget = CostExplorer(n=2048, d=64, dtype="float16", block_size=256)
    costs = widget.costs()
    assert costs["flops"] == attention_flops(2048, 2048, 64).total
    assert costs["plain_score_bytes"] == score_matrix_bytes(2048, 2048, "float16") == 2048 * 2048 * 2
    assert costs["tiled_score_bytes"] == score_matrix_bytes(256, 256, "float16")
    assert costs["tile_pairs"] == 64
    assert widget.itemsizes == {"float16": 2, "float32": 4, "float64": 8}
    with pytest.raises(traitlets.TraitError):
        widget.dtype = "int8"
    with pytest.raises(traitlets.TraitError, match="n must be"):
        widget.n = widget.n_max + 1


def test_positions_explorer_starts_at_the_bank_bot_and_the_score_follows_m_minus_n():
    widget = PositionsExplorer()  # the query of "blocked" at 3, the key of "card" at 1
    card = BANK_BOT.tokens.index("card")
    assert widget.tokens == ["blocked", "card"] and (widget.m, widget.n) == (BANK_BOT.position, card)
    assert widget.query == BANK_BOT.query.tolist() and widget.key == BANK_BOT.keys[card].tolist()
    start = widget.numbers()
    assert start["raw"] == trace_attention(BANK_BOT.query, BANK_BOT.keys, BANK_BOT.values).scores[card] == 6.0
    rotated_keys = apply_rope(BANK_BOT.keys, np.arange(4))
    rotated_query = apply_rope(BANK_BOT.query[None, :], [3])[0]
    assert start["rope_score"] == pytest.approx(rotated_keys[card] @ rotated_query, abs=1e-15)
    assert start["score"] == pytest.approx(start["rope_score"] / 2)  # scaled by 1/sqrt(d_k), d_k = 4
    widget.m, widget.n = 53, 51  # both moved by 50
    assert widget.numbers()["rope_score"] == pytest.approx(start["rope_score"], abs=1e-12)
    widget.method = "alibi"
    s = widget.numbers()
    assert s["slope"] == 0.5 and s["bias"] == alibi_bias(8, 54)[0, 53, 51] == -1.0
    assert s["score"] == pytest.approx(6.0 / 2 - 1.0)
    assert "ALiBi" in widget.summary() and "m − n = 2" in widget.summary()


@pytest.mark.parametrize(("name", "value"), [("m", 101), ("n", -1), ("base", 0.0), ("head", 8), ("method", "learned"),
                                             ("key", [1.0, 2.0])])
def test_positions_explorer_rejects_bad_state(name, value):
    with pytest.raises(traitlets.TraitError):
        setattr(PositionsExplorer(), name, value)


def test_positions_explorer_rejects_a_key_token_it_does_not_have():
    with pytest.raises(ValueError, match="key_token"):
        PositionsExplorer(key_token="bank")
    assert PositionsExplorer(key_token="my", m=40, n=0, max_position=40).numbers()["distance"] == 40
def test_kv_cache_explorer_counts_with_kv_cache_bytes_and_starts_at_llama_3_8b():
    widget = KVCacheExplorer()
    numbers = widget.summary_numbers()
    assert widget.preset == "meta-llama/Meta-Llama-3-8B" and widget.dtype == "bfloat16"
    assert numbers["per_token"] == kv_cache_bytes(32, 8, 128, 1, "bfloat16") == 128 * 1024
    assert numbers["total"] == kv_cache_bytes(32, 8, 128, 8192, "bfloat16") and numbers["mha_total"] == 4 * numbers["total"]
    assert numbers["heads"][1] == [4, 5, 6, 7]  # consecutive query heads share a key/value head
    mistral = KVCacheExplorer("mistralai/Mistral-7B-v0.1")
    assert mistral.window == 4096 and mistral.summary_numbers()["tokens_kept"] == 4095
    assert KVCacheExplorer("tiiuae/falcon-7b").summary_numbers()["groups"] == 71  # multi-query
    with pytest.raises(ValueError, match="preset must be one of"):
        KVCacheExplorer("gpt-5")
    with pytest.raises(traitlets.TraitError, match="batch must be between 1 and 32"):
        widget.batch = 33
    with pytest.raises(traitlets.TraitError, match="preset"):
        widget.preset = "unknown"
    widget.n_kv_heads = 3  # 32 query heads cannot share 3 key/value heads
    with pytest.raises(ValueError, match="multiple"):
        widget.summary_numbers()


def test_roofline_explorer_counts_with_step_cost_and_states_its_ceilings():
    widget = RooflineExplorer(Ceilings(bandwidth=10e9, flops=50e9))
    assert (widget.head_layout, widget.dtype, widget.context, widget.batch) == ("GQA", "bfloat16", 4096, 1)
    r = widget.numbers()
    decode = step_cost(LLAMA_3_8B, 1, 4096).total
    assert r["decode"]["bytes"] == decode.bytes and r["decode"]["flops"] == decode.flops
    assert r["decode"]["seconds"] == decode.bytes / 10e9 and r["decode"]["bound"] == "memory"
    assert r["prefill"]["bound"] == "compute" and r["ridge"] == 5.0
    assert "10.0 GB/s" in widget.summary() and "measured on the machine that built this page" in widget.measured
    widget.head_layout = "MLA"
    assert widget.numbers()["decode"]["cache_bytes"] < r["decode"]["cache_bytes"]
    with pytest.raises(traitlets.TraitError, match="head_layout must be one of"):
        widget.head_layout = "MoE"
    with pytest.raises(traitlets.TraitError, match="batch must be between 1 and 256"):
        widget.batch = 0
    with pytest.raises(TypeError, match="ceilings must be"):
        RooflineExplorer((10e9, 50e9))
    measured = RooflineExplorer()  # measures this machine: a second or two
    assert measured.bandwidth > 0 and measured.flops > 0


# --- live widget: the traitlets state the kernel syncs ------------------------------

@pytest.mark.parametrize("cls", EXPLORERS)
def test_widget_state_carries_the_module_and_the_explorer_traits(cls):
    widget = cls()
    state = widget.get_state()  # what the kernel sends to JupyterLab
    assert state["_esm"] == bundle(cls._module)
    assert "export default { render }" in state["_esm"]
    assert not re.search(r"^\s*import\b", state["_esm"], re.MULTILINE)  # every import inlined
    assert state["_css"].startswith("/*")
    for name, value in widget.state().items():
        assert state[name] == value


def test_frontend_updates_reach_python_and_are_validated():
    widget = ScoresExplorer()
    widget.set_state({"d_k": 16})  # what a message from the page does
    assert widget.d_k == 16
    assert widget.trace().scale == 0.25
    with pytest.raises(traitlets.TraitError):
        widget.set_state({"d_k": 0})
    assert widget.d_k == 16


# --- the static page: text/html that mounts the same module -------------------------

@pytest.mark.parametrize("cls", EXPLORERS)
def test_mimebundle_inlines_the_module_and_needs_no_network(cls):
    widget = cls()
    data, _ = widget._repr_mimebundle_()
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == widget.model_id
    assert data["text/plain"] == widget.summary()
    page = data["text/html"]
    assert script_json(widget._esm) in page  # the very module anywidget runs, as a string literal
    assert script_json(widget.state()) in page
    assert page.count("<script") == 1 and page.count("</script") == 1
    assert '<script type="module">' in page
    assert not re.search(r"\b(src|href)\s*=", page)
    assert "import(" in page and "data:text/javascript" in page
    # The only URL in the page is the SVG namespace name, which is never fetched.
    assert set(re.findall(r"https?://[^\s\"'<>\\]+", page)) <= {"http://www.w3.org/2000/svg"}
    assert f'id="ac-explorer-{widget.model_id}"' in page
    assert "<noscript>" in page


def test_script_json_cannot_close_the_script():
    text = script_json({"tokens": ["</script><script>alert(1)</script>", "<!--", "a & b"]})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"tokens": ["</script><script>alert(1)</script>", "<!--", "a & b"]}


# --- the bundler --------------------------------------------------------------------

def write_modules(directory: Path, **modules: str) -> Path:
    for name, text in modules.items():
        (directory / f"{name}.js").write_text(text, encoding="utf-8")
    return directory


def test_bundle_inlines_each_dependency_once_and_keeps_private_names_apart(tmp_path):
    js = write_modules(
        tmp_path,
        a='import { c } from "./c.js";\nconst helper = () => 1;\nexport function a() { return helper() + c(); }\n',
        b='import { c as cc } from "./c.js";\nconst helper = () => 10;\nexport const b = () => helper() + cc();\n',
        c="let calls = 0;\nexport function c() { calls += 1; return 100; }\n",
        entry='import { a } from "./a.js";\nimport { b } from "./b.js";\nexport function total() { return a() + b(); }\nexport default { total };\n',
    )
    text = bundle("entry.js", js)
    assert text.count("// --- c.js") == 1
    assert text.index("// --- c.js") < text.index("// --- a.js") < text.index("// --- entry.js")
    assert run_bundled(tmp_path, text, "total", [[]]) == [211]


@pytest.mark.parametrize(("modules", "message"), [
    ({"entry": 'import { x } from "./missing.js";\n'}, "no ES module"),
    ({"entry": 'import { a } from "./a.js";\n', "a": 'import { b } from "./entry.js";\nexport const a = 1;\n'}, "cycle"),
    ({"entry": 'import thing from "./a.js";\n', "a": "export const a = 1;\n"}, "only"),
    ({"entry": 'import { a } from "https://cdn.example/a.js";\n'}, "only"),
    ({"entry": 'import { a } from "./a.js";\n', "a": "export default 1;\n"}, "default export"),
    ({"entry": 'import { a } from "./a.js";\n', "a": "const a = 1;\nexport { a };\n"}, "only"),
])
def test_bundle_rejects_what_it_cannot_inline(tmp_path, modules, message):
    js = write_modules(tmp_path, **modules)
    with pytest.raises(ValueError, match=message):
        bundle("entry.js", js)


def test_every_explorer_module_bundles_and_parses(tmp_path):
    for cls in EXPLORERS:
        module = tmp_path / f"{cls.__name__}.mjs"
        module.write_text(cls._esm, encoding="utf-8")
        done = subprocess.run([node(), "--check", str(module)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
    assert base64.b64decode(ScalingExplorer().sample)  # the sample is valid base64


# --- today's models: the cache of four layouts, RoPE's scaling rules --------------------

def test_bundled_todays_models_module_reproduces_the_package(tmp_path):
    from attention_course.explorers import TodaysModelsExplorer

    vectors = build_vectors()["todays_models"]
    states = [{**case["state"], "presets": vectors["presets"]} for case in vectors["cases"]]
    results = run_bundled(tmp_path, TodaysModelsExplorer._esm, "computeTodaysModels", [[s] for s in states])
    for case, result in zip(vectors["cases"], results):
        assert result["cache"] == case["expected"]["cache"]  # integers and sentences: identical
        assert_close(result["rope"], case["expected"]["rope"], rtol=1e-12)


def test_todays_models_explorer_counts_every_published_cache_with_cache_bytes():
    from attention_course.chapters.todays_models import rescaled_pairs
    from attention_course.decoder import cache_bytes
    from attention_course.decoder.published import PUBLISHED_CONFIGS
    from attention_course.explorers import TodaysModelsExplorer

    for entry in PUBLISHED_CONFIGS:
        c = entry.config
        widget = TodaysModelsExplorer(entry.name)
        r = widget.numbers()
        rows = {row["name"]: row for row in r["cache"]["rows"]}
        own = rows[r["cache"]["own"]]
        assert own["per_token"] == cache_bytes(c, 1), entry.name
        assert own["total"] == cache_bytes(c, c.max_positions, keep_window=True), entry.name
        assert rows["MHA"]["total"] == cache_bytes(c, c.max_positions, keep_window=True, latent=False) * \
            (c.n_heads // c.n_kv_heads)
        assert rows["MQA"]["per_token"] * c.n_kv_heads == cache_bytes(c, 1, latent=False)
        rope = next(x for x, w in zip(c.ropes, c.windows) if x is not None and (w is None or None not in c.windows))
        pairs = rescaled_pairs(rope, c.rope_dim, seq_len=c.max_positions)
        assert (r["rope"]["kept"], r["rope"]["between"], r["rope"]["slowed"]) == (pairs.kept, pairs.between, pairs.slowed)
    deepseek = TodaysModelsExplorer()  # DeepSeek-V3: 61 layers of a 512 latent and a 64 RoPE key, bfloat16
    rows = {row["name"]: row for row in deepseek.numbers()["cache"]["rows"]}
    assert rows["MLA"]["per_token"] == 61 * (512 + 64) * 2 and rows["MHA"]["per_token"] == 61 * 128 * (192 + 128) * 2
    assert "MLA 70,272 B" in deepseek.summary() and "yarn x40" in deepseek.summary()
    llama = TodaysModelsExplorer("meta-llama/Llama-3.1-8B")  # no latent: DeepSeek-V2's 4 d and d / 2 stand in
    assert (llama.kv_lora_rank, llama.qk_rope_head_dim) == (512, 64)
    assert llama.numbers()["cache"]["own"] == "GQA"


def test_todays_models_explorer_counts_the_unturned_pairs_over_the_trained_and_the_whole_context():
    from attention_course.explorers import TodaysModelsExplorer

    counts = {}
    for name in ("deepseek-ai/DeepSeek-V3", "meta-llama/Llama-3.1-8B", "google/gemma-3-27b-it"):
        widget = TodaysModelsExplorer(name)
        rope = widget.numbers()["rope"]
        wavelength, ratio = np.array(rope["wavelength"]), np.array(rope["ratio"])
        assert rope["unturned_trained"] == (wavelength > widget.original_context).sum()
        assert rope["unturned_context"] == (wavelength / ratio > widget.context).sum()
        counts[name] = (rope["unturned_trained"], rope["unturned_context"], widget.original_context)
    assert counts["deepseek-ai/DeepSeek-V3"] == (9, 9, 4096)  # YaRN: as many as in training
    assert counts["meta-llama/Llama-3.1-8B"] == (29, 25, 8192)
    # Gemma 3's linear rule names no trained context: the context over the factor stands in
    assert counts["google/gemma-3-27b-it"][2] == 131072 // 8


def test_todays_models_explorer_refuses_what_cannot_be():
    from attention_course.explorers import TodaysModelsExplorer

    widget = TodaysModelsExplorer("meta-llama/Llama-3.1-8B")
    for name, value in (("rope_dim", 63), ("rope_dim", 2), ("factor", 0.5), ("rope_base", 1.0), ("context", 0),
                        ("window", -1), ("beta_slow", 0.0), ("mscale", -1.0), ("preset", "gpt-5")):
        with pytest.raises(traitlets.TraitError, match=name):
            setattr(widget, name, value)
    with pytest.raises(ValueError, match="preset must be one of"):
        TodaysModelsExplorer("gpt-5")
    widget.n_kv_heads = 5  # 32 query heads cannot share 5
    widget.high_freq_factor = 0.5  # below the low-frequency factor
    r = widget.numbers()
    assert "multiple" in r["cache"]["error"] and "high-frequency" in r["rope"]["error"]
    assert "multiple" in widget.summary()


def test_frontier_explorer_keeps_the_indexer_s_best_keys_and_counts_with_cache_bytes():
    from attention_course.chapters.without_all_scores import COST_MODELS, top_k_loss
    from attention_course.core.sparse import top_k_mask
    from attention_course.decoder.cache import cache_bytes
    from attention_course.decoder.published import published_config

    widget = FrontierExplorer()
    numbers = widget.summary_numbers()
    assert numbers["kept"] == [1, 3]  # "card" and "blocked", as the chapter's indexer keeps them
    bank_scores = np.array([widget.sequences[0]["scores"]])  # (1, n_k): the chapter's indexer
    expected = top_k_loss(BANK_BOT.query[None], BANK_BOT.keys, BANK_BOT.values, bank_scores, [2]).dropped_mass[0]
    assert numbers["dropped_mass"] == pytest.approx(expected, rel=1e-12)
    assert "keeps card, blocked" in widget.summary() and f"{expected:.3f}" in widget.summary()
    widget.sequence, widget.k = "longer", 3
    scores = np.array(widget.sequences[1]["scores"])
    assert widget.summary_numbers()["kept"] == np.flatnonzero(top_k_mask(scores[None], 3, causal=False)[0]).tolist()
    for label, name in COST_MODELS.items():
        widget.preset, widget.seq_len = label, 100_000
        assert widget.summary_numbers()["total"] == cache_bytes(published_config(name), 100_000, "bfloat16",
                                                                keep_window=True)
    with pytest.raises(traitlets.TraitError, match="k must be between 1 and 24"):
        widget.k = 25
    with pytest.raises(traitlets.TraitError, match="seq_len"):
        widget.seq_len = 0
    with pytest.raises(traitlets.TraitError, match="preset"):
        widget.preset = "MiniMax-M2"
