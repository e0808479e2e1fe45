"""Test vectors for the explorers: states in, the package's numbers out.

Both sides check against them: tests/test_explorers.py compares them with
what the JavaScript computes (node runs the bundled modules), and
tests/js/explorers.test.mjs (`node --test tests/js`) compares the unbundled
modules with the committed copy, tests/js/vectors.json. A test fails if that
copy no longer equals what the package computes; rewrite it with

    .venv/bin/python tests/explorer_vectors.py
"""

from __future__ import annotations

import json
import math
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np

from attention_course.chapters.roofline import Ceilings
from attention_course.explorers import (
    CostExplorer, KVCacheExplorer, MaskExplorer, PositionsExplorer, RooflineExplorer, ScalingExplorer, ScoresExplorer,
    TodaysModelsExplorer,
)
from attention_course.explorers.cost import compute_cost
from attention_course.explorers.frontier import FrontierExplorer, compute_frontier
from attention_course.explorers.kv_cache import kv_cache_summary
from attention_course.explorers.masking import compute_masks
from attention_course.explorers.positions import compute_positions
from attention_course.explorers.roofline import compute_roofline
from attention_course.explorers.scaling import scaling_stats
from attention_course.explorers.scores import compute_scores
from attention_course.explorers.todays_models import PRESETS, compute_todays_models

VECTORS_PATH = Path(__file__).parent / "js" / "vectors.json"


def js_fixed(x: float, decimals: int) -> str:
    """What the explorers' `fixed(x, decimals)` prints (Number.prototype.toFixed: ties away from zero)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0:
        x = 0.0  # toFixed prints -0 as "0.00"
    return str(Decimal(x).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


def js_bytes_text(x: int) -> str:
    """What the explorers' `bytesText` prints: binary prefixes, two decimals (1536 -> "1.50 KiB")."""
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    i, v = 0, float(x)
    while v >= 1024 and i < len(units) - 1:
        v /= 1024
        i += 1
    return f"{int(v)} B" if i == 0 else f"{js_fixed(v, 2)} {units[i]}"


def js_weight_text(w: float, decimals: int = 3) -> str:
    """What `weightText` prints: exactly 0 as "0"."""
    return "0" if w == 0 else js_fixed(w, decimals)


def to_json(value):
    """NumPy values as JSON-ready Python values; infinities and NaN as strings (JSON has none)."""
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_json(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        x = float(value)
        return x if math.isfinite(x) else ("NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity"))
    return value


def scores_cases() -> list[dict]:
    """ScoresExplorer states and their traces (steps 2 to 5) by the package."""
    edits = [
        {},  # the bank-bot example: weights 0.064, 0.782, 0.048, 0.106
        {"d_k": 16},
        {"d_k": 1, "query": [0.5, -1.0, 2.0, 3.0]},
        {"source": "scores", "scores": [1.0, 6.0, 0.4, 2.0]},  # typed by hand, equal to K q
        {"source": "scores", "scores": [2000.0, 0.0, -5.0, 1999.0]},  # exp overflows, the weights do not
        {"source": "scores", "scores": [0.0, 0.0, 0.0, 0.0]},  # uniform
        {"source": "scores", "scores": [-1000.0, -1000.0, -999.0, -1001.0], "d_k": 9},
    ]
    cases = []
    for edit in edits:
        widget = ScoresExplorer()
        for name, value in edit.items():
            setattr(widget, name, value)
        trace = compute_scores(widget.state())
        cases.append({
            "state": widget.state(),
            "expected": {
                "raw": trace.scores, "scale": trace.scale, "scaled": trace.scaled_scores,
                "exponentials": trace.exponentials, "expSum": trace.exp_sum, "weights": trace.weights,
                "weightSum": float(trace.weights.sum()), "output": trace.output,
            },
        })
    return cases


def masks_cases() -> list[dict]:
    """MaskExplorer states and their masks and weights by the package."""
    cases = []
    for causal in (False, True):
        for padding in (False, True):
            for n_real in (4, 2, 0):  # 0: with the padding mask every row is fully masked -> zeros
                if n_real != 4 and not padding:
                    continue
                state = {**MaskExplorer(causal=causal, padding=padding).state(), "n_real": n_real}
                allowed, weights = compute_masks(state)
                cases.append({"state": state, "expected": {"allowed": allowed, "weights": weights}})
    return cases


def scaling_cases() -> tuple[dict, list[dict]]:
    """The default sample and, for several d_k, its statistics by the package, scaled and unscaled.

    The statistics cover all 16 x 16 scores; the scores and weights themselves
    are kept for query 1 only, to keep the file small.
    """
    widget = ScalingExplorer()
    queries, keys = widget.vectors()
    sample_state = {k: v for k, v in widget.state().items() if k not in ("d_k", "scaled")}
    cases = []
    for d_k in (1, 2, 4, 64, 128, 511, 512):
        expected = {}
        for name, scaled in (("unscaled", False), ("scaled", True)):
            s = scaling_stats(queries, keys, d_k, scaled)
            expected[name] = {"spread": s["spread"], "maxWeight": s["max_weight"], "entropy": s["entropy"],
                              "scores0": s["scores"][0], "weights0": s["weights"][0]}  # row 0: query 1, drawn as bars
        cases.append({"d_k": d_k, "expected": expected})
    decoded = {"queries_first": queries[0, :8], "keys_last": keys[-1, -8:]}
    return {"state": sample_state, "decoded": decoded}, cases


def cost_cases() -> list[dict]:
    """CostExplorer states and their counts by attention_course.chapters.cost."""
    settings = [
        (1024, 64, "float32", 128),
        (1, 1, "float16", 128),  # one token, one tile smaller than the tile size
        (1000, 96, "float64", 128),  # n not a multiple of the tile size
        (4096, 128, "float16", 64),
        (2**20, 2**10, "float32", 128),  # the largest state offered: every count still exact
    ]
    cases = []
    for n, d, dtype, block in settings:
        state = CostExplorer(n=n, d=d, dtype=dtype, block_size=block).state()
        c = compute_cost(state)
        cases.append({
            "state": state,
            "expected": {"flops": c["flops"], "plainScoreBytes": c["plain_score_bytes"],
                         "tiledScoreBytes": c["tiled_score_bytes"], "tilePairs": c["tile_pairs"], "ioBytes": c["io_bytes"]},
        })
    return cases


def positions_cases() -> list[dict]:
    """PositionsExplorer states and every number it shows, by the package."""
    edits = [
        {},  # "blocked" at 3, "card" at 1, RoPE with base 10000
        {"m": 53, "n": 51},  # both moved by 50: the same score
        {"m": 1, "n": 1},  # distance 0
        {"m": 0, "n": 0},  # nothing rotated
        {"m": 2, "n": 90, "base": 500000.0},  # the key after the query; Llama 3's base
        {"m": 100, "n": 0, "base": 2.5},
        {"method": "alibi"},
        {"method": "alibi", "head": 7, "m": 80, "n": 17},
        {"method": "alibi", "n_heads": 12, "head": 10, "m": 5, "n": 9},  # a head count that is not a power of two
    ]
    cases = []
    for edit in edits:
        widget = PositionsExplorer()
        for name in ("n_heads", *edit):  # n_heads first: it bounds head
            if name in edit:
                setattr(widget, name, edit[name])
        state = widget.state()
        cases.append({"state": state, "expected": compute_positions(state)})
    return cases


def kv_cache_cases() -> list[dict]:
    """KVCacheExplorer states (every published configuration, and edits of them) and their counts by the package."""
    states = [KVCacheExplorer(p["name"]).state() for p in KVCacheExplorer().presets]
    edits = [
        {"dtype": "float32", "batch": 8},
        {"n_kv_heads": 32},  # multi-head: nothing saved
        {"n_kv_heads": 1, "dtype": "float8_e4m3fn"},  # multi-query
        {"window": 4096, "seq_len": 100000},  # a sliding window keeps window - 1 tokens
        {"window": 4096, "seq_len": 1000},  # ... but never more than the context
        {"seq_len": 1},
        {"n_layers": 256, "n_heads": 256, "n_kv_heads": 128, "head_dim": 256, "seq_len": 2**20, "batch": 32,
         "dtype": "float32"},  # the largest state offered: 2**51 bytes, 2**52 for multi-head: exact
    ]
    states += [{**KVCacheExplorer().state(), **edit, "preset": "custom"} for edit in edits]
    cases = []
    for state in states:
        r = kv_cache_summary(state)
        cases.append({"state": state, "expected": {
            "perToken": r["per_token"], "tokensKept": r["tokens_kept"], "total": r["total"], "mhaTotal": r["mha_total"],
            "groups": r["groups"], "heads": r["heads"]}})
    return cases


TEST_CEILINGS = Ceilings(bandwidth=12.5e9, flops=80e9)
"""Ceilings for the roofline's test states: fixed numbers, so that the vectors do not depend on the machine."""


def roofline_state(**edits) -> dict:
    """A RooflineExplorer state at TEST_CEILINGS, with `edits`."""
    return {**RooflineExplorer(TEST_CEILINGS).state(), **edits}


def roofline_expected(state: dict) -> dict:
    """compute_roofline's numbers under the names the JavaScript uses."""
    r = compute_roofline(state)
    rename = {"cache_bytes": "cacheBytes", "weight_bytes": "weightBytes"}
    return {"ridge": r["ridge"], **{phase: {rename.get(k, k): v for k, v in r[phase].items()} for phase in ("prefill", "decode")}}


def roofline_cases() -> list[dict]:
    """RooflineExplorer states (every layout and dtype, batches, the extremes) and their counts by the package."""
    edits = [{}]
    edits += [{"head_layout": name, "dtype": dtype} for name in ("MHA", "GQA", "MQA", "MLA")
              for dtype in ("bfloat16", "float32", "float8_e4m3fn")]
    edits += [{"batch": 64}, {"batch": 256, "head_layout": "MHA"}, {"context": 1}, {"context": 7, "batch": 3},
              {"context": 2**17, "batch": 256, "head_layout": "MLA", "dtype": "float32"},  # the largest state offered
              {"bandwidth": 1e12, "flops": 1e15}]  # a GPU-like ridge: 1000 FLOPs per byte
    return [{"state": (state := roofline_state(**edit)), "expected": roofline_expected(state)} for edit in edits]


def todays_models_cases() -> list[dict]:
    """TodaysModelsExplorer states (every published configuration, every RoPE rule, the extremes, the impossible)
    and what the package computes for them."""
    states = [TodaysModelsExplorer(p["name"]).state() for p in PRESETS]
    llama = TodaysModelsExplorer("meta-llama/Llama-3.1-8B").state()
    gemma = TodaysModelsExplorer("google/gemma-3-27b-it").state()
    edits = [
        (llama, {"dtype": "float32"}), (llama, {"dtype": "float8_e4m3fn", "context": 1}),
        (gemma, {"context": 2**20}),  # 52 of 62 layers keep 1,023 tokens
        (gemma, {"window": 1}),  # a window of one token keeps nothing
        (gemma, {"window": 4096, "context": 1000}),  # a window longer than the context keeps all of it
        (llama, {"rope_type": "default"}), (llama, {"rope_type": "linear", "factor": 2.5}),
        (llama, {"rope_type": "dynamic", "factor": 4.0, "original_context": 4096, "context": 32768}),
        (llama, {"rope_type": "dynamic", "factor": 4.0, "original_context": 4096, "context": 1000}),  # not past: plain
        (llama, {"low_freq_factor": 2.0, "high_freq_factor": 8.0, "original_context": 2048}),
        (llama, {"rope_type": "yarn", "truncate": False, "mscale": 0.707, "mscale_all_dim": 1.0}),
        (llama, {"rope_type": "yarn", "beta_fast": 8.0, "beta_slow": 0.5, "mscale": 0.0, "mscale_all_dim": 0.0}),
        (llama, {"rope_dim": 4, "rope_base": 1e12, "factor": 1024.0, "rope_type": "yarn"}),
        (llama, {"n_kv_heads": 5}), (llama, {"qk_rope_head_dim": 129}), (llama, {"sliding_layers": 33, "window": 8}),
        (llama, {"high_freq_factor": 1.0}), (llama, {"rope_type": "yarn", "beta_fast": 1.0}),  # impossible
        (llama, {"n_layers": 256, "n_heads": 256, "n_kv_heads": 256, "head_dim": 1024, "v_head_dim": 1024,
                 "kv_lora_rank": 4096, "qk_rope_head_dim": 1024, "context": 2**20,
                 "dtype": "float32"}),  # the largest state offered: 2**49 bytes for MHA, exact
    ]
    states += [{**state, **edit, "preset": "custom"} for state, edit in edits]
    return [{"state": state, "expected": todays_models_expected(state)} for state in states]


def todays_models_vectors() -> dict:
    """The cases of `todays_models_cases` with the presets, which every state carries, stored once."""
    cases = todays_models_cases()
    for case in cases:
        assert case["state"].pop("presets") == list(PRESETS)
    return {"presets": list(PRESETS), "cases": cases}


def todays_models_expected(state: dict) -> dict:
    """compute_todays_models's numbers; of RoPE's arrays only each pair's frequency after the rule divided by
    before (the frequencies follow from it and the base), to keep the file small."""
    r = compute_todays_models(state)
    rope = {k: v for k, v in r["rope"].items() if k not in ("theta", "scaled", "wavelength")}
    return {"cache": r["cache"], "rope": rope}


def frontier_vectors() -> dict:
    """FrontierExplorer states (every k of the bank bot, several of the longer sequence, every published
    configuration, the context's extremes and a chunk's edges) and what the package computes for them; the
    sequences and presets, which every state carries, stored once."""
    base = FrontierExplorer().state()
    edits = [{"k": k} for k in (1, 2, 3, 4)]
    edits += [{"sequence": "longer", "k": k} for k in (1, 3, 6, 12, 24)]
    edits += [{"preset": p["name"]} for p in base["presets"]]
    edits += [{"preset": "Llama 4 Scout", "seq_len": n} for n in (1, 8191, 8192, 8193, 100_000)]
    edits += [{"preset": "GLM-5", "seq_len": 2**20}, {"preset": "Kimi Linear 48B", "seq_len": 1}]  # the extremes
    cases = []
    for edit in edits:
        state = {**base, **edit}
        r = compute_frontier(state)
        expected = {"kept": r["kept"], "droppedMass": r["dropped_mass"], "sparseWeights": r["sparse_weights"],
                    "rows": r["rows"], "stateBytes": r["state_bytes"], "cacheBytes": r["cache_bytes"],
                    "total": r["total"], "crossover": r["crossover"]}
        cases.append({"state": {k: v for k, v in state.items() if k not in ("sequences", "presets")},
                      "expected": expected})
    return {"sequences": base["sequences"], "presets": base["presets"], "cases": cases}


def bytes_cases() -> list[dict]:
    """Byte counts and how `bytesText` must print them."""
    xs = [0, 1, 1023, 1024, 1536, 131072, 2**30 - 1, 2**30, 5 * 2**40 + 2**39, 2**53]
    return [{"x": x, "text": js_bytes_text(x)} for x in xs]


def format_cases() -> list[dict]:
    """Numbers and how `fixed` must print them: ties, tiny negatives, infinities."""
    xs = [0.0, -0.0, 0.125, -0.125, 0.375, 2.675, 1.005, 0.0645, 25.6745, -0.0001, 1e-7, 123456.789,
          20.085536923187668, math.inf, -math.inf]
    return [{"x": x, "decimals": d, "text": js_fixed(x, d)} for x in xs for d in (0, 2, 3)]


def build_vectors() -> dict:
    """All test vectors, JSON-ready."""
    sample, scaling = scaling_cases()
    return to_json({
        "scores": scores_cases(), "masks": masks_cases(), "scaling_sample": sample, "scaling": scaling,
        "cost": cost_cases(), "positions": positions_cases(), "kv_cache": kv_cache_cases(), "roofline": roofline_cases(),
        "todays_models": todays_models_vectors(), "frontier": frontier_vectors(),
        "format": format_cases(), "bytes": bytes_cases(),
    })


def from_json(value):
    """Inverse of `to_json` for numbers: "Infinity" -> inf and so on."""
    if isinstance(value, dict):
        return {k: from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_json(v) for v in value]
    if value in ("Infinity", "-Infinity", "NaN"):
        return float(value.replace("Infinity", "inf"))
    return value


if __name__ == "__main__":
    VECTORS_PATH.write_text(json.dumps(build_vectors(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {VECTORS_PATH}")
