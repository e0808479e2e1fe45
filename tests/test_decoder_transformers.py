"""load_decoder against transformers: tiny random Llama, Mistral and Qwen2 checkpoints, built and saved here.

For each architecture of tests/decoder_models.py (GQA and MQA, biases,
tied and untied output projections, head_dim apart from hidden / heads,
sliding windows shorter than the prompt, several RoPE bases) transformers
builds a model from a config (no download), saves it with save_pretrained
and computes the reference with eager attention in float32: logits to 1e-4,
attention weights to 1e-5, and greedy tokens with and without the cache,
each equal to transformers' own. Skipped, with the reason, without torch.
"""

import copy
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]' to cross-check against it")
pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[torch]'")

from attention_course.decoder import load_decoder  # noqa: E402
from attention_course.decoder.weights import read_checkpoint  # noqa: E402
from decoder_models import ARCHITECTURES, PROMPT, reference_run, save, tiny_model, tiny_tokenizer  # noqa: E402

MAX_NEW_TOKENS = 10


@pytest.fixture(scope="module")
def tokenizer():
    return tiny_tokenizer()


@pytest.fixture(scope="module", params=sorted(ARCHITECTURES))
def checkpoint(request, tokenizer, tmp_path_factory):
    """(name, transformers model, our model, prompt ids, transformers' reference)."""
    name = request.param
    hf = tiny_model(name, seed=len(name))
    folder = save(hf, tmp_path_factory.mktemp(name), tokenizer)
    ids = np.array(tokenizer.encode(PROMPT).ids)
    return name, hf, load_decoder(folder), ids, reference_run(hf, ids, MAX_NEW_TOKENS)


def test_the_prompt_is_longer_than_every_sliding_window(checkpoint):
    _, hf, ours, ids, _ = checkpoint
    windows = [w for w in ours.config.windows if w is not None]
    assert all(w < len(ids) for w in windows)
    assert ours.config.n_kv_heads == hf.config.num_key_value_heads and ours.config.head_dim == getattr(hf.config, "head_dim", 8)


def test_logits_equal_transformers(checkpoint):
    _, _, ours, ids, ref = checkpoint
    np.testing.assert_allclose(ours.forward(ids).logits, ref["logits"], rtol=0, atol=1e-4)


def test_attention_weights_equal_transformers(checkpoint):
    _, _, ours, ids, ref = checkpoint
    got = ours.forward(ids).attentions
    assert got.shape == ref["attentions"].shape
    np.testing.assert_allclose(got, ref["attentions"], rtol=0, atol=1e-5)


@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_tokens_equal_transformers(checkpoint, use_cache):
    _, _, ours, ids, ref = checkpoint
    assert np.array_equal(ref["generated_with_cache"], ref["generated_without_cache"])  # transformers agrees with itself
    np.testing.assert_array_equal(ours.generate(ids, MAX_NEW_TOKENS, use_cache=use_cache), ref["generated_with_cache"])


def test_cached_steps_equal_transformers_cached_steps(checkpoint):
    """A prompt, then one token at a time, both sides with their cache: the logits of every step agree."""
    _, hf, ours, ids, _ = checkpoint
    from transformers import DynamicCache

    hf_cache, our_cache = DynamicCache(config=hf.config), ours.new_cache(keep_window=True)
    steps = [ids[:9], *([t] for t in ids[9:])]
    start = 0
    for step in steps:
        t = torch.tensor(np.asarray(step))[None]
        with torch.no_grad():
            want = hf(t, cache=hf_cache, use_cache=True,
                      position_ids=torch.arange(start, start + len(step))[None]).logits[0].numpy()
        np.testing.assert_allclose(ours.forward(step, our_cache).logits, want, rtol=0, atol=1e-4)
        start += len(step)


def test_a_bfloat16_checkpoint_is_read_as_torch_widens_it(checkpoint, tmp_path):
    _, hf, _, ids, _ = checkpoint
    bf16 = copy.deepcopy(hf).to(torch.bfloat16)  # a copy: the module's float32 model stays as it is
    folder = tmp_path / "bf16"
    bf16.save_pretrained(folder)
    assert json.loads((folder / "config.json").read_text())["dtype"] == "bfloat16"
    ours = read_checkpoint(folder)
    for name, p in bf16.state_dict().items():
        if name in ours:
            assert ours[name].dtype == np.float32
            np.testing.assert_array_equal(ours[name], p.float().numpy(), err_msg=name)
    from transformers import AutoModelForCausalLM

    # transformers reading the same file in float32: the rounded weights, computed (RoPE included) in float32
    widened = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    with torch.no_grad():
        want = widened(torch.tensor(ids)[None]).logits[0].numpy()
    np.testing.assert_allclose(load_decoder(folder).forward(ids).logits, want, rtol=0, atol=1e-4)


def test_the_committed_fixture_is_what_transformers_computes_today(tokenizer):
    """tests/fixtures/tiny_decoder/reference.npz, made by make_decoder_checkpoint.py, still holds."""
    from pathlib import Path

    from transformers import AutoModelForCausalLM

    folder = Path(__file__).parent / "fixtures" / "tiny_decoder"
    ref = dict(np.load(folder / "reference.npz"))
    hf = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
    fresh = reference_run(hf, ref["ids"], int(json.loads(str(ref["meta"]))["max_new_tokens"]))
    # float32 logits of size up to about 20: another CPU sums in another order (seen: 1.05e-5 apart),
    # so allow a few float32 steps at that size; a change in what transformers computes is far larger
    np.testing.assert_allclose(fresh["logits"], ref["logits"], rtol=0, atol=5e-5)
    np.testing.assert_allclose(fresh["attentions"], ref["attentions"], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(fresh["generated_with_cache"], ref["generated_with_cache"])
    assert tokenizer.encode(str(ref["prompt"])).ids == ref["ids"].tolist()
