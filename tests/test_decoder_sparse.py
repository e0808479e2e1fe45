"""load_decoder against transformers for DeepSeek Sparse Attention: DeepSeek-V3.2 (deepseek_v32) and GLM-5 (glm_moe_dsa).

Tiny random checkpoints built by transformers from a config (no download),
saved with save_pretrained and run by both in float32 with eager attention,
index_topk below the prompt's length so that the indexer's choice matters:
logits to 1e-4, every layer's attention weights (zero at the keys not chosen)
to 1e-5, every layer's hidden state to 1e-4, decoding through the cache
equal to the whole prompt at once, and greedy tokens with and without the
cache equal to transformers' `generate`. Skipped, with the reason, without torch.
"""

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]' to cross-check against it")
transformers = pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[torch]'")

from attention_course.core.masks import causal_mask  # noqa: E402
from attention_course.core.norms import rms_norm  # noqa: E402
from attention_course.decoder import DecoderConfig, load_decoder  # noqa: E402
from attention_course.decoder.indexer import IndexedLatentCache  # noqa: E402
from decoder_models import COMMON, PROMPT, reference_run, save, tiny_tokenizer  # noqa: E402

MAX_NEW_TOKENS = 8

_LATENT = dict(num_key_value_heads=4, q_lora_rank=12, kv_lora_rank=8, qk_nope_head_dim=4, qk_rope_head_dim=4,
               v_head_dim=6, n_routed_experts=8, num_experts_per_tok=2, moe_intermediate_size=16)

SPARSE = {
    # DeepSeek-V3.2: half-split RoPE in the indexer, YaRN with mscale_all_dim (the softmax scale grows), 8 indexer
    # heads of 8 keeping 4 keys (no two keys tie at the 4th place), a dense layer then experts in 2 groups.
    "deepseek-v32": ("DeepseekV32ForCausalLM", dict(
        _LATENT, num_hidden_layers=3, first_k_dense_replace=1, n_group=2, topk_group=1,
        index_n_heads=8, index_head_dim=8, index_topk=4,
        rope_parameters={"rope_type": "yarn", "rope_theta": 1000.0, "factor": 4.0, "mscale": 1.0,
                         "mscale_all_dim": 1.0, "original_max_position_embeddings": 64})),
    # GLM-5: interleaved RoPE in the indexer, the second layer reusing the first one's choice, 2 indexer heads
    # (many keys score exactly 0: ties at the k-th place), index_head_dim wider than the RoPE part.
    "glm-moe-dsa": ("GlmMoeDsaForCausalLM", dict(
        _LATENT, num_hidden_layers=3, mlp_layer_types=["dense", "sparse", "sparse"], n_group=1, topk_group=1,
        index_n_heads=2, index_head_dim=12, index_topk=5, indexer_types=["full", "shared", "full"],
        rope_parameters={"rope_type": "default", "rope_theta": 100.0})),
}
"""name -> (transformers class, config options beside decoder_models.COMMON)."""

MODEL_TYPES = {"DeepseekV32ForCausalLM": "deepseek_v32", "GlmMoeDsaForCausalLM": "glm_moe_dsa"}


def build(name: str, seed: int = 0):
    """The transformers model of SPARSE[name], weights re-drawn so that attention and the indexer are far from flat."""
    class_name, options = SPARSE[name]
    model_class = getattr(transformers, class_name)
    config = model_class.config_class(**{**COMMON, **copy.deepcopy(options)})
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = model_class(config).eval()
    with torch.no_grad():
        for param_name, p in model.named_parameters():
            if p.numel() == 0:
                continue
            if param_name.endswith("norm.weight"):
                p.copy_(1 + 0.3 * torch.randn_like(p))
            elif param_name.endswith("embed_tokens.weight"):
                p.normal_(0, 1)
            elif p.ndim >= 2:
                p.normal_(0, 1.5 / np.sqrt(p.shape[-1]))  # (out, in), and the experts stacked (E, out, in)
            else:
                p.normal_(0, 0.5)  # the indexer key norm's bias
        for buffer_name, b in model.named_buffers():
            if buffer_name.endswith("e_score_correction_bias"):
                b.normal_(0, 0.3)
    return model


@pytest.fixture(scope="module", params=sorted(SPARSE))
def checkpoint(request, tmp_path_factory):
    """(name, transformers model, our model, prompt ids, transformers' reference with its hidden states)."""
    name = request.param
    tokenizer = tiny_tokenizer()
    hf = build(name, seed=1)
    folder = save(hf, tmp_path_factory.mktemp(name), tokenizer)
    ids = np.array(tokenizer.encode(PROMPT).ids)
    ref = reference_run(hf, ids, MAX_NEW_TOKENS)
    with torch.no_grad():
        out = copy.deepcopy(hf)(torch.tensor(ids)[None], output_hidden_states=True)
    ref["hidden_states"] = torch.stack(out.hidden_states)[:, 0].numpy()  # (L + 1, n, d_model), the last one normed
    ref["decoded"] = decoded_through_the_cache(hf, ids)
    return name, hf, load_decoder(folder), ids, ref


PREFILL = 5
"""Tokens of the prompt run at once before decoding the rest one at a time."""


def decoded_through_the_cache(hf, ids) -> dict[str, list[np.ndarray]]:
    """transformers' logits and attention weights for the first PREFILL tokens at once, then each later one alone."""
    cache = transformers.DynamicCache(config=hf.config)
    logits, attentions = [], []
    with torch.no_grad():
        for chunk in [ids[:PREFILL], *(ids[t:t + 1] for t in range(PREFILL, len(ids)))]:
            out = hf(torch.tensor(chunk)[None], cache=cache, use_cache=True, output_attentions=True)
            logits.append(out.logits[0].numpy())  # (n_new, vocab)
            attentions.append(torch.stack(out.attentions)[:, 0].numpy())  # (L, h, n_new, n_k)
    return {"logits": logits, "attentions": attentions}


def first_tied_row(model, hidden_states: np.ndarray) -> int:
    """The first query of the whole prompt at which some indexer layer has a tie at the k-th best visible score
    (where the choice depends on how many keys the row holds, in torch.topk as here); len(prompt) if none."""
    from attention_course.core.sparse import indexer_scores
    from attention_course.decoder.indexer import indexer_qkw

    c, n = model.config, hidden_states.shape[1]
    first = n
    for layer in range(c.n_layers):
        if c.indexer.shared[layer]:
            continue
        p = model.weights.layers[layer]
        h = rms_norm(hidden_states[layer], p.attn_norm, c.rms_norm_eps)
        q, k, w = indexer_qkw(c, p, layer, h, np.arange(n))
        scores = indexer_scores(q, k, w, scale=c.indexer.head_dim ** -0.5)  # (n, n)
        for t in range(c.indexer.top_k, n):
            best = np.sort(scores[t, :t + 1])[::-1]
            if best[c.indexer.top_k - 1] == best[c.indexer.top_k]:
                first = min(first, t)
    return first


def test_the_configuration_is_read_as_transformers_reads_it(checkpoint):
    name, hf, ours, ids, _ = checkpoint
    c, h = ours.config, hf.config
    assert c.model_type == MODEL_TYPES[SPARSE[name][0]]
    assert (c.indexer.n_heads, c.indexer.head_dim, c.indexer.top_k) == (h.index_n_heads, h.index_head_dim, h.index_topk)
    assert c.indexer.top_k < len(ids)  # the indexer drops keys of the prompt
    shared = tuple(t == "shared" for t in getattr(h, "indexer_types", ["full"] * h.num_hidden_layers))
    assert c.indexer.shared == shared
    assert [c.is_moe_layer(i) for i in range(c.n_layers)] == [t == "sparse" for t in h.mlp_layer_types]
    assert DecoderConfig.from_dict({"model_type": c.model_type, **COMMON, **SPARSE[name][1]}) == c


def test_logits_equal_transformers(checkpoint):
    *_, ours, ids, ref = checkpoint
    out = ours.forward(ids)
    assert out.logits.dtype == np.float32
    np.testing.assert_allclose(out.logits, ref["logits"], rtol=0, atol=1e-4)


def test_attention_weights_equal_transformers_with_the_keys_not_chosen_at_zero(checkpoint):
    *_, ours, ids, ref = checkpoint
    got, want = ours.forward(ids).attentions, ref["attentions"]  # (L, h, n, n)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(got == 0, want == 0)  # the same keys chosen, key for key
    visible = causal_mask(len(ids))
    assert np.all((got > 0).sum(-1) <= ours.config.indexer.top_k)  # at most index_topk keys per query
    assert np.any((got == 0) & visible), "the indexer must drop visible keys"
    np.testing.assert_allclose(got.sum(-1), 1, atol=1e-5)


def test_every_hidden_state_equals_transformers(checkpoint):
    *_, ours, ids, ref = checkpoint
    hidden = ours.forward(ids).hidden_states  # (L + 1, n, d_model): the last one before the final norm
    np.testing.assert_allclose(hidden[:-1], ref["hidden_states"][:-1], rtol=0, atol=1e-4)
    normed = rms_norm(hidden[-1], ours.weights.final_norm, ours.config.rms_norm_eps)  # transformers' last is normed
    np.testing.assert_allclose(normed, ref["hidden_states"][-1], rtol=0, atol=1e-4)


def _decode(ours, ids):
    """Our logits and attention weights for the first PREFILL tokens at once, then each later one alone; the cache."""
    cache = ours.new_cache()
    steps = [ours.forward(chunk, cache) for chunk in [ids[:PREFILL], *(ids[t:t + 1] for t in range(PREFILL, len(ids)))]]
    return steps, cache


def test_decoding_through_the_cache_equals_transformers_decoding_through_its_cache(checkpoint):
    *_, ours, ids, ref = checkpoint
    steps, _ = _decode(ours, ids)
    for step, logits, attentions in zip(steps, ref["decoded"]["logits"], ref["decoded"]["attentions"]):
        np.testing.assert_allclose(step.logits, logits, rtol=0, atol=1e-4)
        np.testing.assert_allclose(step.attentions, attentions, rtol=0, atol=1e-5)


def test_decoding_through_the_cache_equals_the_whole_prompt(checkpoint):
    name, _, ours, ids, _ = checkpoint
    c = ours.config
    whole = ours.forward(ids)
    steps, cache = _decode(ours, ids)
    assert isinstance(cache, IndexedLatentCache)
    np.testing.assert_allclose(steps[0].logits, whole.logits[:PREFILL], rtol=0, atol=1e-4)
    # A tie at the k-th best score is settled by torch.topk's algorithm, whose choice depends on the row's length:
    # a row of the whole prompt holds n keys (the later ones hidden), a decoding step's row only the cached ones.
    # Up to the first such tie the two runs agree (DeepSeek-V3.2's model here has none).
    tied = first_tied_row(ours, whole.hidden_states)
    assert tied == len(ids) if name == "deepseek-v32" else tied > PREFILL
    for t, step in zip(range(PREFILL, tied), steps[1:]):  # one query against every cached latent and indexer key
        np.testing.assert_allclose(step.logits[0], whole.logits[t], rtol=0, atol=1e-4)
        np.testing.assert_allclose(step.attentions[:, :, 0], whole.attentions[:, :, t, :t + 1], rtol=0, atol=1e-5)
    n, full_layers = len(ids), c.n_layers - sum(c.indexer.shared)
    latent = c.latent.kv_lora_rank + c.latent.qk_rope_head_dim
    assert cache.nbytes == 4 * n * (c.n_layers * latent + full_layers * c.indexer.head_dim)  # float32 numbers
    assert all((cache.index_keys(i) is None) == c.indexer.shared[i] for i in range(c.n_layers))


@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_tokens_equal_transformers(checkpoint, use_cache):
    *_, ours, ids, ref = checkpoint
    assert np.array_equal(ref["generated_with_cache"], ref["generated_without_cache"])  # transformers agrees with itself
    got = ours.generate(ids, MAX_NEW_TOKENS, use_cache=use_cache, stop_at_eos=False)
    want = ref["generated_with_cache"]
    np.testing.assert_array_equal(got[:len(want)], want)


def test_a_plain_latent_cache_is_refused(checkpoint):
    *_, ours, ids, _ = checkpoint
    from attention_course.decoder import LatentCache
    with pytest.raises(TypeError, match="IndexedLatentCache"):
        ours.forward(ids, LatentCache(ours.config.n_layers))


@pytest.mark.parametrize("options", [
    dict(index_topk_pattern="FSSF"),
    dict(index_topk_freq=2, index_skip_topk_offset=1),
    dict(index_topk_freq=3),
    dict(),
])
def test_glm_shared_layers_are_derived_as_transformers_derives_them(options):
    cfg = {"model_type": "glm_moe_dsa", **COMMON, **_LATENT, "num_hidden_layers": 4, **options}
    theirs = transformers.GlmMoeDsaConfig(**{k: v for k, v in cfg.items() if k != "model_type"}).indexer_types
    assert DecoderConfig.from_dict(cfg).indexer.shared == tuple(t == "shared" for t in theirs)


@pytest.mark.parametrize("model_type, config_class", [("deepseek_v32", "DeepseekV32Config"),
                                                      ("glm_moe_dsa", "GlmMoeDsaConfig")])
def test_defaults_are_transformers_defaults(model_type, config_class):
    sizes = dict(vocab_size=10, hidden_size=16, intermediate_size=8, num_hidden_layers=5, num_attention_heads=2,
                 num_key_value_heads=2)
    theirs = getattr(transformers, config_class)(**sizes)
    c = DecoderConfig.from_dict({"model_type": model_type, **sizes})
    m, moe, ix = c.latent, c.moe, c.indexer
    assert (m.kv_lora_rank, m.q_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim) == (
        theirs.kv_lora_rank, theirs.q_lora_rank, theirs.qk_nope_head_dim, theirs.qk_rope_head_dim, theirs.v_head_dim)
    assert (moe.n_experts, moe.top_k, moe.d_expert, moe.n_group, moe.topk_group, moe.routed_scaling_factor) == (
        theirs.n_routed_experts, theirs.num_experts_per_tok, theirs.moe_intermediate_size, theirs.n_group,
        theirs.topk_group, theirs.routed_scaling_factor)
    assert [c.is_moe_layer(i) for i in range(5)] == [t == "sparse" for t in theirs.mlp_layer_types]
    assert (ix.n_heads, ix.head_dim, ix.top_k) == (theirs.index_n_heads, theirs.index_head_dim, theirs.index_topk)
    assert (c.rms_norm_eps, c.max_positions, c.rope_theta) == (
        theirs.rms_norm_eps, theirs.max_position_embeddings, theirs.rope_parameters["rope_theta"])
    assert c.rope_interleaved and c.extra_layers == 0
