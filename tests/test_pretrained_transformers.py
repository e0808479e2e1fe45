"""The whole model against Hugging Face transformers, where torch and transformers are installed.

`pip install -e ".[torch]"` brings them (torch 2.13.0 CPU). Without them this
file is skipped; tests/test_pretrained_model.py still checks the stored
reference made by tests/fixtures/make_bert_reference.py.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from attention_course.pretrained import bert_forward, fetch_model, load_model  # noqa: E402

SENTENCES = [
    "The Lessee shall indemnify the Lessor. Such indemnity survives termination.",
    "The Lessee shall indemnify the Lessor against all claims arising from its use of the premises.",
    "my card was blocked",
    "Naïve café-goers don't re-sign 12-month leases!",
]
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def models():
    folder = fetch_model()
    hf = transformers.BertModel.from_pretrained(folder, attn_implementation="eager").eval()
    hf_tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    return load_model(), hf, hf_tokenizer


@pytest.mark.parametrize("text", SENTENCES)
def test_every_hidden_state_and_attention_weight_agrees(models, text):
    ours, hf, hf_tokenizer = models
    run = ours(text)
    ids = hf_tokenizer(text, return_tensors="pt")["input_ids"]
    assert ids[0].tolist() == run.tokens.ids.tolist()
    with torch.no_grad():
        out = hf(ids, output_attentions=True, output_hidden_states=True)
    hidden = torch.stack(out.hidden_states)[:, 0].numpy()  # (L + 1, n, d_model)
    attentions = torch.stack(out.attentions)[:, 0].numpy()  # (L, h, n, n)
    assert np.abs(run.hidden_states - hidden).max() < TOLERANCE
    assert np.abs(run.attentions - attentions).max() < TOLERANCE


def test_a_padded_batch_agrees(models):
    ours, hf, hf_tokenizer = models
    batch = hf_tokenizer(SENTENCES, padding=True, return_tensors="pt")
    with torch.no_grad():
        out = hf(**batch, output_attentions=True, output_hidden_states=True)
    mine = bert_forward(ours.weights, batch["input_ids"].numpy(), attention_mask=batch["attention_mask"].numpy())
    real = batch["attention_mask"].numpy().astype(bool)  # (B, n)
    hidden = torch.stack(out.hidden_states).numpy()  # (L + 1, B, n, d_model)
    attentions = torch.stack(out.attentions).numpy()  # (L, B, h, n, n)
    assert np.abs(mine.hidden_states - hidden)[:, real].max() < TOLERANCE  # padded rows are never used
    assert np.abs(mine.attentions - attentions).max() < TOLERANCE
