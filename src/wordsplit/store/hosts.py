"""The official hosts of vocabulary files, and the environment variables that replace them.

The registered vocabularies' URLs (:mod:`wordsplit.vocabs.pretrained`) are written on these
hosts; :mod:`wordsplit.store.sources` downloads from the host the environment names instead,
when it names one (a mirror, a local server), and from ``HF_ENDPOINT`` for ``hf:`` repos.

>>> f"{OPENAI_ENDPOINT}/encodings/cl100k_base.tiktoken"  # cl100k_base's official URL
'https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken'
"""

from __future__ import annotations

import os

__all__ = ["HF_ENDPOINT", "OPENAI_ENDPOINT", "hf_endpoint", "openai_endpoint"]

# The official hosts; WORDSPLIT_OPENAI_ENDPOINT / WORDSPLIT_HF_ENDPOINT replace them.
OPENAI_ENDPOINT = "https://openaipublic.blob.core.windows.net"
HF_ENDPOINT = "https://huggingface.co"


def hf_endpoint() -> str:
    """``WORDSPLIT_HF_ENDPOINT``, else ``HF_ENDPOINT``, else https://huggingface.co (no trailing slash)."""
    return (os.environ.get("WORDSPLIT_HF_ENDPOINT") or os.environ.get("HF_ENDPOINT") or HF_ENDPOINT).rstrip("/")


def openai_endpoint() -> str:
    """``WORDSPLIT_OPENAI_ENDPOINT``, else OpenAI's public blob host (no trailing slash)."""
    return (os.environ.get("WORDSPLIT_OPENAI_ENDPOINT") or OPENAI_ENDPOINT).rstrip("/")
