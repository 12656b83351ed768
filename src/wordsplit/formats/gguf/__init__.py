"""Read the tokenizer of a GGUF file (llama.cpp's model format) into a :class:`Vocab`.

What it does:

* parses the GGUF v2/v3 header and key-value metadata with a small hand-written reader
  (:func:`read_gguf_metadata`, :mod:`.reader`). A file is never read whole: :func:`read_gguf_head` reads only
  the header and metadata, however large the tensors after them (a model file of many GB),
  and at most :func:`~wordsplit.formats.files.max_file_bytes` of them. The file is untrusted
  input: every count and length is checked against the bytes that remain *before* anything is
  allocated or looped over, so a truncated, corrupt or hostile file raises :class:`VocabFormatError` at once (naming the
  file, the key and the byte offset), never hangs, allocates gigabytes or crashes;
* turns a byte-level BPE vocabulary (``tokenizer.ggml.model == "gpt2"``) into a Vocab that
  tokenizes as llama.cpp does (:func:`read_gguf`, :func:`load_gguf`): NORMAL tokens are the
  BPE ranks, CONTROL (and UNKNOWN) tokens are special tokens, USER_DEFINED tokens are added
  tokens that are always matched in text, UNUSED tokens and NORMAL tokens whose text is not
  byte-level (which BPE can never produce) only count towards ``n_vocab``; the
  split pattern comes from the pre-tokenizer *name* (``tokenizer.ggml.pre``) through
  :data:`LLAMA_CPP_PRE_PATTERNS` (:mod:`.pre_tokenizers`): every name llama.cpp knows for a byte-level BPE, with
  llama.cpp's own regexes, several in sequence where llama.cpp applies several (deepseek,
  falcon, starcoder, ...), and llama.cpp's ``"default"`` ones when the file names none. The
  chat template (``tokenizer.chat_template``) and the bos/eos ids come along;
* turns a SentencePiece vocabulary (``"llama"``) into a Vocab that tokenizes and decodes as
  llama.cpp's ``llm_tokenizer_spm`` and ``llama_detokenize`` do, and a Gemma 4 one
  (``"gemma4"``) as llama.cpp's BPE over ``▁``-spaced UTF-8 (:mod:`.spm`);
* turns a WordPiece (``"bert"``) and a Unigram (``"t5"``) vocabulary into a Vocab that
  tokenizes and decodes as llama.cpp's ``llm_tokenizer_wpm`` and ``llm_tokenizer_ugm`` do, with
  llama.cpp's own normalization (:mod:`.word_models`).

What it does not do:

* read tensors, or any metadata beyond the tokenizer keys it needs;
* the other models (``"rwkv"``, ``"plamo2"``, ...), and a ``"gpt2"`` file naming a
  pre-tokenizer llama.cpp runs on raw UTF-8 (``"gemma4"``, ``"sarvam-moe"``, ...): they raise
  :class:`UnsupportedTokenizerError` naming the model;
* normalization of a byte-level BPE file: GGUF records no normalizer and llama.cpp applies
  none, so a byte-level BPE Vocab's is ``"none"`` even where the original HF tokenizer applies
  NFC (Qwen);
* for byte-level BPE files, llama.cpp's load-time token attributes (the re-typing of
  "control-looking" tokens such as ``<|im_end|>`` by their text, the rstrip/lstrip attributes it
  sets by model name); the SentencePiece readers apply them
  (:mod:`.attributes`). Nor add_bos/add_eos/add_sep.

>>> import struct
>>> def gguf_string(s): return struct.pack("<Q", len(s)) + s.encode()
>>> data = (b"GGUF" + struct.pack("<IQQ", 3, 0, 1)
...         + gguf_string("general.name") + struct.pack("<I", 8) + gguf_string("tiny"))
>>> read_gguf_metadata(data)
{'general.name': 'tiny'}
"""


from __future__ import annotations

from .reader import read_gguf_head, read_gguf_metadata

__all__ = [
    "LLAMA_CPP_PRE_PATTERNS", "LLAMA_CPP_PRE_REGEXES", "load_gguf", "read_gguf", "read_gguf_head", "read_gguf_metadata",
]

# Imported on first use: a warm load reads only the head of the file (for the cache key), and
# the pre-tokenizer table costs more to build than the rest of that load.
_LAZY = {"LLAMA_CPP_PRE_PATTERNS": "pre_tokenizers", "LLAMA_CPP_PRE_REGEXES": "pre_tokenizers",
         "load_gguf": "tokenizer", "read_gguf": "tokenizer"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
