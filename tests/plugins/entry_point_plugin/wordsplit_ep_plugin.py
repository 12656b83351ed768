"""The module of a test distribution, ``wordsplit-ep-plugin``, that declares it as an entry point
of the group ``wordsplit.plugins``: installing the wheel is all it takes for wordsplit to know
its spanner ``ep-chars`` (one piece per character) and its vocabulary ``ep-gpt2-chars`` (GPT-2's
ranks, split one character at a time).
"""

import wordsplit

CHARS_PATTERN = r"(?s:.)"


@wordsplit.register_spanner("ep-chars", patterns=(CHARS_PATTERN,))
class CharsSpanner:
    def __init__(self, pattern):
        self.pattern = pattern

    def split(self, text):
        return list(text)


def _gpt2_chars():
    base = wordsplit.load_vocab("gpt2")
    return wordsplit.Vocab(name="ep-gpt2-chars", ranks=base.ranks, pattern=CHARS_PATTERN,
                           special_tokens=base.special_tokens, n_vocab=base.n_vocab)


wordsplit.register_vocab("ep-gpt2-chars", _gpt2_chars)
