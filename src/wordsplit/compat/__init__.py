"""Drop-in modules for code written against other tokenizer libraries.

``wordsplit.compat.tiktoken`` has tiktoken 0.14's public surface over wordsplit's engines,
``wordsplit.compat.tokenizers`` HuggingFace tokenizers' ``Tokenizer`` API (with
``decoders.DecodeStream``) for byte-level BPE ``tokenizer.json`` files, and
``wordsplit.compat.transformers.accelerate`` turns a transformers fast tokenizer into one that
runs on wordsplit with the same results:

    import wordsplit.compat.tiktoken as tiktoken
    from wordsplit.compat.tokenizers import Tokenizer
    from wordsplit.compat.transformers import accelerate

Nothing here is imported by ``import wordsplit``; each module is imported on its own.

>>> import wordsplit.compat.tiktoken as tiktoken
>>> tiktoken.get_encoding("cl100k_base").encode("hello world")
[15339, 1917]
"""
