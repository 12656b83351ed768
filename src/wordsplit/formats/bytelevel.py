"""GPT-2's byte ↔ unicode table, used by HF tokenizer.json, vocab.json/merges.txt and GGUF.

Byte-level BPE files spell every byte as a printable character so that tokens are valid
text: printable Latin-1 bytes stand for themselves and the other 68 bytes are shifted to
U+0100 and up (so the space byte 0x20 is written ``Ġ``, U+0120). This is
``bytes_to_unicode()`` from openai/gpt-2's encoder.py.

>>> token_bytes("Ġhello")
b' hello'
"""

from __future__ import annotations


def _byte_to_char() -> dict[int, str]:
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shifted)
            shifted += 1
    return table


BYTE_TO_CHAR: dict[int, str] = _byte_to_char()
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in BYTE_TO_CHAR.items()}

# The order GPT-2 gives the 256 single-byte tokens (printable bytes first); encoder.json and
# tokenizer.json ids 0..255 follow it.
BYTE_ORDER: list[int] = list(BYTE_TO_CHAR)


def token_bytes(text: str) -> bytes | None:
    """The bytes a byte-level token string stands for, or ``None`` if it is not byte-level."""
    try:
        return bytes(CHAR_TO_BYTE[c] for c in text)
    except KeyError:
        return None


def token_text(data: bytes) -> str:
    """The byte-level spelling of ``data`` (the inverse of :func:`token_bytes`)."""
    return "".join(BYTE_TO_CHAR[b] for b in data)
