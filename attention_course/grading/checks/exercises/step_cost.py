"""Checks for exercise 13: a decoding step's FLOPs and bytes counted from a configuration, and its intensity.

The references are the package's `chapters.roofline.attention_cost` and
`step_cost` (book/generating_cost.ipynb), called on a layout built from the
case's plain fields. Each mistake is the same count rebuilt from the
package's pieces (`AttentionLayout`'s sizes, `DecoderShape`'s weights,
`attention_cost`) with one thing counted wrong, so a hint is given only when
the student's numbers are exactly what that mistake gives.

Counts are compared exactly: a count is a whole number, and a tolerance
that scales with it would let a wrong count of a large model pass.
"""

from __future__ import annotations

import numpy as np

from ....chapters.roofline import AttentionLayout, DecoderShape, attention_cost, step_cost
from ....decoder.cache import itemsize
from ..engine.calls import Observation
from ..engine.cases import Case, Rngs, format_value
from ..engine.code import Code
from ..engine.check import Check
from ..engine.mistakes import NOT_A_TUPLE, RETURNS_NONE, Mistake
from ..engine.results import CheckResult
from ..engine.run import check_in_process

ATTENTION_PARAMS = ("n_layers", "n_heads", "n_kv_heads", "head_dim", "kv_lora_rank", "qk_rope_head_dim", "context",
                    "dtype")
STEP_PARAMS = ("n_layers", "n_heads", "n_kv_heads", "head_dim", "d_model", "d_ff", "vocab_size", "context", "batch",
               "dtype")
ATTENTION_OUTPUTS = ("flops", "bytes")
STEP_OUTPUTS = ("flops", "bytes", "intensity")


def _layout(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank=0, qk_rope_head_dim=0) -> AttentionLayout:
    return AttentionLayout("exercise", n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim)


def attention_reference(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    """(flops, bytes) of attention in one decoding step after `context` cached tokens: `roofline.attention_cost`."""
    layout = _layout(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim)
    cost = attention_cost(layout, 1, context, dtype=dtype)
    return cost.flops, cost.bytes


def step_reference(n_layers, n_heads, n_kv_heads, head_dim, d_model, d_ff, vocab_size, context, batch, dtype):
    """(flops, bytes, intensity) of one decoding step of `batch` requests: `roofline.step_cost`'s total."""
    shape = DecoderShape(_layout(n_layers, n_heads, n_kv_heads, head_dim), d_model, d_ff, vocab_size)
    total = step_cost(shape, 1, context, batch=batch, dtype=dtype).total
    return total.flops, total.bytes, total.intensity


# --- the attention of one step, counted with one part changed ------------------------------------

def counted_attention(layout: AttentionLayout, context: int, size: int, *, cached=None, score=None, mix=None,
                      heads=None, keys=None, layers=None, read_by=1, written=True, queries_and_outputs=True,
                      flops_per_multiply_add=2) -> tuple[int, int]:
    """attention_cost's (flops, bytes) of one decoding step, rebuilt from the layout's sizes with one part changed.

    With every keyword at its default it equals `attention_cost(layout, 1,
    context)` (a test checks): the new token's query meets the context + 1
    keys (itself included), each query head does score + mix multiply-adds
    per key, and the step reads the cache once, writes the new token's
    cached numbers, reads the queries and writes the outputs.
    """
    c = layout
    cached = c.cached_per_token if cached is None else cached  # numbers one token caches in one layer
    score = c.score_size if score is None else score
    mix = c.mix_size if mix is None else mix
    heads = c.n_heads if heads is None else heads  # query heads that do the products
    keys = context + 1 if keys is None else keys  # the new token is appended first: it meets itself too
    layers = c.n_layers if layers is None else layers
    flops = layers * heads * keys * flops_per_multiply_add * (score + mix)
    numbers = (keys * cached * read_by  # the cache, read (once, or once per reader)
               + (cached if written else 0)  # the new token's keys and values, written
               + (c.n_heads * (score + mix) if queries_and_outputs else 0))  # queries read, outputs written
    return flops, layers * numbers * size


def _attention_mistake(**changes):
    """A prediction: the attention counted with `changes`, each a value or a function of (layout, context)."""
    def predict(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
        layout = _layout(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim)
        values = {k: (v(layout, context) if callable(v) else v) for k, v in changes.items()}
        if any(v is None for v in values.values()):
            return None  # the mistake cannot be made with this layout
        size = itemsize(dtype) * values.pop("size_factor", 1)
        return counted_attention(layout, context, size, **values)
    return predict


def _mha_only(f):
    """f(layout) for a layout that keeps per-head keys and values; None (no prediction) for MLA."""
    return lambda c, context: None if c.is_mla else f(c)


def _mla_only(f):
    """f(layout) for an MLA layout; None (no prediction) for the others."""
    return lambda c, context: f(c) if c.is_mla else None


def _shared(f):
    """f(layout) for a layout whose query heads share key/value heads (GQA, MQA, MLA); None for MHA."""
    return lambda c, context: f(c) if c.readers > 1 else None


def _one_layer_in(item: int):
    """A prediction: (flops, bytes) with item 0 (the FLOPs) or 1 (the bytes) counted for one layer, the other right."""
    def predict(n_layers, *rest):
        if n_layers < 2:
            return None  # one layer: nothing to forget
        right, one = attention_reference(n_layers, *rest), attention_reference(1, *rest)
        return tuple(one[k] if k == item else right[k] for k in range(2))
    return predict


def _only_for(dtype_name: str, predict):
    """A prediction that applies to inputs of one dtype (None, no prediction, for the others)."""
    return lambda *args: predict(*args) if args[-1] == dtype_name else None


BFLOAT16_HINT = ("The bytes are twice the expected for bfloat16, as if a bfloat16 number took 4 bytes, a float32's: "
                 "bfloat16 keeps float32's exponent and drops most of its mantissa, 16 bits in all, 2 bytes.")
FLOAT8_HINT = ("The bytes are twice the expected for float8_e4m3fn, as if its numbers took 2 bytes: a float8 number "
               "is 8 bits (4 of exponent, 3 of mantissa, a sign), 1 byte.")


def _step_with_floor_intensity(*args):
    """The step's counts, right, and their intensity as flops // bytes: a whole number."""
    flops, nbytes, _ = step_reference(*args)
    return flops, nbytes, flops // nbytes


def _latent_ignored(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context, dtype):
    """An MLA layout counted as one key/value head of head_dim: the latent and the rotary key left out."""
    if not kv_lora_rank:
        return None
    return attention_reference(n_layers, n_heads, n_kv_heads, head_dim, 0, 0, context, dtype)


KEYS_OR_VALUES_HINT = (
    "The cache was counted with half the numbers it holds: each token keeps a key AND a value in each key/value "
    "head, 2 x h_kv x d numbers per layer. Both are read at every step, and the query mixes the values after "
    "scoring the keys."
)
TRAFFIC_HINT = (
    "The FLOPs are right and the bytes are too few. Besides the cache it reads, the step writes the new token's "
    "keys and values into the cache, reads each query head's query and writes its output: count each of these."
)
ATTENTION_MISTAKES = (
    Mistake("keys_or_values_left_out", KEYS_OR_VALUES_HINT,
            _attention_mistake(cached=_mha_only(lambda c: c.cached_per_token // 2))),
    Mistake("keys_or_values_left_out", KEYS_OR_VALUES_HINT,
            _attention_mistake(cached=_mha_only(lambda c: c.cached_per_token // 2), mix=_mha_only(lambda c: 0))),
    Mistake("query_heads_for_the_cache",
            "The cache was counted with a key and a value for every QUERY head. Query heads share key/value heads "
            "(grouped-query, multi-query attention): the cache keeps h_kv heads, 2 x h_kv x d numbers per token "
            "and layer, which is the whole point of sharing them.",
            _attention_mistake(cached=_mha_only(lambda c: 2 * c.n_heads * c.head_dim if c.readers > 1 else None))),
    Mistake("cache_read_per_query_head",
            "The cache was counted as read once for each query head that uses it. The step reads each cached "
            "number from memory once; the query heads that share a key/value head (all of them, with a latent) "
            "each do their multiply-adds with it: that raises the FLOPs, not the bytes.",
            _attention_mistake(read_by=_shared(lambda c: c.readers))),
    Mistake("layers_forgotten",
            "The count is that of one layer: every layer has its own cache and its own attention, and the step "
            "runs all n_layers of them.",
            _attention_mistake(layers=lambda c, context: 1 if c.n_layers > 1 else None)),
    Mistake("bits_for_bytes",
            "The bytes are 8 times too many: the number in a type's name is its bits (16 in bfloat16, 8 in "
            "float8_e4m3fn), and a byte is 8 bits. A bfloat16 number takes 2 bytes.",
            _attention_mistake(size_factor=8)),
    Mistake("new_token_left_out",
            "The count is that of a step that meets only the context: the new token's key and value are "
            "appended before it attends, so its query meets context + 1 keys (itself included), and the step "
            "reads all of them.",
            _attention_mistake(keys=lambda c, context: context)),
    Mistake("traffic_left_out", TRAFFIC_HINT, _attention_mistake(written=False)),
    Mistake("traffic_left_out", TRAFFIC_HINT, _attention_mistake(queries_and_outputs=False)),
    Mistake("traffic_left_out", TRAFFIC_HINT, _attention_mistake(written=False, queries_and_outputs=False)),
    Mistake("multiply_adds_not_flops",
            "The FLOPs are half the expected: a multiply-add is 2 FLOPs, a multiplication and an addition.",
            _attention_mistake(flops_per_multiply_add=1)),
    Mistake("flops_per_key_value_head",
            "The FLOPs were counted once per key/value head: every QUERY head computes its own scores and its own "
            "mix of the values, so the products are done h_q times, whatever heads they share.",
            _attention_mistake(heads=_shared(lambda c: c.n_kv_heads))),
    Mistake("latent_ignored",
            "With a latent (kv_lora_rank > 0, MLA) each token caches its latent vector of kv_lora_rank numbers and "
            "one rotary key of qk_rope_head_dim numbers, shared by every head, not a key and a value of head_dim. "
            "Every query head scores those kv_lora_rank + qk_rope_head_dim numbers and mixes the kv_lora_rank of "
            "the latent.",
            _latent_ignored),
    Mistake("latent_rebuilt_per_head",
            "The latent was counted as the keys and values it is rebuilt into, one of each per query head. "
            "Generating, MLA caches and reads the latent itself (kv_lora_rank numbers) and the rotary key "
            "(qk_rope_head_dim) per token and layer: the projections that would rebuild keys and values are "
            "absorbed into the queries and the output, so every head scores and mixes the latent directly.",
            _attention_mistake(cached=_mla_only(lambda c: c.n_heads * (2 * c.head_dim + c.qk_rope_head_dim)),
                               score=_mla_only(lambda c: c.head_dim + c.qk_rope_head_dim),
                               mix=_mla_only(lambda c: c.head_dim))),
    Mistake("latent_counted_twice",
            "The latent was counted twice, as if it were a key and a value. It is one vector that serves "
            "both: a token caches kv_lora_rank + qk_rope_head_dim numbers per layer.",
            _attention_mistake(cached=_mla_only(lambda c: 2 * c.kv_lora_rank + c.qk_rope_head_dim))),
    Mistake("rotary_key_left_out",
            "The rotary key was left out: beside its latent, each token caches one key of qk_rope_head_dim numbers "
            "(shared by every head) that carries its position, and each head's score covers both, "
            "kv_lora_rank + qk_rope_head_dim numbers.",
            _attention_mistake(cached=_mla_only(lambda c: c.kv_lora_rank), score=_mla_only(lambda c: c.kv_lora_rank))),
    Mistake("rotary_key_mixed",
            "The values were counted as kv_lora_rank + qk_rope_head_dim numbers: the rotary key takes part in the "
            "scores only. Each head mixes the latent, kv_lora_rank numbers per key.",
            _attention_mistake(mix=_mla_only(lambda c: c.kv_lora_rank + c.qk_rope_head_dim))),
    Mistake("bfloat16_as_four_bytes", BFLOAT16_HINT, _only_for("bfloat16", _attention_mistake(size_factor=2))),
    Mistake("float8_as_two_bytes", FLOAT8_HINT, _only_for("float8_e4m3fn", _attention_mistake(size_factor=2))),
    Mistake("flops_of_one_layer",
            "The bytes are right and the FLOPs are those of one layer: every layer computes its own scores and "
            "its own mix of the values, so the products are done n_layers times.",
            _one_layer_in(0)),
    Mistake("bytes_of_one_layer",
            "The FLOPs are right and the bytes are those of one layer: every layer has its own cache, which the "
            "step reads and writes, and its own queries and outputs, so the traffic is n_layers times one "
            "layer's.",
            _one_layer_in(1)),
)


# --- the whole step, counted with one part changed -------------------------------------------------

def assembled_step(shape: DecoderShape, attention, batch: int, size: int, *, read=None, multiplied=None,
                   rows=None, flops_per_weight=2, weight_reads=1, attention_flops=None, attention_bytes=None,
                   bytes_factor=1) -> tuple[int, int, float]:
    """step_cost's (flops, bytes, intensity) of one decoding step, assembled with one part changed.

    `attention` is one request's attention_cost. With every keyword at its
    default it equals `step_cost(shape, 1, context, batch=batch)` (a test
    checks): every weight read once for the batch, each multiplied weight 2
    FLOPs per token, one embedding row per token, and each request's
    attention.
    """
    read = shape.weights if read is None else read  # numbers of the weights read
    multiplied = shape.products if multiplied is None else multiplied  # ... of those each token multiplies
    rows = batch * shape.d_model if rows is None else rows  # embedding numbers read
    flops = flops_per_weight * multiplied * batch + attention.flops * (batch if attention_flops is None else attention_flops)
    nbytes = ((read * weight_reads + rows) * size
              + attention.bytes * (batch if attention_bytes is None else attention_bytes)) * bytes_factor
    return flops, nbytes, flops / nbytes


def _step_mistake(make=None, **changes):
    """A prediction: the step assembled with `changes`; `make(shape, batch)` gives changes that need the shape."""
    def predict(n_layers, n_heads, n_kv_heads, head_dim, d_model, d_ff, vocab_size, context, batch, dtype):
        layout = _layout(n_layers, n_heads, n_kv_heads, head_dim)
        shape = DecoderShape(layout, d_model, d_ff, vocab_size)
        values = dict(changes, **(make(shape, batch) if make else {}))
        if any(v is None for v in values.values()):
            return None
        attention = values.pop("attention", None) or attention_cost(layout, 1, context, dtype=dtype)
        return assembled_step(shape, attention, batch, itemsize(dtype), **values)
    return predict


def _shape_with(shape: DecoderShape, **fields) -> DecoderShape:
    """The shape with some of its layout's fields changed (n_layers, n_kv_heads)."""
    c = shape.layout
    layout = AttentionLayout(c.name, fields.get("n_layers", c.n_layers), c.n_heads,
                             fields.get("n_kv_heads", c.n_kv_heads), c.head_dim)
    return DecoderShape(layout, shape.d_model, shape.d_ff, shape.vocab_size)


def _weights_changed(change):
    """Predicts a step whose weights were counted as `change(shape)` (another DecoderShape, or None)."""
    def make(shape, batch):
        other = change(shape)
        return {"read": None if other is None else other.weights,
                "multiplied": None if other is None else other.products}
    return make


def _one_layer(shape, batch):
    if shape.layout.n_layers == 1:
        return {"read": None}
    one = _shape_with(shape, n_layers=1)
    return {"read": one.weights, "multiplied": one.products}


def _only_feed_forward_two(shape, batch):
    ff = shape.layout.n_layers * shape.d_model * shape.d_ff  # one of the three feed-forward matrices, every layer
    return {"read": shape.weights - ff, "multiplied": shape.products - ff}


def _no_output_projection(shape, batch):
    lm_head = shape.d_model * shape.vocab_size
    return {"read": shape.weights - lm_head, "multiplied": shape.products - lm_head}


def _norms(shape):
    return shape.weights - shape.products  # the norms' numbers: read, never multiplied


def _one_layer_everything(n_layers, n_heads, n_kv_heads, head_dim, d_model, d_ff, vocab_size, context, batch, dtype):
    """The whole count for one layer: its weights and its attention."""
    if n_layers == 1:
        return None
    return step_reference(1, n_heads, n_kv_heads, head_dim, d_model, d_ff, vocab_size, context, batch, dtype)


CACHE_SHARED_HINT = (
    "The caches were counted once for the whole batch: each request has its own cache (its own tokens), read "
    "at every step for its own query, so its bytes and FLOPs count once per request. Only the weights are shared."
)
LAYERS_HINT = ATTENTION_MISTAKES[4].hint
STEP_MISTAKES = (
    Mistake("weights_left_out",
            "Only attention was counted. A decoding step runs the new token through every weight matrix of the "
            "model: it reads every weight (for the whole batch, once) and does a multiply-add with each one it "
            "multiplies, for each token.",
            _step_mistake(read=0, multiplied=0, rows=0)),
    Mistake("weights_read_per_request",
            "The weights were counted as read once per request. A step for a batch reads every weight once and "
            "multiplies it with each request's vector: that is why batching raises the weights' FLOPs per byte.",
            _step_mistake(make=lambda shape, batch: {"weight_reads": batch} if batch > 1 else {"read": None})),
    Mistake("cache_shared_by_the_batch", CACHE_SHARED_HINT,
            _step_mistake(make=lambda shape, batch: {"attention_bytes": 1} if batch > 1 else {"read": None})),
    Mistake("cache_shared_by_the_batch", CACHE_SHARED_HINT,
            _step_mistake(make=lambda shape, batch: {"attention_bytes": 1, "attention_flops": 1}
                          if batch > 1 else {"read": None})),
    Mistake("multiply_adds_not_flops",
            "The weights' FLOPs are half the expected: each multiplied weight does one multiply-add per token, "
            "and a multiply-add is 2 FLOPs.",
            _step_mistake(flops_per_weight=1)),
    Mistake("norms_multiplied",
            "The norms' weights were counted as multiplied (2 FLOPs each). A norm's weights scale the vector "
            "entry by entry: they are read, but only the matrices' weights do a multiply-add per token.",
            _step_mistake(make=lambda shape, batch: {"multiplied": shape.weights})),
    Mistake("norms_left_out",
            "The norms' weights were left out of the bytes: they do no multiply-add, but the step reads them "
            "(two per layer and a final one, d_model numbers each).",
            _step_mistake(make=lambda shape, batch: {"read": shape.products})),
    Mistake("embedding_table_read_whole",
            "The whole embedding table was counted as read. A step reads only the row of each token it "
            "embeds: d_model numbers per request.",
            _step_mistake(make=lambda shape, batch: {"rows": shape.vocab_size * shape.d_model})),
    Mistake("embedding_row_left_out",
            "The embedding rows were left out: each token's step starts by reading its row of the embedding table, "
            "d_model numbers per request.",
            _step_mistake(rows=0)),
    Mistake("output_projection_left_out",
            "The output projection was left out: after the last layer's norm, every token's vector is multiplied "
            "by a d_model x vocab_size matrix to give its logits, the largest single matrix of a small model.",
            _step_mistake(make=_no_output_projection)),
    Mistake("feed_forward_two_matrices",
            "The feed-forward layer was counted with two matrices: a SwiGLU layer has three, a gate and an up "
            "projection (d_model x d_ff each) and a down projection (d_ff x d_model).",
            _step_mistake(make=_only_feed_forward_two)),
    Mistake("query_heads_for_the_projections",
            "The key and value projections were counted with h_q heads: they give h_kv heads each, so W_k and W_v "
            "are d_model x (h_kv x d), smaller than W_q when heads are shared.",
            _step_mistake(make=_weights_changed(
                lambda shape: _shape_with(shape, n_kv_heads=shape.layout.n_heads)
                if shape.layout.readers > 1 else None))),
    Mistake("layers_forgotten", LAYERS_HINT, _step_mistake(make=_one_layer)),
    Mistake("layers_forgotten", LAYERS_HINT, _one_layer_everything),
    Mistake("bits_for_bytes", ATTENTION_MISTAKES[5].hint, _step_mistake(bytes_factor=8)),
    Mistake("bfloat16_as_four_bytes", BFLOAT16_HINT, _only_for("bfloat16", _step_mistake(bytes_factor=2))),
    Mistake("float8_as_two_bytes", FLOAT8_HINT, _only_for("float8_e4m3fn", _step_mistake(bytes_factor=2))),
    Mistake("intensity_floor_division",
            "The FLOPs and the bytes are right and the intensity is a whole number: floor division `//` dropped its "
            "fraction. The intensity is flops / bytes, a float.",
            _step_with_floor_intensity),
    Mistake("intensity_inverted",
            "FLOPs and bytes are right; the intensity is the other way round. Arithmetic intensity is FLOPs per "
            "byte: FLOPs divided by bytes.",
            lambda *args: (lambda f, b, i: (f, b, b / f))(*step_reference(*args))),
)


# --- comparing counts exactly ----------------------------------------------------------------------

def _number(value):
    """A returned item as a Python number, or None if it is not one number."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
        return value.item()
    return None


def _equal(expected, got) -> bool:
    """A count exactly, an intensity to 1e-6 of itself (float32 is graded by its type, not by its digits)."""
    if got is None or (isinstance(got, float) and not np.isfinite(got)):
        return False
    if isinstance(expected, float):
        return abs(got - expected) <= 1e-6 * abs(expected)
    return got == expected


def _same(expected: tuple, got) -> bool:
    return (isinstance(got, tuple) and len(got) == len(expected)
            and all(_equal(e, _number(g)) for e, g in zip(expected, got)))


def _plain(value):
    """A reference or a prediction (arrays from `as_plain`) as a tuple of Python numbers, or None."""
    return None if value is None else tuple(_number(v) for v in value)


def _comparison(names: tuple[str, ...], mistakes: tuple[Mistake, ...]):
    """The check's comparison: counts exactly, the intensity to 1e-6; the mistake whose prediction is exactly got."""
    def compare(case: Case, expected, got, predictions: dict):
        want = _plain(expected)
        if _same(want, got):
            return None
        if got is None:
            return f"expected a tuple ({', '.join(names)}), got None", RETURNS_NONE
        if not isinstance(got, tuple):
            return f"expected a tuple ({', '.join(names)}), got {format_value(got)}", NOT_A_TUPLE
        if len(got) != len(names):
            return f"expected a tuple of {len(names)} ({', '.join(names)}), got a tuple of {len(got)}", None
        for name, g in zip(names, got):
            if _number(g) is None:
                return f"{name}: expected one number, got {format_value(g)}", None
        wrong = [(n, w, _number(g)) for n, w, g in zip(names, want, got) if not _equal(w, _number(g))]
        right = [n for n, w, g in zip(names, want, got) if _equal(w, _number(g))]
        message = "; ".join(f"{n}: expected {_shown(w)}, got {_shown(g)}{_ratio(w, g)}" for n, w, g in wrong)
        if right:
            message += f" ({' and '.join(right)} right)"
        for position, mistake in enumerate(mistakes):
            predicted = predictions.get(position)
            if predicted is not None and _same(_plain(predicted), got):
                return message, mistake
        return message, None
    return compare


def _shown(x) -> str:
    """A count with its thousands separated (12,345), any other number to 6 digits."""
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:,.1f}" if np.isfinite(x) and float(x).is_integer() and abs(x) < 1e15 else f"{x:.6g}"


def _ratio(want, got) -> str:
    """How many times the expected number came back, when it is not about 1."""
    if not want or not np.isfinite(got) or not got:
        return ""
    r = got / want
    return f" ({r:.4g} times the expected)" if abs(r - 1) > 1e-3 else ""


def _expected_text(names):
    """The expected numbers in words: "flops = 1,234, bytes = 5,678"."""
    def text(case: Case, expected) -> str:
        return ", ".join(f"{n} = {_shown(v)}" for n, v in zip(names, _plain(expected)))
    return text


COUNTS_NOT_INTEGERS = Mistake(
    "counts_not_integers",
    "The values are right, but a count came back as a float: FLOPs and bytes are whole numbers, to be returned "
    "as int (a NumPy integer is fine too). A `/` division, or a factor written as a float (2.0, 1e9), turns a "
    "count into a float.",
)
INTENSITY_NOT_A_FLOAT = Mistake(
    "intensity_not_a_float",
    "The values are right, but the intensity is not a Python float (float64): divide the counts as they are, "
    "flops / bytes. A float32 keeps only about 7 digits, and `//` gives a whole number.",
)


def _types(case: Case, obs: Observation):
    """The counts must be integers, the intensity a float64 (the values are right when this runs)."""
    value = obs.value
    counts = [v for v in value[:2] if v.dtype.kind not in "iu"]
    if counts:
        return f"right values, but a count came back as {counts[0].dtype} (expected an integer)", COUNTS_NOT_INTEGERS
    if len(value) == 3 and value[2].dtype != np.float64:
        kind = "an integer" if value[2].dtype.kind in "iu" else value[2].dtype  # a Python int reads as int64
        return (f"right values, but the intensity came back as {kind} (expected float64, a Python float)",
                INTENSITY_NOT_A_FLOAT)
    return None


def _error_hint(case: Case, error: str, code: Code) -> str:
    dtype = case.args[-1]
    if error.startswith(("KeyError", "TypeError")) and (repr(dtype) in error or f"'{dtype}'" in error):
        return (f"The dtype given was {dtype!r}. A number of a NumPy type takes np.dtype(name).itemsize bytes; "
                "bfloat16 (2 bytes) and float8_e4m3fn (1 byte) are types NumPy does not name.")
    return ""


# --- the inputs --------------------------------------------------------------------------------------

DTYPES = ("float32", "bfloat16", "float16", "float8_e4m3fn", "int8")


def _attention_cases(rngs: Rngs) -> list[Case]:
    rng = rngs(13)

    def draw(kind: str) -> tuple:
        """A random layout of this kind (fields in ATTENTION_PARAMS order), context and dtype."""
        n_layers, g, d = int(rng.integers(3, 8)), int(rng.integers(3, 6)), int(rng.choice([8, 16, 32]))
        context, dtype = int(rng.integers(1, 200)), str(rng.choice(DTYPES))
        if kind == "MLA":
            h, r, rope = int(rng.integers(2, 9)), int(rng.choice([16, 32, 64])), int(rng.choice([4, 8, 16]))
            return (n_layers, h, 1, d, r, rope, context, dtype)
        h_kv = {"MHA": int(rng.integers(2, 5)), "GQA": int(rng.integers(2, 4)), "MQA": 1}[kind]
        h = h_kv if kind == "MHA" else h_kv * g
        return (n_layers, h, h_kv, d, 0, 0, context, dtype)

    return [
        Case("multi-head: 3 layers of 4 heads of 8, 10 cached tokens, float32", (3, 4, 4, 8, 0, 0, 10, "float32")),
        Case("grouped-query: 4 layers, 8 query heads sharing 2 key/value heads, bfloat16",
             (4, 8, 2, 16, 0, 0, 20, "bfloat16")),
        Case("multi-query: 3 layers, 6 query heads sharing one key/value head, int8",
             (3, 6, 1, 8, 0, 0, 7, "int8")),
        Case("latent (MLA): 4 heads read a latent of 32 and a rotary key of 8, float8",
             (3, 4, 1, 16, 32, 8, 12, "float8_e4m3fn")),
        Case("the first token: an empty cache, 5 layers of grouped-query attention, float64",
             (5, 6, 2, 8, 0, 0, 0, "float64")),
        Case("Llama 3 8B's attention (32 layers, 32 query heads sharing 8 of 128) at 131,072 tokens, float16: "
             "counts past 2**31", (32, 32, 8, 128, 0, 0, 131_071, "float16")),
        Case("multi-head, other sizes", draw("MHA"), hidden=True),
        Case("grouped-query, other sizes", draw("GQA"), hidden=True),
        Case("multi-query, other sizes", draw("MQA"), hidden=True),
        Case("latent (MLA), other sizes", draw("MLA"), hidden=True),
        Case("DeepSeek-V3's attention (61 layers, 128 heads, a latent of 512 and a rotary key of 64) at "
             "4,096 tokens", (61, 128, 1, 128, 512, 64, 4095, "bfloat16"), hidden=True),
    ] + _assumption_cases_attention(rngs)


def _assumption_cases_attention(rngs: Rngs) -> list[Case]:
    """Inputs that break what a count could silently assume."""
    rng = rngs(131)
    n_layers, context = int(rng.integers(30, 80)), int(rng.integers(100_000, 130_000))
    return [
        # counts past 2**31: arithmetic in 32-bit integers wraps around
        Case("a long context: 128 query heads sharing 8, more than 100,000 tokens, float32",
             (n_layers, 128, 8, 128, 0, 0, context, "float32"), hidden=True),
        # a type of 8 bytes, which no table of the usual storage types holds
        Case("float64, grouped-query", (int(rng.integers(3, 6)), 9, 3, 8, 0, 0, int(rng.integers(5, 50)), "float64"),
             hidden=True),
    ]


def _step_cases(rngs: Rngs) -> list[Case]:
    rng = rngs(132)

    def draw(h_kv: int, g: int, batch: int) -> tuple:
        d = int(rng.choice([8, 16]))
        h = h_kv * g
        d_model = h * d + int(rng.choice([0, 8, 16]))
        return (int(rng.integers(2, 6)), h, h_kv, d, d_model, int(rng.integers(2, 5)) * d_model,
                int(rng.integers(50, 500)), int(rng.integers(1, 300)), batch, str(rng.choice(DTYPES)))

    return [
        Case("grouped-query: 2 layers, 4 query heads sharing 2, one request, bfloat16",
             (2, 4, 2, 8, 32, 64, 100, 16, 1, "bfloat16")),
        Case("a batch of 4 requests: multi-head, 3 layers, float32", (3, 2, 2, 8, 16, 48, 50, 9, 4, "float32")),
        Case("multi-query, a batch of 2, int8", (2, 6, 1, 4, 24, 64, 40, 30, 2, "int8")),
        Case("d_model = 40, not h_q x d = 32 (head_dim is set apart, as in Qwen3 and Gemma 3), float16",
             (2, 4, 2, 8, 40, 96, 64, 5, 1, "float16")),
        Case("the first token of 3 requests: an empty cache, float8", (3, 4, 4, 4, 16, 32, 30, 0, 3, "float8_e4m3fn")),
        Case("grouped-query, a batch of 8, other sizes", draw(2, 4, 8), hidden=True),
        Case("multi-query, one request, other sizes", draw(1, 6, 1), hidden=True),
        Case("multi-head, a batch of 3, other sizes", draw(3, 1, 3), hidden=True),
        Case("Llama 3 8B at 4,096 tokens, 16 requests", (32, 32, 8, 128, 4096, 14336, 128256, 4096, 16, "bfloat16"),
             hidden=True),
    ] + _assumption_cases_step(rngs)


def _assumption_cases_step(rngs: Rngs) -> list[Case]:
    """Inputs that break what a step's count could silently assume."""
    rng = rngs(133)
    h, d = 8, int(rng.choice([16, 32]))
    return [
        # d_model != h_q * d: W_q and W_o are d_model x (h_q d), not d_model x d_model
        Case("d_model larger than h_q x d, grouped-query, a batch of 2",
             (int(rng.integers(2, 5)), h, 2, d, h * d + 64, 4 * h * d, int(rng.integers(100, 300)),
              int(rng.integers(10, 100)), 2, "bfloat16"), hidden=True),
    ]


DECODE_ATTENTION_COST = Check(
    name="decode_attention_cost",
    function="decode_attention_cost",
    params=ATTENTION_PARAMS,
    reference=attention_reference,
    make_cases=_attention_cases,
    mistakes=ATTENTION_MISTAKES,
    output_names=ATTENTION_OUTPUTS,
    compare=_comparison(ATTENTION_OUTPUTS, ATTENTION_MISTAKES),
    weighed=True,
    expected_text=_expected_text(ATTENTION_OUTPUTS),
    after_pass=_types,
    error_hint=_error_hint,
)


def check_decode_attention_cost(decode_attention_cost, *, hidden: bool = False) -> CheckResult:
    """Check `decode_attention_cost(n_layers, n_heads, n_kv_heads, head_dim, kv_lora_rank, qk_rope_head_dim, context,
    dtype) -> (flops, bytes)`: attention in one decoding step after `context` cached tokens, every layer.

    The exercise 13_decode_step_cost (book/generating_cost.ipynb).
    """
    return check_in_process(DECODE_ATTENTION_COST, decode_attention_cost, hidden=hidden)


DECODE_STEP_COST = Check(
    name="decode_step_cost",
    function="decode_step_cost",
    params=STEP_PARAMS,
    reference=step_reference,
    make_cases=_step_cases,
    mistakes=STEP_MISTAKES,
    output_names=STEP_OUTPUTS,
    compare=_comparison(STEP_OUTPUTS, STEP_MISTAKES),
    weighed=True,
    expected_text=_expected_text(STEP_OUTPUTS),
    after_pass=_types,
    error_hint=_error_hint,
    helpers={"decode_attention_cost": attention_reference},
)


def check_decode_step_cost(decode_step_cost, *, hidden: bool = False) -> CheckResult:
    """Check `decode_step_cost(n_layers, n_heads, n_kv_heads, head_dim, d_model, d_ff, vocab_size, context, batch,
    dtype) -> (flops, bytes, intensity)`: one decoding step of `batch` requests, weights and caches.

    The exercise 13_decode_step_cost (book/generating_cost.ipynb).
    """
    return check_in_process(DECODE_STEP_COST, decode_step_cost, hidden=hidden)


CHECKS = {c.name: c for c in (DECODE_ATTENTION_COST, DECODE_STEP_COST)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""
