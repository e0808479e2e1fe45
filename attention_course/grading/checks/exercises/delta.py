"""Checks for exercise 15: one step of the gated delta rule, and the same over a chunk of tokens.

The references are the package's own: `core.delta_rule.delta_rule_step` for
one token and `core.delta_rule.gated_delta_rule` for a chunk, fed with the
query and key normalised by `core.delta_rule.l2_normalize` and the decay a
given as its log. The state is stored as the package stores it, (d_k, d_v):

    S_t = a_t (I - b_t k_t k_t^T) S_{t-1} + b_t k_t v_t^T,      o_t = S_t^T q_t

(the transpose of the paper's S_t = a_t S_{t-1} (I - b_t k_t k_t^T) + b_t v_t k_t^T,
whose S is (d_v, d_k)). Each mistake is the step rebuilt with one part
changed (`step`), so a hint is given only when the student's arrays are what
that mistake returns.
"""

from __future__ import annotations

import math

import numpy as np

from ....core.delta_rule import delta_rule_step, gated_delta_rule, l2_normalize
from ..engine.cases import Case, Rngs, generated
from ..engine.check import Check
from ..engine.code import Code
from ..engine.mistakes import Mistake
from ..engine.results import CheckResult
from ..engine.run import check_in_process
from ..engine.shrink import Sizes

STEP_PARAMS = ("S", "q", "k", "v", "a", "b")
OUTPUT_NAMES = ("o", "S")
EPS = 1e-6
"""What the normalisation adds to the squared length: x / sqrt(sum(x^2) + 1e-6), `l2_normalize`'s default."""


def _dtype(*arrays) -> np.dtype:
    """The floating dtype of the arrays (float32 stays float32)."""
    return np.result_type(*(np.asarray(a) for a in arrays if isinstance(a, np.ndarray)))


def step_reference(S, q, k, v, a, b):
    """(o (d_v,), the new state (d_k, d_v)): `delta_rule_step` on the unit key and the unit query over sqrt(d_k)."""
    dtype = _dtype(S, q, k, v)
    query = (l2_normalize(q) * (1.0 / math.sqrt(np.shape(q)[-1]))).astype(dtype)  # (d_k,)
    log_decay = np.asarray(np.log(a), dtype=dtype)  # the package takes the decay as its log, g = log a
    return delta_rule_step(np.asarray(S), query, l2_normalize(k).astype(dtype), np.asarray(v), log_decay,
                           np.asarray(b, dtype=dtype))


def chunk_reference(S, q, k, v, a, b):
    """(o (n, d_v), the state after the last token (d_k, d_v)): `gated_delta_rule` over the chunk, one head."""
    dtype = _dtype(S, q, k, v, a, b)
    output, state = gated_delta_rule(l2_normalize(q)[None], l2_normalize(k)[None], np.asarray(v)[None],
                                     np.log(np.asarray(a, dtype=dtype))[None], np.asarray(b, dtype=dtype)[None],
                                     initial_state=np.asarray(S)[None])  # one head: (1, n, d) -> (1, n, d_v)
    return output[0], state[0]


# --- the step rebuilt with one part changed ------------------------------------------------------

def _unit(x, eps=EPS):
    return l2_normalize(x, eps)


def _as_given(x):
    return np.asarray(x)


def step(S, q, k, v, a, b, *, unit_q=_unit, unit_k=_unit, scaled=True, erase=lambda b: b, write=lambda b: b,
         gate_after=False, paper=False, read=lambda S_new, q: S_new.T @ q, returned=lambda S_new: S_new):
    """The step, rebuilt from its parts with one changed (all defaults: the reference).

    unit_q, unit_k: make the unit query and key; scaled: the query divided by
    sqrt(d_k); erase(b), write(b): the strength of the erase and of the
    write; gate_after: the decay applied to the new state rather than to the
    old one; paper: the update written for a (d_v, d_k) state, on the
    (d_k, d_v) array given; read(S_new, q) -> o; returned(S_new) -> the state
    returned.
    """
    dtype = _dtype(S, q, k, v)
    a, b = dtype.type(a), dtype.type(b)
    query = unit_q(q).astype(dtype)  # (d_k,)
    if scaled:
        query = query * (1.0 / math.sqrt(query.shape[-1]))
    key = unit_k(k).astype(dtype)  # (d_k,)
    if paper:  # S taken as (d_v, d_k): a S (I - b k k^T) + b v k^T, read with S q; needs d_k == d_v
        decayed = a * S
        new = decayed - erase(b) * np.outer(decayed @ key, key) + write(b) * np.outer(v, key)  # (d, d)
        return new @ query, returned(new)  # (d, d) x (d,) -> (d,)
    old = S if gate_after else a * S  # (d_k, d_v)
    new = old - erase(b) * np.outer(key, key @ old) + write(b) * np.outer(key, v)  # (d_k,) x (d_v,) -> (d_k, d_v)
    if gate_after:
        new = a * new
    return read(new, query), returned(new)  # (d_k, d_v)^T x (d_k,) -> (d_v,)


def chunk(S, q, k, v, a, b, *, carried=True, read_at="after", returned=lambda S_n: S_n, **changes):
    """The chunk token by token with `step(..., **changes)`; carried False: every token starts from S; read_at
    "before": o_t read from the state before the token, "last": from the state after the last token;
    returned(S_n) -> the state returned."""
    state, before, outputs = np.asarray(S), [], []
    for t in range(np.shape(q)[0]):
        start = state if carried else np.asarray(S)
        o, new = step(start, q[t], k[t], v[t], a[t], b[t], **changes)
        before.append(start)
        outputs.append(o)
        state = new
    if read_at != "after":
        dtype = _dtype(S, q, k, v)
        query = _unit(q).astype(dtype) * (1.0 / math.sqrt(np.shape(q)[-1]))  # (n, d_k)
        states = before if read_at == "before" else [state] * len(outputs)
        outputs = [s.T @ query[t] for t, s in enumerate(states)]  # (d_v, d_k) x (d_k,) -> (d_v,)
    o = np.stack(outputs) if outputs else np.zeros((0, np.shape(v)[-1]), dtype=_dtype(S, q, k, v))
    return o, returned(state)


def _no_eps(x):
    return l2_normalize(x, 0.0)


def _eps_outside(x):
    """x / (sqrt(sum(x^2)) + 1e-6): the small term added to the length instead of under the square root."""
    x = np.asarray(x)
    return x / (np.sqrt(np.sum(x * x, axis=-1, keepdims=True)) + EPS).astype(x.dtype)


def _square_only(S, q, k, v, a, b):
    """None unless d_k == d_v: an update for the other orientation runs only on a square state."""
    return np.shape(S)[0] == np.shape(S)[1]


def _step_mistake(condition=None, **changes):
    def predict(S, q, k, v, a, b):
        if condition is not None and not condition(S, q, k, v, a, b):
            return None
        return step(S, q, k, v, a, b, **changes)
    return predict


def _chunk_mistake(condition=None, **changes):
    def predict(S, q, k, v, a, b):
        if condition is not None and not condition(S, q, k, v, a, b):
            return None
        return chunk(S, q, k, v, a, b, **changes)
    return predict


ERASE_DROPPED_HINT = (
    "The memory kept what it held for the key and the new value was added on top: that is plain (gated) linear "
    "attention, S_t = a_t S_{t-1} + b_t k_t v_t^T. The delta rule first takes out b_t times what the memory "
    "returns for k_t (the factor I - b_t k_t k_t^T), so that, for b_t = 1, reading the new state with k_t gives "
    "v_t itself, not v_t plus the old value."
)
GATE_AFTER_HINT = (
    "The decay a_t also shrank the token's own write: it was applied after the write. a_t decays what the "
    "memory held before this token (S_{t-1}); the new value b_t k_t v_t^T enters at full strength."
)
KEYS_NOT_NORMALISED_HINT = (
    "The key was used at its own length. The delta rule needs unit keys: divide k by sqrt(sum(k^2) + 1e-6) "
    "first (the query too). Only for a unit key does I - b_t k_t k_t^T take out exactly b_t times the old value; "
    "with a longer key it takes out more than there is, and the state can grow from token to token."
)
QUERY_NOT_NORMALISED_HINT = (
    "The key was normalised but the query was not: the query is divided by sqrt(sum(q^2) + 1e-6) too, then "
    "scaled by 1/sqrt(d_k)."
)
QUERY_NOT_SCALED_HINT = (
    "The unit query was not scaled: after normalising it, multiply it by 1/sqrt(d_k), as attention scales its "
    "scores (transformers' Gated DeltaNet does the same)."
)
EPS_LEFT_OUT_HINT = (
    "The query and key were divided by their exact length. This layer (as Qwen3-Next's) divides by "
    "sqrt(sum(x^2) + 1e-6): the small term keeps a zero vector zero and changes every result in its 7th digit, "
    "which float64 keeps."
)
EPS_OUTSIDE_HINT = (
    "The 1e-6 was added to the length, sqrt(sum(x^2)) + 1e-6. It goes under the square root: divide by "
    "sqrt(sum(x^2) + 1e-6), as Qwen3-Next's normalisation does; the two differ in the 7th digit, which float64 keeps."
)
STATE_TRANSPOSED_HINT = (
    "The state is the other way round. Here S is (d_k, d_v), as transformers and flash-linear-attention store "
    "it: row i belongs to key channel i. The paper's S_t = a_t S_{t-1} (I - b_t k_t k_t^T) + b_t v_t k_t^T and "
    "o_t = S_t q_t are written for the transposed state (d_v, d_k); in this orientation every product is "
    "transposed, and the output is S_t^T q_t."
)
B_ON_KEY_HINT = (
    "The write strength b_t entered the erase twice: as if the key itself were multiplied by b_t before "
    "k_t k_t^T. b_t scales the erase once, I - b_t k_t k_t^T, with the unit key, and the write once, b_t k_t v_t^T."
)
B_ON_ONE_TERM_HINT = (
    "b_t scaled only one of the two terms. It is the strength of the whole correction: the erase "
    "(I - b_t k_t k_t^T) and the write b_t k_t v_t^T both carry it, so that b_t = 0 leaves the (decayed) state "
    "as it was and b_t = 1 replaces the old value for k_t by v_t."
)

_CHANGES = (  # (id, hint, changes, condition): each mistake of one step, used by both checks
    ("erase_dropped", ERASE_DROPPED_HINT, {"erase": lambda b: 0 * b}, None),
    ("gate_after_write", GATE_AFTER_HINT, {"gate_after": True}, None),
    ("keys_not_normalised", KEYS_NOT_NORMALISED_HINT, {"unit_k": _as_given}, None),
    ("keys_not_normalised", KEYS_NOT_NORMALISED_HINT, {"unit_k": _as_given, "unit_q": _as_given}, None),
    ("query_not_normalised", QUERY_NOT_NORMALISED_HINT, {"unit_q": _as_given}, None),
    ("query_not_scaled", QUERY_NOT_SCALED_HINT, {"scaled": False}, None),
    ("eps_left_out", EPS_LEFT_OUT_HINT, {"unit_q": _no_eps, "unit_k": _no_eps}, None),
    ("eps_outside_the_root", EPS_OUTSIDE_HINT, {"unit_q": _eps_outside, "unit_k": _eps_outside}, None),
    ("state_transposed", STATE_TRANSPOSED_HINT, {"returned": lambda S_new: S_new.T}, None),
    ("state_transposed", STATE_TRANSPOSED_HINT, {"paper": True}, _square_only),
    ("state_transposed", STATE_TRANSPOSED_HINT, {"read": lambda S_new, q: S_new @ q}, _square_only),
    ("b_applied_to_key", B_ON_KEY_HINT, {"erase": lambda b: b * b}, None),
    ("b_on_one_term", B_ON_ONE_TERM_HINT, {"write": lambda b: 1 + 0 * b}, None),
    ("b_on_one_term", B_ON_ONE_TERM_HINT, {"erase": lambda b: 1 + 0 * b}, None),
)

STEP_MISTAKES = tuple(Mistake(i, hint, _step_mistake(condition, **changes)) for i, hint, changes, condition in _CHANGES)

CHUNK_MISTAKES = tuple(Mistake(i, hint, _chunk_mistake(condition, **changes))
                       for i, hint, changes, condition in _CHANGES) + (
    Mistake("state_not_carried",
            "Every token started from the state the chunk was given, not from the state the token before it left: "
            "S_t is computed from S_{t-1}, so carry the state from one token to the next, and return the one the "
            "last token leaves.",
            _chunk_mistake(carried=False)),
    Mistake("read_before_write",
            "Each output was read from the state before its own token was written. o_t = S_t^T q_t reads the "
            "state after the token's decay, erase and write, so a token can read what it just wrote.",
            _chunk_mistake(read_at="before")),
    Mistake("read_after_the_chunk",
            "Every output was read from the state after the last token. Token t reads S_t, the state its own step "
            "leaves: it cannot see the tokens after it (the delta rule is causal, as a causal mask is).",
            _chunk_mistake(read_at="last")),
)


# --- the inputs -------------------------------------------------------------------------------------

def _state_code(seed, d_k, d_v, dtype, state, before: str):
    """(the generator's and the state's lines of a printed input, `draw(shape)`: the code that draws an array, and
    the cast every drawn array ends with)."""
    cast = f".astype(np.{dtype})" if dtype else ""
    draw = lambda shape: f"rng.standard_normal({shape}){cast}"  # noqa: E731
    S = {"rng": draw((d_k, d_v)), "zeros": f"np.zeros(({d_k}, {d_v})){cast}"}[state]
    return [f"rng = np.random.default_rng({seed})", f"S = {S}  # (d_k, d_v): the state before the {before}"], draw, cast


def _step_code(seed, d_k, d_v, a, b, *, dtype=None, state="rng", key=None) -> str:
    lines, draw, _ = _state_code(seed, d_k, d_v, dtype, state, "token")
    lines += [f"q = {draw(d_k)}  # (d_k,)",
              f"k = {draw(d_k) if key is None else key}  # (d_k,)",
              f"v = {draw(d_v)}  # (d_v,)",
              f"a, b = {a!r}, {b!r}  # the decay and the write strength"]
    return "\n".join(lines)


def _step_cases(rngs: Rngs) -> list[Case]:
    def shown(label, seed, d_k, d_v, a, b, **options):
        return generated(label, _step_code(seed, d_k, d_v, a, b, **options), STEP_PARAMS, rngs)

    rng = rngs(1500)

    def hidden(label, d_k, d_v, a, b, dtype=np.float64):
        S, q, k = rng.standard_normal((d_k, d_v)), rng.standard_normal(d_k), rng.standard_normal(d_k)
        v = rng.standard_normal(d_v)
        return Case(label, tuple(x.astype(dtype) for x in (S, q, k, v)) + (a, b), hidden=True)

    return [
        shown("a square state, d_k = d_v = 3: a decay of 0.8, a write strength of 0.7", 2, 3, 3, 0.8, 0.7),
        shown("d_k = 3, d_v = 2: a decay of 0.9, a write strength of 0.5", 1, 3, 2, 0.9, 0.5),
        shown("the first token: an empty state (zeros)", 3, 4, 2, 0.95, 0.6, state="zeros"),
        shown("no decay and b = 1: the value replaces what the key held", 4, 4, 3, 1.0, 1.0),
        shown("b = 0: nothing written, the state only decays", 5, 3, 2, 0.5, 0.0),
        shown("b = 2: the old value reflected", 6, 3, 3, 0.9, 2.0),
        shown("float32 in, float32 out", 7, 4, 3, 0.9, 0.25, dtype="float32"),
        shown("a short key, of length about 1e-3: the 1e-6 under the square root counts", 8, 3, 2, 0.9, 0.8,
              key="rng.standard_normal(3) * 1e-3"),
        shown("a zero key: nothing erased and nothing written", 9, 3, 2, 0.7, 0.9, key="np.zeros(3)"),
        shown("d_k = 1", 10, 1, 2, 0.9, 0.5),
        hidden("d_k = 8, d_v = 4", 8, 4, 0.97, 0.3),
        hidden("a square state, d_k = d_v = 5", 5, 5, 0.6, 1.2),
        hidden("float32, d_k = 6, d_v = 3", 6, 3, 0.85, 0.9, dtype=np.float32),
        hidden("no decay, b = 1, d_k = 5, d_v = 2", 5, 2, 1.0, 1.0),
    ] + _assumption_cases_gated_delta_step(rngs)


def _assumption_cases_gated_delta_step(rngs: Rngs) -> list[Case]:
    """Inputs that break what one step could silently assume."""
    rng = rngs(1501)
    S, q, k, v = rng.standard_normal((6, 2)), rng.standard_normal(6), rng.standard_normal(6), rng.standard_normal(2)
    return [
        # d_v != d_k with d_v > d_k too: the value need not be narrower than the key
        generated("d_k = 2, d_v = 5", _step_code(11, 2, 5, 0.9, 0.5), STEP_PARAMS, rngs),
        Case("d_k = 6, d_v = 2", (S, q, k, v, 0.75, 0.4), hidden=True),
    ]


CHUNK_PARAMS = STEP_PARAMS


def _chunk_code(seed, n, d_k, d_v, *, dtype=None, state="rng", a=None, b=None, keys=None) -> str:
    lines, draw, cast = _state_code(seed, d_k, d_v, dtype, state, "chunk")
    lines += [f"q = {draw((n, d_k))}  # (n, d_k)",
              f"k = {draw((n, d_k)) if keys is None else keys}  # (n, d_k)",
              f"v = {draw((n, d_v))}  # (n, d_v)",
              f"a = {a or f'rng.uniform(0.5, 1.0, {n}){cast}'}  # (n,): each token's decay",
              f"b = {b or f'rng.uniform(0.0, 1.5, {n}){cast}'}  # (n,): each token's write strength"]
    return "\n".join(lines)


def _chunk_cases(rngs: Rngs) -> list[Case]:
    def shown(label, seed, n, d_k, d_v, **options):
        return shown_chunk(label, seed, n, d_k, d_v, rngs, **options)

    rng = rngs(1510)

    def hidden(label, n, d_k, d_v, dtype=np.float64):
        S, q, k = rng.standard_normal((d_k, d_v)), rng.standard_normal((n, d_k)), rng.standard_normal((n, d_k))
        v, a, b = rng.standard_normal((n, d_v)), rng.uniform(0.5, 1.0, n), rng.uniform(0.0, 1.5, n)
        return Case(label, tuple(x.astype(dtype) for x in (S, q, k, v, a, b)), hidden=True)

    return [
        shown("a square state, d_k = d_v = 3, 5 tokens", 23, 5, 3, 3),
        shown("4 tokens, d_k = 3, d_v = 2", 21, 4, 3, 2),
        shown("one token: the chunk is one step", 22, 1, 3, 2),
        shown("the first chunk: an empty state, 4 tokens", 24, 4, 4, 2, state="zeros"),
        shown("the same key written twice, no decay and b = 1: the second value replaces the first", 25, 3, 3, 2,
              keys="np.array([[1.0, 2.0, 0.5], [1.0, 2.0, 0.5], [0.0, 1.0, -1.0]])",
              a="np.ones(3)", b="np.ones(3)"),
        shown("float32 in, float32 out: 6 tokens", 26, 6, 4, 3, dtype="float32"),
        hidden("16 tokens, d_k = 8, d_v = 4", 16, 8, 4),
        hidden("a square state, 9 tokens, d_k = d_v = 4", 9, 4, 4),
        hidden("float32, 12 tokens, d_k = 6, d_v = 5", 12, 6, 5, dtype=np.float32),
    ] + _assumption_cases_gated_delta_chunk(rngs)


def _assumption_cases_gated_delta_chunk(rngs: Rngs) -> list[Case]:
    """Inputs that break what a chunk could silently assume."""
    rng = rngs(1511)
    n, d_k, d_v = 3, 5, 2
    args = (rng.standard_normal((d_k, d_v)), rng.standard_normal((n, d_k)), rng.standard_normal((n, d_k)),
            rng.standard_normal((n, d_v)))
    return [
        # n > d_k: more tokens than key channels, so the keys cannot all be orthogonal
        generated("8 tokens, d_k = 2, d_v = 3: more tokens than key channels",
                  _chunk_code(27, 8, 2, 3), CHUNK_PARAMS, rngs),
        # a and b as tuples of Python numbers, not arrays
        shown_chunk("a and b given as tuples of numbers, 3 tokens", 28, 3, 3, 2, rngs,
                    a="(0.9, 0.6, 1.0)", b="(0.5, 1.0, 1.5)"),
        Case("a and b given as tuples, 3 tokens, d_k = 5, d_v = 2",
             args + (tuple(rng.uniform(0.5, 1.0, n).tolist()), tuple(rng.uniform(0.0, 1.5, n).tolist())),
             hidden=True),
    ]


def shown_chunk(label, seed, n, d_k, d_v, rngs, **options) -> Case:
    """A visible chunk drawn by the code it shows."""
    return generated(label, _chunk_code(seed, n, d_k, d_v, **options), CHUNK_PARAMS, rngs)


def _error_hint(case: Case, error: str, code: Code) -> str:
    """What an error may mean: shapes that do not fit a state that is not square, a and b given as tuples."""
    d_k, d_v = np.shape(case.args[0])
    if d_k != d_v and ("matmul" in error or "broadcast" in error or "shapes" in error):
        return (f"S is (d_k, d_v) = ({d_k}, {d_v}) here: row i belongs to key channel i, so k has d_k = {d_k} "
                f"entries, v has d_v = {d_v}, and I - b k k^T is d_k x d_k. If your step was written for the "
                "paper's (d_v, d_k) state, every product in it must be transposed: the erase is k_t (k_t^T S), the "
                "write k_t v_t^T, the output S^T q_t.")
    if any(isinstance(x, tuple) for x in case.args[4:]) and "tuple" in error:
        return ("a and b are tuples of Python numbers here, as the task allows: index them one token at a time, or "
                "make them arrays first (np.asarray).")
    return ""


GATED_DELTA_STEP = Check(
    name="gated_delta_step",
    function="gated_delta_step",
    params=STEP_PARAMS,
    reference=step_reference,
    make_cases=_step_cases,
    mistakes=STEP_MISTAKES,
    output_names=OUTPUT_NAMES,
    sizes=Sizes({"S": ("d_k", "d_v"), "q": ("d_k",), "k": ("d_k",), "v": ("d_v",)}),
    error_hint=_error_hint,
)

GATED_DELTA_CHUNK = Check(
    name="gated_delta_chunk",
    function="gated_delta_chunk",
    params=CHUNK_PARAMS,
    reference=chunk_reference,
    make_cases=_chunk_cases,
    mistakes=CHUNK_MISTAKES,
    output_names=OUTPUT_NAMES,
    sizes=Sizes({"S": ("d_k", "d_v"), "q": ("n", "d_k"), "k": ("n", "d_k"), "v": ("n", "d_v"), "a": ("n",),
                 "b": ("n",)}),
    helpers={"gated_delta_step": step_reference},
    error_hint=_error_hint,
)


def check_gated_delta_step(gated_delta_step, *, hidden: bool = False) -> CheckResult:
    """Check `gated_delta_step(S, q, k, v, a, b) -> (o, S_new)`: one token of the gated delta rule, one head.

    S: (d_k, d_v); q, k: (d_k,), normalised inside (x / sqrt(sum(x^2) + 1e-6)), the query then scaled by
    1/sqrt(d_k); v: (d_v,); a: the decay in (0, 1]; b: the write strength in [0, 2]. o: (d_v,), S_new: (d_k, d_v).
    The exercise 15_gated_delta_rule (book/todays_models.ipynb).
    """
    return check_in_process(GATED_DELTA_STEP, gated_delta_step, hidden=hidden)


def check_gated_delta_chunk(gated_delta_chunk, *, hidden: bool = False) -> CheckResult:
    """Check `gated_delta_chunk(S, q, k, v, a, b) -> (o, S_n)`: the gated delta rule over n tokens, one head.

    S: (d_k, d_v), the state before the chunk; q, k: (n, d_k); v: (n, d_v); a, b: (n,). o: (n, d_v), each token
    read from the state its own step leaves; S_n: (d_k, d_v). The exercise 15_gated_delta_rule
    (book/todays_models.ipynb).
    """
    return check_in_process(GATED_DELTA_CHUNK, gated_delta_chunk, hidden=hidden)


CHECKS = {c.name: c for c in (GATED_DELTA_STEP, GATED_DELTA_CHUNK)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""
