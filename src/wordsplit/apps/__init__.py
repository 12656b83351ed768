"""The applications built on the tokenizer: explain, the views, encode-file."""


def plural(n: int, noun: str) -> str:
    """``n`` and ``noun``, with an ``s`` unless ``n`` is 1, for summary lines.

    >>> plural(1, "document"), plural(12_345, "token")
    ('1 document', '12,345 tokens')
    """
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
