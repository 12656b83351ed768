"""What the drop-in tests (test_compat_bert.py, test_compat_unigram.py) compare: every field of
an HF ``Encoding`` (its overflowing parts too), a call's result or that it raised, on an HF
tokenizer and a wordsplit drop-in set alike."""

from __future__ import annotations

FIELDS = ("ids", "tokens", "offsets", "attention_mask", "special_tokens_mask", "type_ids", "word_ids",
          "sequence_ids", "n_sequences")


def set_alike(tokenizers, truncation=None, padding=None) -> None:
    """Set each tokenizer's truncation and padding (``None``: off), special tokens not matched
    in text."""
    for tok in tokenizers:
        tok.no_truncation()
        tok.no_padding()
        tok.encode_special_tokens = False
        if truncation is not None:
            tok.enable_truncation(**truncation)
        if padding is not None:
            tok.enable_padding(**padding)


def fields(encoding) -> dict:
    """Every field of an encoding, its overflowing parts' (and theirs) too."""
    out = {name: getattr(encoding, name) for name in FIELDS}
    out["len"] = len(encoding)
    out["overflowing"] = [fields(part) for part in encoding.overflowing]
    return out


def result(call):
    """The fields of what a call returns (an encoding or a list), or "raised" (HF raises an
    Exception or panics; which one, for a batch, depends on its threads)."""
    try:
        value = call()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # noqa: BLE001 (HF's panics are BaseException)
        return "raised"
    return [fields(e) for e in value] if isinstance(value, list) else fields(value)
