"""Drop-in modules for code written against other tokenizer libraries.

``wordsplit.compat.tiktoken`` has tiktoken 0.14's public surface over wordsplit's engines:

    import wordsplit.compat.tiktoken as tiktoken

Nothing here is imported by ``import wordsplit``; each module is imported on its own.

>>> import wordsplit.compat.tiktoken as tiktoken
>>> tiktoken.get_encoding("cl100k_base").encode("hello world")
[15339, 1917]
"""
