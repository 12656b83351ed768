"""The version of wordsplit (the same as pyproject.toml's; a test checks it)."""

__version__ = "0.1.0"
