"""The ``llamacpp-wordpiece`` spanner: llama.cpp's words of a GGUF WordPiece (``bert``)
vocabulary (``llm_tokenizer_wpm_session::preprocess``), after its normalizer
(:class:`~wordsplit.normalizers.llamacpp.LlamaCppBertNormalizer`).

White space (llama.cpp's 25 code points) ends a word and is dropped; a punctuation character
(Unicode 15.1's categories P, llama.cpp's table), an ASCII symbol (``$+<=>^`|~``) or a CJK
ideograph (llama.cpp's ``is_chinese_char`` blocks, with the start of CJK Extension E at
U+2B920 as HF's BERT has it) is a word alone. Each word is the piece ``▁`` + the word: the
spans carry the prefix ``▁`` (llama.cpp's "phantom space", which the vocabulary's first
token of a word starts with). ``spanner="auto"`` picks it for a
:class:`~wordsplit.spec.LlamaCppWordPieceSplit`.

>>> from wordsplit.spec import LlamaCppWordPieceSplit
>>> LlamaCppWordPieceSpanner(LlamaCppWordPieceSplit()).split("hi, 世界 a+b\\u3000é")
['▁hi', '▁,', '▁世', '▁界', '▁a', '▁+', '▁b', '▁é']
"""

from __future__ import annotations

import re

from ..sentencepiece import SPACE
from ..spec import LlamaCppWordPieceSplit
from .stage_check import refuse_other_stage

__all__ = ["LLAMA_CPP_CJK", "LlamaCppWordPieceSpanner"]

#: llama.cpp's ``is_chinese_char``: these blocks (U+2B920, not U+2B820, starts the fifth, as in
#: HF's BERT).
LLAMA_CPP_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
                 (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _class_body(ranges) -> str:
    return "".join(f"\\U{a:08X}" if a == b else f"\\U{a:08X}-\\U{b:08X}" for a, b in ranges)


def _alone() -> str:
    """The inside of a character class of the characters that are a word alone."""
    from ..normalizers._llamacpp_unicode import PUNCTUATION, SYMBOL

    ascii_symbols = [(a, min(b, 0x7E)) for a, b in SYMBOL if a < 0x7F]
    return _class_body(PUNCTUATION) + _class_body(ascii_symbols) + _class_body(LLAMA_CPP_CJK)


class LlamaCppWordPieceSpanner:
    """llama.cpp's words, each with ``▁`` before it (see the module docstring)."""

    drops_text = True

    def __init__(self, stage: LlamaCppWordPieceSplit) -> None:
        from ..normalizers.llamacpp import LLAMA_CPP_WHITESPACE  # (its tables: imported when one is built)

        refuse_other_stage("llamacpp-wordpiece", stage, LlamaCppWordPieceSplit, "a GGUF WordPiece vocabulary's split")
        self.stage = stage
        alone = _alone()
        space = _class_body((cp, cp) for cp in sorted(LLAMA_CPP_WHITESPACE))
        self._words = re.compile(f"[{alone}]|[^{alone}{space}]+")

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """``(start, end, "▁")`` of each word."""
        return [(m.start(), m.end(), SPACE) for m in self._words.finditer(text)]

    def split(self, text: str) -> list[str]:
        return [SPACE + word for word in self._words.findall(text)]
