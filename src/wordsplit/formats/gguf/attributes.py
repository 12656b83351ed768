"""The token attributes llama.cpp gives a GGUF vocabulary at load time, beyond its token types
(``llama_vocab::impl::load`` in ``llama-vocab.cpp``), for the SentencePiece readers (:mod:`.spm`).

llama.cpp does not take ``tokenizer.ggml.token_type`` as it is:

* a token whose text is one of its end-of-generation names (``</s>``, ``<|end|>``,
  ``<|endoftext|>``, ``<turn|>``, ... :data:`END_OF_GENERATION`) becomes CONTROL whatever its
  type, and so does the token of each fill-in-the-middle name list (:data:`FILL_IN_THE_MIDDLE`)
  whose id the file does not give. CONTROL means: not matched in text unless special tokens are
  parsed. Phi-3's ``</s>`` is USER_DEFINED in its GGUF, so llama.cpp treats it as plain text,
  while HF matches it;
* gpt-oss's ``<|channel|>``, ``<|message|>``, ``<|start|>``, ``<|constrain|>`` become
  USER_DEFINED (always matched), and so does ``<|end|>`` next to ``<|return|>`` and ``<|call|>``
  (or ``<|calls|>`` and ``<|flush|>``);
* ``</s>`` is NORMAL again next to ``<|tool_response>`` (Gemma 4) or ``<|plamo:eos|>``;
* by ``general.name`` (lowercased, as a substring) and ``tokenizer.ggml.pre``, tokens get the
  ``rstrip``/``lstrip`` attributes: for a Phi-3 (``phi-3``/``phi3``), every CONTROL,
  USER_DEFINED and UNKNOWN token and ``</s>`` take the whitespace after them, except ``<unk>``,
  ``<s>`` and ``<|endoftext|>``; ``<mask>`` (jina-v2 pre-tokenizers, nomic-bert-moe and
  jina-bert-v3 architectures) and ``[MASK]`` (``modern-bert``) the whitespace before them.
  llama.cpp strips with C's ``isspace`` (ASCII whitespace), so these are the
  :data:`~wordsplit.vocab.C_SPACE` variants of HF's flags.

A NORMAL or UNUSED token that would become CONTROL (matched as a special token, and also made
by merges from plain text) has no wordsplit equivalent and is refused, as is a name list with several
candidates llama.cpp picks among in hash-table order.

>>> tokens = ["<unk>", "<s>", "</s>", "<|endoftext|>", "<|end|>"]
>>> llama_cpp_attributes({"general.name": "Phi3"}, tokens, [2, 3, 4, 3, 3], "f")
([2, 3, 3, 3, 3], {'</s>': 18, '<|end|>': 18})
"""

from __future__ import annotations

from ...errors import UnsupportedTokenizerError
from ...vocab import C_SPACE, LSTRIP, RSTRIP

__all__ = ["END_OF_GENERATION", "FILL_IN_THE_MIDDLE", "check_literal_order", "llama_cpp_attributes"]

# llama.h `enum llama_token_type`.
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED = 1, 2, 3, 4, 5

#: The texts llama.cpp makes end-of-generation tokens, typed CONTROL.
END_OF_GENERATION = frozenset([
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[",
])

#: The fill-in-the-middle names llama.cpp looks for when the file gives no id, by metadata key:
#: the token found is typed CONTROL.
FILL_IN_THE_MIDDLE = {
    "tokenizer.ggml.fim_pre_token_id": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>",
                                        "▁<PRE>", "<|code_prefix|>", "<|prefix|>"),
    "tokenizer.ggml.fim_suf_token_id": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>",
                                        "▁<SUF>", "<|code_suffix|>", "<|suffix|>"),
    "tokenizer.ggml.fim_mid_token_id": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>",
                                        "▁<MID>", "<|code_middle|>", "<|middle|>"),
    "tokenizer.ggml.fim_pad_token_id": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "tokenizer.ggml.fim_rep_token_id": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "tokenizer.ggml.fim_sep_token_id": ("<|file_sep|>",),
}
# (the deprecated keys llama.cpp also reads for the first three)
_FIM_ALIASES = {"tokenizer.ggml.fim_pre_token_id": "tokenizer.ggml.prefix_token_id",
                "tokenizer.ggml.fim_suf_token_id": "tokenizer.ggml.suffix_token_id",
                "tokenizer.ggml.fim_mid_token_id": "tokenizer.ggml.middle_token_id"}

_GPT_OSS = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")


def llama_cpp_attributes(metadata: dict, tokens: list[str], types: list[int], source: str,
                         index: dict[str, int] | None = None) -> tuple[list[int], dict[str, int]]:
    """The token types llama.cpp goes by (a copy of ``types`` with its changes: see the module
    docstring) and the literal flags of the tokens it strips whitespace next to; ``index`` is
    ``dict(zip(tokens, range(len(tokens))))`` when the caller made it already.

    Raises:
        UnsupportedTokenizerError: a NORMAL token llama.cpp makes CONTROL; several candidates
            for one fill-in-the-middle name; a name-given attribute on a token the file lacks
            (llama.cpp fails to load such a file).
    """
    types = list(types)
    if index is None:  # (a repeated text: the last, as llama.cpp's token_to_id)
        index = dict(zip(tokens, range(len(tokens))))
    # What llama.cpp sets last, whatever came before.
    final: dict[int, int] = {index[name]: _USER_DEFINED for name in _GPT_OSS if name in index}
    if "<|end|>" in index and ("<|call|>" in index or "<|calls|>" in index) \
            and ("<|return|>" in index or "<|flush|>" in index):
        final[index["<|end|>"]] = _USER_DEFINED
    if "</s>" in index and ("<|tool_response>" in index or "<|plamo:eos|>" in index):
        final[index["</s>"]] = _NORMAL

    def control(i: int) -> None:
        if i in final:
            return
        if types[i] in (_NORMAL, _UNUSED):
            raise UnsupportedTokenizerError(
                f"{source}: llama.cpp makes the token {i} {tokens[i]!r} (type {types[i]}) a control token by its "
                "text, which merges can also make from plain text; wordsplit does not reproduce that"
            )
        if types[i] == _USER_DEFINED:
            types[i] = _CONTROL  # (an UNKNOWN one is not matched in text either way)

    for key, names in FILL_IN_THE_MIDDLE.items():
        if key in metadata or _FIM_ALIASES.get(key) in metadata:
            continue
        found = [index[name] for name in names if name in index]
        if len(found) > 1 and any(types[i] != _CONTROL for i in found):
            raise UnsupportedTokenizerError(
                f"{source}: the tokens {[tokens[i] for i in found]!r} are all names llama.cpp looks for when "
                f"{key!r} is absent, and it takes one of them in hash-table order; add that key to the file"
            )
        for i in found:
            control(i)
    for name in END_OF_GENERATION:
        if name in index:
            control(index[name])
    for i, kind in final.items():
        types[i] = kind
    return types, _strip_flags(metadata, tokens, types, index, source)


def _strip_flags(metadata: dict, tokens: list[str], types: list[int], index: dict[str, int],
                 source: str) -> dict[str, int]:
    """llama.cpp's rstrip/lstrip attributes by model, tokenizer and architecture name."""
    name = str(metadata.get("general.name") or "").lower()
    pre = str(metadata.get("tokenizer.ggml.pre") or "")
    arch = str(metadata.get("general.architecture") or "")

    def need(text: str) -> int:
        if text not in index:
            raise UnsupportedTokenizerError(
                f"{source}: llama.cpp sets an attribute of the token {text!r} for a model named {name!r}, and "
                "fails to load a vocabulary without it"
            )
        return index[text]

    literal = (_CONTROL, _USER_DEFINED, _UNKNOWN)
    flags: dict[int, int] = {}
    if any(part in pre for part in ("jina-v2-de", "jina-v2-es", "jina-v2-code")) \
            or any(part in arch for part in ("nomic-bert-moe", "jina-bert-v3")):
        if "<mask>" in index:  # (llama.cpp warns and goes on without it)
            flags[index["<mask>"]] = LSTRIP
    elif "phi-3" in name or "phi3" in name:
        flags = {i: RSTRIP for i, kind in enumerate(types) if kind in literal}
        flags[need("</s>")] = RSTRIP
        for text in ("<unk>", "<s>", "<|endoftext|>"):
            flags.pop(need(text), None)
    elif "modern-bert" in name and "[MASK]" in index:
        flags[index["[MASK]"]] = LSTRIP
    # Only the tokens matched in text carry flags (a NORMAL </s> never is).
    return {tokens[i]: bits | C_SPACE for i, bits in flags.items() if types[i] in literal}


def check_literal_order(literals, source: str) -> None:
    """Refuse literals whose matches could overlap: llama.cpp cuts the text at one token text at
    a time, longest first, where wordsplit (as HF) takes the leftmost-longest match, and the two
    agree unless the end of one literal is the start of another.

    >>> check_literal_order(["<a>", "<b>", "<ab>"], "f")
    >>> try:
    ...     check_literal_order(["ab", "bcd"], "f")
    ... except UnsupportedTokenizerError as exc:
    ...     print(str(exc).split(" (")[0])
    f: the tokens 'ab' and 'bcd' overlap
    """
    texts = set(literals)
    prefixes: dict[str, str] = {}
    for text in texts:
        for cut in range(1, len(text)):
            prefixes.setdefault(text[:cut], text)
    for text in texts:
        for cut in range(1, len(text)):
            other = prefixes.get(text[cut:])
            if other is not None:
                raise UnsupportedTokenizerError(
                    f"{source}: the tokens {text!r} and {other!r} overlap (llama.cpp would cut at the longer one "
                    "first, wordsplit at the leftmost); not supported"
                )
