"""The NumPy BERT forward pass on a tiny random BERT, against a naive reference.

No model download: the weights are random, and the reference below computes
each layer head by head with loops (tests/reference.py), sharing no code with
`bert_forward` beyond the weights. The real model is checked against Hugging
Face's numbers in test_pretrained_model.py and test_pretrained_transformers.py.
"""

import math

import numpy as np
import pytest

from attention_course.pretrained.bert import (
    BertConfig,
    BertLayer,
    BertWeights,
    bert_forward,
    gelu,
    head_projections,
    layer_norm,
)
from reference import attention_2d

CONFIG = BertConfig(vocab_size=50, d_model=12, n_layers=2, n_heads=3, d_ff=20,
                    max_positions=16, type_vocab_size=2, layer_norm_eps=1e-12)


def random_bert(seed=0, config=CONFIG) -> BertWeights:
    rng = np.random.default_rng(seed)
    d, f = config.d_model, config.d_ff

    def m(*shape):
        return rng.normal(scale=0.5, size=shape)

    def norm():
        return 1.0 + m(d) * 0.2, m(d) * 0.2

    layers = tuple(
        BertLayer(w_q=m(d, d), b_q=m(d), w_k=m(d, d), b_k=m(d), w_v=m(d, d), b_v=m(d), w_o=m(d, d), b_o=m(d),
                  ln_attn=norm(), w_ff1=m(d, f), b_ff1=m(f), w_ff2=m(f, d), b_ff2=m(d), ln_ff=norm())
        for _ in range(config.n_layers)
    )
    return BertWeights(config=config, word_embeddings=m(config.vocab_size, d),
                       position_embeddings=m(config.max_positions, d),
                       type_embeddings=m(config.type_vocab_size, d), ln_embeddings=norm(), layers=layers)


def ref_layer_norm(v, gamma, beta, eps):
    mean = sum(v) / len(v)
    var = sum((x - mean) ** 2 for x in v) / len(v)
    return np.array([(x - mean) / math.sqrt(var + eps) * g + b for x, g, b in zip(v, gamma, beta)])


def ref_gelu(x):
    return 0.5 * x * math.erfc(-x / math.sqrt(2.0))  # = x/2 (1 + erf(x/sqrt 2)), without cancellation for x << 0


def reference_forward(w: BertWeights, ids, types=None, real=None):
    """Hidden states and weights, token by token and head by head."""
    c = w.config
    n = len(ids)
    types = [0] * n if types is None else types
    allowed = None if real is None else np.tile(np.asarray(real, dtype=bool), (n, 1))  # (n, n)
    x = np.array([ref_layer_norm(w.word_embeddings[ids[i]] + w.position_embeddings[i] + w.type_embeddings[types[i]],
                                 *w.ln_embeddings, c.layer_norm_eps) for i in range(n)])
    states, weights = [x], []
    for p in w.layers:
        heads, head_weights = [], []
        for h in range(c.n_heads):
            cols = slice(h * c.d_head, (h + 1) * c.d_head)
            q, k, v = (x @ wm[:, cols] + b[cols] for wm, b in ((p.w_q, p.b_q), (p.w_k, p.b_k), (p.w_v, p.b_v)))
            a, out = attention_2d(q, k, v, allowed=allowed)
            heads.append(out)
            head_weights.append(a)
        attended = np.concatenate(heads, axis=-1) @ p.w_o + p.b_o
        a = np.array([ref_layer_norm(r, *p.ln_attn, c.layer_norm_eps) for r in x + attended])
        ff = np.vectorize(ref_gelu)(a @ p.w_ff1 + p.b_ff1) @ p.w_ff2 + p.b_ff2
        x = np.array([ref_layer_norm(r, *p.ln_ff, c.layer_norm_eps) for r in a + ff])
        states.append(x)
        weights.append(np.stack(head_weights))
    return np.stack(states), np.stack(weights)


def test_gelu_is_the_exact_erf_gelu_to_float32_accuracy():
    x = np.linspace(-12.0, 12.0, 24001)
    ref = np.array([ref_gelu(v) for v in x])
    got = gelu(x)
    assert np.all(np.abs(got - ref) <= 1.2e-7 * np.abs(ref) + 1e-300)
    assert gelu(np.float32([1.0, -3.0])).dtype == np.float32


def test_layer_norm_matches_the_formula():
    rng = np.random.default_rng(1)
    x, g, b = rng.normal(size=(4, 7)), rng.normal(size=7), rng.normal(size=7)
    ref = np.array([ref_layer_norm(r, g, b, 1e-5) for r in x])
    np.testing.assert_allclose(layer_norm(x, g, b, 1e-5), ref, rtol=1e-12, atol=1e-12)


def test_forward_matches_the_head_by_head_reference():
    w = random_bert()
    ids = np.array([1, 7, 3, 42, 9, 2])
    types = np.array([0, 0, 0, 1, 1, 1])
    out = bert_forward(w, ids, token_type_ids=types)
    ref_states, ref_weights = reference_forward(w, ids.tolist(), types.tolist())
    assert out.hidden_states.shape == (3, 6, 12) and out.attentions.shape == (2, 3, 6, 6)
    # GELU is accurate to 1.2e-7 (relative); a wiring mistake would differ by far more
    np.testing.assert_allclose(out.hidden_states, ref_states, atol=1e-6)
    np.testing.assert_allclose(out.attentions, ref_weights, atol=1e-6)
    np.testing.assert_allclose(out.attentions.sum(-1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(out.last_hidden_state, out.hidden_states[-1])


def test_a_padded_batch_gives_each_sentence_its_own_result():
    w = random_bert(seed=2)
    a, b = [1, 5, 6, 7, 2], [1, 8, 2]
    ids = np.array([a, b + [0, 0]])  # (B=2, n=5), the second padded
    real = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    out = bert_forward(w, ids, attention_mask=real)
    assert out.hidden_states.shape == (3, 2, 5, 12) and out.attentions.shape == (2, 2, 3, 5, 5)
    alone = bert_forward(w, np.array(b))
    np.testing.assert_allclose(out.hidden_states[:, 1, :3], alone.hidden_states, atol=1e-9)
    np.testing.assert_allclose(out.attentions[:, 1, :, :3, :3], alone.attentions, atol=1e-12)
    assert np.all(out.attentions[:, 1, :, :, 3:] == 0.0)  # nobody attends to padding
    ref_states, _ = reference_forward(w, b + [0, 0], real=[1, 1, 1, 0, 0])
    np.testing.assert_allclose(out.hidden_states[:, 1], ref_states, atol=1e-6)


def test_head_projections_reproduce_the_weights_of_the_head():
    w = random_bert(seed=3)
    out = bert_forward(w, np.array([1, 4, 9, 16, 25, 2]))
    for layer, head in [(0, 0), (1, 2)]:
        q, k, v = head_projections(w, out.hidden_states, layer, head)
        assert q.shape == k.shape == v.shape == (6, CONFIG.d_head)
        weights, _ = attention_2d(q, k, v)
        np.testing.assert_allclose(weights, out.attentions[layer, head], atol=1e-12)
    with pytest.raises(ValueError, match="layer must be in 0..1 and head in 0..2"):
        head_projections(w, out.hidden_states, 2, 0)


def test_float32_weights_give_float32_results_close_to_float64():
    w64 = random_bert(seed=4)
    w32 = BertWeights(
        config=w64.config,
        **{name: getattr(w64, name).astype(np.float32) for name in ("word_embeddings", "position_embeddings", "type_embeddings")},
        ln_embeddings=tuple(a.astype(np.float32) for a in w64.ln_embeddings),
        layers=tuple(BertLayer(**{k: (tuple(a.astype(np.float32) for a in v) if isinstance(v, tuple) else v.astype(np.float32))
                                  for k, v in vars(p).items()}) for p in w64.layers),
    )
    ids = np.array([1, 3, 5, 2])
    out32, out64 = bert_forward(w32, ids), bert_forward(w64, ids)
    assert out32.hidden_states.dtype == np.float32 and out32.attentions.dtype == np.float32
    np.testing.assert_allclose(out32.hidden_states, out64.hidden_states, atol=1e-4)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"ids": np.array([1.0, 2.0])}, TypeError, "ids must be integers"),
        ({"ids": np.array([], dtype=int)}, ValueError, r"ids must have shape \(\.\.\., n\) with n >= 1"),
        ({"ids": np.array([1, 50])}, ValueError, "ids must be in 0..49"),
        ({"ids": np.arange(17) % 5}, ValueError, "17 positions, but the model has only 16"),
        ({"ids": np.array([1, 2]), "attention_mask": np.array([1, 1, 0])}, ValueError, "attention_mask must be"),
        ({"ids": np.array([1, 2]), "attention_mask": np.array([1, 2])}, ValueError, "attention_mask must be 0/1"),
        ({"ids": np.array([1, 2]), "token_type_ids": np.array([0, 2])}, ValueError, "token_type_ids must be in 0..1"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(kwargs, error, message):
    with pytest.raises(error, match=message):
        bert_forward(random_bert(), **kwargs)
