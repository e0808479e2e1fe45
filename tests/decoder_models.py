"""Tiny random decoders built by transformers, for the tests of attention_course.decoder.

No download: each model is built from a config, its weights re-drawn so that
attention is far from uniform (transformers' own initialisation, normal with
std 0.02, makes every score nearly 0), and saved with `save_pretrained` as a
checkpoint folder. Used by tests/test_decoder_transformers.py and by
tests/fixtures/make_decoder_checkpoint.py, which commits one of them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SENTENCES = (
    "my card was blocked",
    "why is my card blocked",
    "the bank bot answers questions about cards, payments and accounts",
    "a blocked card cannot pay; unblock it in the app or call the bank",
    "the lessee shall indemnify the lessor",
)
"""What the tiny tokenizer is trained on."""

PROMPT = "why is my card blocked? the bank bot answers"
"""A prompt longer than every sliding window below."""

COMMON = dict(vocab_size=320, hidden_size=32, intermediate_size=48, num_attention_heads=4, max_position_embeddings=256,
              bos_token_id=None, eos_token_id=0, pad_token_id=None)

ARCHITECTURES = {
    # Llama 3's layout: GQA, untied output projection, a large RoPE base.
    "llama": ("LlamaForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=2,
                                        rope_parameters={"rope_type": "default", "rope_theta": 500000.0})),
    # Every Llama option: biases on every projection, tied embeddings, head_dim not hidden / heads.
    "llama-options": ("LlamaForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=4, head_dim=12,
                                                attention_bias=True, mlp_bias=True, tie_word_embeddings=True,
                                                rope_parameters={"rope_type": "default", "rope_theta": 100.0})),
    # Mistral: a sliding window much shorter than the prompt on every layer, multi-query attention.
    "mistral": ("MistralForCausalLM", dict(num_hidden_layers=2, num_key_value_heads=1, sliding_window=4,
                                            rope_parameters={"rope_type": "default", "rope_theta": 10000.0})),
    # Qwen2: q/k/v biases, tied embeddings, full attention in layer 0 and a sliding window from layer 1 on.
    "qwen2": ("Qwen2ForCausalLM", dict(num_hidden_layers=3, num_key_value_heads=2, use_sliding_window=True,
                                        sliding_window=5, max_window_layers=1, tie_word_embeddings=True,
                                        rope_parameters={"rope_type": "default", "rope_theta": 1000.0})),
}


def tiny_tokenizer():
    """A byte-level BPE tokenizer of 320 tokens trained on SENTENCES (`tokenizers`, no download)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=COMMON["vocab_size"], special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(list(SENTENCES) * 4, trainer=trainer)
    return tokenizer


def tiny_model(name: str, seed: int = 0):
    """A transformers causal LM of architecture `name` (see ARCHITECTURES) with re-drawn random weights, float32, eager."""
    import torch
    import transformers

    class_name, options = ARCHITECTURES[name]
    model_class = getattr(transformers, class_name)
    config = model_class.config_class(**COMMON, **options)
    config._attn_implementation = "eager"  # returns the attention weights
    torch.manual_seed(seed)
    model = model_class(config).eval()
    with torch.no_grad():
        for param_name, p in model.named_parameters():
            if param_name.endswith("norm.weight"):
                p.copy_(1 + 0.3 * torch.randn_like(p))  # RMSNorm gains near 1, each different
            elif param_name.endswith("embed_tokens.weight"):
                p.normal_(0, 1)
            elif p.ndim == 2:
                p.normal_(0, 1.5 / np.sqrt(p.shape[1]))  # (out, in): large enough for peaked attention
            else:
                p.normal_(0, 0.5)  # biases
    return model


def save(model, folder: Path, tokenizer=None) -> Path:
    """save_pretrained into `folder` (config.json, model.safetensors), with tokenizer.json if given."""
    folder = Path(folder)
    model.save_pretrained(folder)
    if tokenizer is not None:
        tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def reference_run(model, ids: np.ndarray, max_new_tokens: int) -> dict[str, np.ndarray]:
    """What transformers computes for `ids`: logits, attention weights, greedy tokens with and without its cache."""
    import torch

    t = torch.tensor(ids)[None]  # (1, n)
    with torch.no_grad():
        out = model(t, output_attentions=True)
        generated = {}
        for use_cache in (True, False):
            generated[use_cache] = model.generate(t, max_new_tokens=max_new_tokens, do_sample=False, use_cache=use_cache,
                                                  attention_mask=torch.ones_like(t))[0].numpy()
    return {
        "logits": out.logits[0].numpy(),  # (n, vocab)
        "attentions": torch.stack(out.attentions)[:, 0].numpy(),  # (L, h, n, n)
        "generated_with_cache": generated[True],
        "generated_without_cache": generated[False],
    }
