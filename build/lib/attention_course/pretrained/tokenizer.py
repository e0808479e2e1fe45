"""WordPiece tokenisation of a sentence for the pretrained model.

BERT splits text into sub-words from a fixed vocabulary: a word it does not
know whole becomes pieces, the later ones marked '##' ("indemnify" may become
"in", "##dem", "##nify"). The sentence is wrapped in [CLS] ... [SEP]. We use
the model's own `tokenizer.json` through the `tokenizers` library, with the
padding to 128 tokens and the truncation that file switches on turned off:
padding would add keys nobody asked for, and silent truncation would hide text.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class Tokens:
    """A tokenised sentence: n word pieces, [CLS] and [SEP] included."""

    text: str
    """The sentence as given."""
    pieces: tuple[str, ...]
    """(n,) the word pieces, e.g. ('[CLS]', 'the', 'less', '##ee', ..., '[SEP]')."""
    ids: np.ndarray
    """(n,) int64 vocabulary ids of the pieces."""
    word_ids: tuple[int | None, ...]
    """(n,) index of the word each piece belongs to; None for [CLS] and [SEP]."""
    offsets: tuple[tuple[int, int], ...]
    """(n,) (start, end) character span of each piece in `text`; (0, 0) for specials."""
    truncated: bool = False
    """True if the text was cut to fit the model's positions."""

    def __len__(self) -> int:
        return len(self.pieces)

    def _word_pieces(self) -> dict[int, list[int]]:
        """{word id: positions of its pieces}, in order."""
        pieces: dict[int, list[int]] = {}
        for i, w in enumerate(self.word_ids):
            if w is not None:
                pieces.setdefault(w, []).append(i)
        return pieces

    @property
    def words(self) -> tuple[str, ...]:
        """The words as they appear in `text`, one per word id, in order."""
        return tuple(
            self.text[self.offsets[ps[0]][0]:self.offsets[ps[-1]][1]] for _, ps in sorted(self._word_pieces().items())
        )

    def positions(self, word: str, occurrence: int = 0) -> list[int]:
        """Positions of the pieces of `word` (case-insensitive), its `occurrence`-th time.

        Raises ValueError if the word does not occur that often.
        """
        matches = [
            ps for ps in self._word_pieces().values()
            if self.text[self.offsets[ps[0]][0]:self.offsets[ps[-1]][1]].lower() == word.lower()
        ]
        if not 0 <= occurrence < len(matches):
            raise ValueError(
                f"word {word!r} occurs {len(matches)} time(s) in the text; occurrence={occurrence} "
                f"is out of range (words: {list(self.words)})"
            )
        return matches[occurrence]

    def labels(self) -> list[str]:
        """Piece labels for plots: the piece and its position, e.g. '3:##ee'."""
        return [f"{i}:{p}" for i, p in enumerate(self.pieces)]


class WordPieceTokenizer:
    """The model's tokenizer with padding and truncation off.

    Call it on a string to get `Tokens`. `max_positions` is the model's number
    of position embeddings (512 for BERT): longer input is refused with a
    ValueError, or cut with a warning when `truncate=True`.
    """

    def __init__(self, tokenizer_json: str | os.PathLike, max_positions: int):
        from tokenizers import Tokenizer  # imported here: only the model needs it

        self._tok = Tokenizer.from_file(str(Path(tokenizer_json)))
        self._tok.no_padding()  # the shipped file pads every input to 128 tokens
        self._tok.no_truncation()  # ... and truncates silently; we check the length ourselves
        self.max_positions = max_positions

    def __call__(self, text: str, truncate: bool = False) -> Tokens:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str; got {type(text).__name__}")
        enc = self._tok.encode(text)
        if len(enc.ids) <= 2:  # only [CLS] and [SEP]: nothing to attend over
            raise ValueError(f"text must contain at least one word; got {text!r}")
        pieces, ids, word_ids, offsets = enc.tokens, enc.ids, enc.word_ids, enc.offsets
        truncated = len(ids) > self.max_positions
        if truncated:
            if not truncate:
                raise ValueError(
                    f"text is {len(ids)} tokens long with [CLS] and [SEP], but the model has "
                    f"only {self.max_positions} positions; shorten it or pass truncate=True"
                )
            warnings.warn(
                f"text is {len(ids)} tokens long; keeping the first {self.max_positions - 1} "
                f"and the closing [SEP] (the model has {self.max_positions} positions)",
                UserWarning,
                stacklevel=2,
            )
            keep = [*range(self.max_positions - 1), len(ids) - 1]  # the final [SEP] stays
            pieces, ids, word_ids, offsets = ([seq[i] for i in keep] for seq in (pieces, ids, word_ids, offsets))
        return Tokens(
            text=text,
            pieces=tuple(pieces),
            ids=np.array(ids, dtype=np.int64),
            word_ids=tuple(word_ids),
            offsets=tuple(tuple(o) for o in offsets),
            truncated=truncated,
        )
