"""The registry of pretrained vocabulary names and the facts their files do not carry.

Each entry names its bundled file (package data in ``vocabs/data/``, gzipped), the official
URL and the sha256 of the uncompressed content (docs/sources.md says where each file comes
from); a SentencePiece entry (:data:`SENTENCEPIECE_PRETRAINED`) no more, as its model file
holds the rest. A rank file's entry also has the split pattern, the special and added tokens
and n_vocab, exactly as tiktoken 0.14.0 (``tiktoken_ext/openai_public.py``) and Qwen3's
tokenizer.json define them. The URLs are the
official ones; :mod:`wordsplit.store.sources` swaps their host for ``WORDSPLIT_OPENAI_ENDPOINT``
or ``WORDSPLIT_HF_ENDPOINT`` when those are set, and downloads a file only when its bundled copy
is absent (a slim install).

>>> sorted(PRETRAINED)[:3]
['cl100k_base', 'o200k_base', 'o200k_harmony']
>>> sorted(SENTENCEPIECE_PRETRAINED)
['mistral-v1']
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, NamedTuple

from ..patterns import CL100K_ORIGINAL_PATTERN, CL100K_PATTERN, GPT2_ORIGINAL_PATTERN, GPT2_PATTERN, O200K_PATTERN, \
    QWEN2_PATTERN
from ..store.hosts import HF_ENDPOINT, OPENAI_ENDPOINT


# Records are NamedTuples, not dataclasses: they are defined on every import of wordsplit, and
# importing dataclasses (with inspect) costs several milliseconds.
_NONE: Mapping[str, int] = MappingProxyType({})


class RankFileFacts(NamedTuple):
    """What a well-known rank file's tokenizer defines in code: ``load_vocab(path)`` of a file
    with this content (sha256 of the uncompressed bytes) uses these facts."""

    name: str  # the tokenizer it is the rank file of
    pattern: str
    special_tokens: Mapping[str, int]
    added_tokens: Mapping[str, int] = _NONE
    n_vocab: int | None = None
    normalizer: str = "none"
    eos_token: str | None = None


class Pretrained(NamedTuple):
    """Everything needed to build a registered vocabulary from its rank file: the facts its
    tokenizer defines in code (the fields of :class:`RankFileFacts`), and where the file is."""

    name: str
    pattern: str
    special_tokens: Mapping[str, int]
    file: str  # bundled .tiktoken.gz in vocabs/data/
    url: str  # official; under OPENAI_ENDPOINT or HF_ENDPOINT
    sha256: str  # of the uncompressed file, as the official source publishes it
    added_tokens: Mapping[str, int] = _NONE
    n_vocab: int | None = None
    normalizer: str = "none"
    eos_token: str | None = None


ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX, FIM_MIDDLE, FIM_SUFFIX = "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

_R50K = dict(
    file="r50k_base.tiktoken.gz",
    url=f"{OPENAI_ENDPOINT}/encodings/r50k_base.tiktoken",
    sha256="306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    pattern=GPT2_PATTERN,
    special_tokens={ENDOFTEXT: 50256},
    n_vocab=50257,
    eos_token=ENDOFTEXT,
)
_P50K = dict(
    file="p50k_base.tiktoken.gz",
    url=f"{OPENAI_ENDPOINT}/encodings/p50k_base.tiktoken",
    sha256="94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    pattern=GPT2_PATTERN,
    eos_token=ENDOFTEXT,
)
_O200K = dict(
    file="o200k_base.tiktoken.gz",
    url=f"{OPENAI_ENDPOINT}/encodings/o200k_base.tiktoken",
    sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    pattern=O200K_PATTERN,
    eos_token=ENDOFTEXT,
)
_O200K_SPECIALS = {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}
_HARMONY_SPECIALS = {
    **_O200K_SPECIALS,
    "<|startoftext|>": 199998,
    ENDOFTEXT: 199999,
    "<|reserved_200000|>": 200000,
    "<|reserved_200001|>": 200001,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|reserved_200004|>": 200004,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010,
    "<|reserved_200011|>": 200011,
    "<|call|>": 200012,
    **{f"<|reserved_{i}|>": i for i in range(200013, 201088)},
}

# Qwen3 tokenizer.json added_tokens: special ones follow the allowed/disallowed policy, the
# others are always matched in text, as HF tokenizers does.
_QWEN3_SPECIALS = {
    ENDOFTEXT: 151643, "<|im_start|>": 151644, "<|im_end|>": 151645,
    "<|object_ref_start|>": 151646, "<|object_ref_end|>": 151647, "<|box_start|>": 151648,
    "<|box_end|>": 151649, "<|quad_start|>": 151650, "<|quad_end|>": 151651,
    "<|vision_start|>": 151652, "<|vision_end|>": 151653, "<|vision_pad|>": 151654,
    "<|image_pad|>": 151655, "<|video_pad|>": 151656,
}  # fmt: skip
_QWEN3_ADDED = {
    "<tool_call>": 151657, "</tool_call>": 151658, FIM_PREFIX: 151659, FIM_MIDDLE: 151660,
    FIM_SUFFIX: 151661, "<|fim_pad|>": 151662, "<|repo_name|>": 151663, "<|file_sep|>": 151664,
    "<tool_response>": 151665, "</tool_response>": 151666, "<think>": 151667, "</think>": 151668,
}  # fmt: skip

PRETRAINED: dict[str, Pretrained] = {
    p.name: p
    for p in [
        Pretrained(name="r50k_base", **_R50K),
        Pretrained(name="p50k_base", special_tokens={ENDOFTEXT: 50256}, n_vocab=50281, **_P50K),
        Pretrained(
            name="p50k_edit",
            special_tokens={ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
            **_P50K,
        ),
        Pretrained(
            name="cl100k_base",
            file="cl100k_base.tiktoken.gz",
            url=f"{OPENAI_ENDPOINT}/encodings/cl100k_base.tiktoken",
            sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
            pattern=CL100K_PATTERN,
            special_tokens={ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260,
                            ENDOFPROMPT: 100276},
            eos_token=ENDOFTEXT,
        ),
        Pretrained(name="o200k_base", special_tokens=_O200K_SPECIALS, **_O200K),
        Pretrained(name="o200k_harmony", special_tokens=_HARMONY_SPECIALS, n_vocab=201088, **_O200K),
        Pretrained(
            name="qwen3",
            file="qwen3.tiktoken.gz",
            # Qwen's own qwen.tiktoken: Qwen3's tokenizer.json ranks, byte for byte (rank = id).
            url=f"{HF_ENDPOINT}/Qwen/Qwen-72B/resolve/b8e18ac61df64d35308695769ff46b976b6a00f4/qwen.tiktoken",
            sha256="b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
            pattern=QWEN2_PATTERN,
            special_tokens=_QWEN3_SPECIALS,
            added_tokens=_QWEN3_ADDED,
            normalizer="nfc",
            eos_token="<|im_end|>",
        ),
    ]
}

# gpt2 is tiktoken's name for the same ranks, pattern and special token as r50k_base.
ALIASES = {"gpt2": "r50k_base"}


class PretrainedModel(NamedTuple):
    """A registered SentencePiece vocabulary: its ``tokenizer.model`` carries every fact (pieces,
    types, normalizer flags), so the entry only says where the file is."""

    name: str
    file: str  # bundled .model.gz in vocabs/data/
    url: str  # official; under HF_ENDPOINT
    sha256: str  # of the uncompressed file


# SentencePiece models whose license lets a name load them (and the package bundle them):
# Mistral's Apache-2.0 ones. mistral-v1 is the tokenizer.model of Mistral 7B v0.1 and Mixtral
# 8x7B (mistral_common's tokenizer.model.v1, byte for byte); the URL is Mixtral's repo at a
# fixed commit (the repo asks to accept its terms: a slim install then needs HF_TOKEN). Llama 2
# and Gemma have no entry: their custom licenses (Llama 2 Community License, Gemma Terms of Use)
# bind redistribution to their terms and the repos are gated, so they load from the user's own
# files or hf:ORG/REPO with the user's token (docs/vocabularies.md).
SENTENCEPIECE_PRETRAINED: dict[str, PretrainedModel] = {
    p.name: p
    for p in [
        PretrainedModel(
            name="mistral-v1",
            file="mistral-v1.model.gz",
            url=f"{HF_ENDPOINT}/mistralai/Mixtral-8x7B-Instruct-v0.1/resolve/eba92302a2861cdc0098cc54bc9f17cb2c47eb61/"
                "tokenizer.model",
            sha256="dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
        ),
    ]
}


# -- rank files recognized by content -------------------------------------------------------


def _numbered(names: list[str], first_id: int) -> dict[str, int]:
    return {name: first_id + i for i, name in enumerate(names)}


# KNOWN_RANK_FILES: sha256 of a rank file's uncompressed bytes → the facts its tokenizer
# defines in code. Built on first use by the module's __getattr__: its 4,000 special-token
# names are not worth making on every import. Where one file serves several tokenizers the
# file cannot tell them apart, and the first is used: p50k_base.tiktoken is also p50k_edit's
# (pass its FIM special tokens for that), o200k_base's also o200k_harmony's, and r50k_base's
# is also tiktoken's "gpt2" and whisper's gpt2.tiktoken (byte-identical, checked; whisper's
# English models add whisper's special tokens after it).
def _known_rank_files() -> dict[str, RankFileFacts]:
    # openai-whisper 20250625 (PyPI sdist, whisper/tokenizer.py, get_encoding): the language codes
    # in the order of its LANGUAGES table; its special tokens follow the 50,257 BPE ranks of
    # whisper/assets/multilingual.tiktoken in this order, for num_languages=99 (the default of
    # get_encoding; large-v3 uses 100, which adds "yue" and shifts the later ids: pass
    # special_tokens= for it).
    _WHISPER_LANGUAGES = (
        "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la "
        "mi ml cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be "
        "tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su"
    ).split()
    _WHISPER_SPECIALS = _numbered([
        ENDOFTEXT, "<|startoftranscript|>", *[f"<|{code}|>" for code in _WHISPER_LANGUAGES], "<|translate|>",
        "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>",
        *[f"<|{i * 0.02:.2f}|>" for i in range(1501)],
    ], 50257)

    # llama-models 0.3.0 (PyPI wheel, llama_models/llama3/tokenizer.py): Llama 3's pattern (cl100k's
    # original form) and its 256 special tokens after the 128,000 ranks of llama3/tokenizer.model
    # (the same bytes as original/tokenizer.model of meta-llama/Llama-3.1-8B on the Hub, whose
    # sha256 public projects pin). These are the Llama 3.1+ names; Llama 3.0 called some of the
    # same ids <|reserved_special_token_N|> (128004, 128005, 128008, 128010, 128011): pass
    # special_tokens= for its names.
    # Meta's own Tokenizer.encode also cuts texts into 400,000-character chunks and runs of 25,000
    # non-space (or space) characters before tiktoken sees them; wordsplit encodes the whole text,
    # as tiktoken's Encoding does.
    _LLAMA3_NAMED = [
        "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
        "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>",
        "<|eot_id|>", "<|python_tag|>", "<|image|>",
    ]
    _LLAMA3_SPECIALS = _numbered(
        _LLAMA3_NAMED + [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(_LLAMA3_NAMED))], 128000
    )

    # llama-models 0.3.0 (llama_models/llama4/tokenizer.py): o200k's pattern and 2,048 special
    # tokens (BASIC_SPECIAL_TOKENS + LLAMA4_SPECIAL_TOKENS, then reserved ones) after the 200,000
    # ranks of llama4/tokenizer.model.
    _LLAMA4_NAMED = [
        "<|begin_of_text|>", "<|end_of_text|>", FIM_PREFIX, FIM_MIDDLE, FIM_SUFFIX,
        # text post-training
        "<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>",
        *[f"<|text_post_train_reserved_special_token_{i}|>" for i in range(6)],
        "<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>",
        *[f"<|text_post_train_reserved_special_token_{i}|>" for i in range(8, 69)],
        # vision
        "<|image_start|>", "<|image_end|>", "<|vision_reserved_special_token_0|>",
        "<|vision_reserved_special_token_1|>", "<|tile_x_separator|>", "<|tile_y_separator|>",
        *[f"<|vision_reserved_special_token_{i}|>" for i in range(2, 6)],
        "<|image|>", "<|vision_reserved_special_token_6|>", "<|patch|>",
        *[f"<|vision_reserved_special_token_{i}|>" for i in range(7, 1048)],
        # reasoning
        *[f"<|reasoning_reserved_special_token_{i}|>" for i in range(8)],
        "<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>",
    ]
    _LLAMA4_SPECIALS = _numbered(
        _LLAMA4_NAMED + [f"<|reserved_special_token_{i}|>" for i in range(2048 - len(_LLAMA4_NAMED))], 200000
    )

    table: dict[str, RankFileFacts] = {
        PRETRAINED[name].sha256: PRETRAINED[name]
        for name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base", "qwen3")
    }
    table.update({
        # whisper/assets/multilingual.tiktoken of openai-whisper 20250625 (sha256 computed here).
        "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126": RankFileFacts(
            name="whisper-multilingual", pattern=GPT2_ORIGINAL_PATTERN, special_tokens=_WHISPER_SPECIALS,
            eos_token=ENDOFTEXT,
        ),
        # llama_models/llama3/tokenizer.model of llama-models 0.3.0 (sha256 computed here).
        "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55": RankFileFacts(
            name="llama3", pattern=CL100K_ORIGINAL_PATTERN, special_tokens=_LLAMA3_SPECIALS,
            eos_token="<|end_of_text|>",
        ),
        # llama_models/llama4/tokenizer.model of llama-models 0.3.0 (sha256 computed here).
        "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed": RankFileFacts(
            name="llama4", pattern=O200K_PATTERN, special_tokens=_LLAMA4_SPECIALS, eos_token="<|end_of_text|>",
        ),
    })
    return table


def __getattr__(name: str):
    if name == "KNOWN_RANK_FILES":
        globals()[name] = table = _known_rank_files()
        return table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
