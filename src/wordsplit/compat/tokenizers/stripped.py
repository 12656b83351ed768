r"""HF's token strings of ``normalized`` added tokens with ``lstrip`` or ``rstrip`` in a file
whose model is not ``Unigram`` (SentencePiece BPE, NLLB's BPE without byte fallback): HF's
second pass finds such a token in each stretch's text as the normalizer before the
pre-tokenizer makes it, and the token's string is that text, the white space it took as the
normalizer spells it (NLLB's map makes U+3000 a space: ``"a\u3000<mask>"`` gives
``" <mask>"``), where the text as given would keep the U+3000. The ids and offsets are the
engine's; this redoes the two passes of :class:`~wordsplit.specials.LiteralScan` on the text
(only when such a token is among the ids) and takes each token's normalized text, found by its
offsets. A ``Unigram`` file's strings come from :mod:`~wordsplit.compat.tokenizers.unigram`.

>>> from wordsplit.compat.tokenizers import Tokenizer
>>> tok = Tokenizer.from_file("tests/data/unigram/test_sentencepiece_bpe.nllb.tokenizer.json.gz")
>>> tok.encode("a\u3000<mask>", add_special_tokens=False).tokens
['▁a', ' <mask>']
"""

from __future__ import annotations

from typing import Callable

from ...normalizers import normalizer_for
from ...specials import LiteralScan
from ...vocab import LSTRIP, NORMALIZED, RSTRIP, Vocab, second_pass_normalizes
from .unigram import aligned_text

__all__ = ["NormalizedStrings"]


class NormalizedStrings:
    """The strings of a vocabulary's ``normalized`` ``lstrip``/``rstrip`` added tokens as HF
    gives them (see the module docstring).

    Args:
        vocab: the file's vocabulary.
    """

    def __init__(self, vocab: Vocab) -> None:
        from ...spec import Metaspace

        literals, flags = vocab.all_special_literals, vocab.literal_flags
        self.ids = frozenset(i for text, i in literals.items()
                             if flags.get(text, 0) & NORMALIZED and flags.get(text, 0) & (LSTRIP | RSTRIP))
        self._scan = None
        stage = vocab.pipeline.normalizer
        if not self.ids or not second_pass_normalizes(stage, flags):
            return  # (the second pass searches the text as it is: its slice is the string)
        normalize = normalizer_for(stage)
        if isinstance(stage, Metaspace):  # (the pass runs before the pre-tokenizer's Metaspace)
            stage, normalize = stage.before, normalize.inner
        self._stage, self._normalize = stage, normalize
        self._scan = LiteralScan(literals, flags, normalize)

    def fix(self, text: str, ids: list[int], offsets: list[tuple[int, int]], tokens: list[str],
            is_token: Callable[[str], bool]) -> None:
        """Set ``tokens[k]`` to HF's string of each such token among ``ids`` (whose char
        ``offsets`` in ``text`` the engine gave; ``is_token``: the call's policy)."""
        if self._scan is None or not any(i in self.ids for i in ids):
            return
        found: dict[tuple[int, int], str] = {}
        for start, end, literal in self._scan.spans(text, is_token):
            if literal is not None:
                continue
            normalized, places = aligned_text(self._normalize, self._stage, text[start:end])
            for a, b, second in self._scan.second_pass(normalized, is_token):
                if second is not None:
                    found[(start + places[a][0], start + places[b - 1][1])] = normalized[a:b]
        for k, i in enumerate(ids):
            if i in self.ids:
                tokens[k] = found.get(tuple(offsets[k]), tokens[k])
