"""The tokenizers the benchmark times, each behind the same small interface.

A :class:`Contender` is one library configured for one vocabulary: an ``encode`` (text →
ids, special-token strings as plain text), an ``encode_batch`` on a given number of threads
and a ``decode``.
Contenders are named by a *key* (``"wordsplit:auto"``, ``"wordsplit:native:heap-merge:regex"``,
``"wordsplit:python"``, ``"tiktoken"``, ``"tokenizers"``, ``"quicktok"``) so a subprocess
probe can rebuild exactly the one the parent asked for: :func:`make_contender`.

Every library is imported lazily, inside its factory, so a probe that times import + load
sees only the library it measures. All peers run offline: :func:`prepare_data_dir` writes
tiktoken's cache files and Hugging Face's ``tokenizer.json`` from wordsplit's own data.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

REPO = Path(__file__).resolve().parent.parent
VOCAB_DATA = REPO / "src" / "wordsplit" / "vocabs" / "data"
HF_QWEN3_JSON_GZ = REPO / "tests" / "data" / "hf" / "tokenizer.json.gz"
OPENAI_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
OPENAI_VOCABS = ("cl100k_base", "o200k_base", "r50k_base", "p50k_base")
VOCABS = ("cl100k_base", "o200k_base", "qwen3")
# The reference each vocabulary's ids are checked against.
ORACLE = {"cl100k_base": "tiktoken", "o200k_base": "tiktoken", "qwen3": "tokenizers"}
HF_VOCABS = ("qwen3",)  # vocabularies with a Hugging Face tokenizer.json to compare with
BATCH_THREADS = 2
# Set by prepare_data_dir; subprocess probes inherit it.
DATA_ENV = "WORDSPLIT_BENCH_DATA"


@dataclass
class Contender:
    """One library set up for one vocabulary.

    ``encode_batch(texts, threads)`` returns the library's own batch result (quicktok: a flat
    array plus offsets) and ``batch_ids`` turns that into ``list[list[int]]`` for the parity
    check, so the timed call does no conversion the library would not do itself.
    ``batch_threads_fixed``: the library sets its thread count once per process (HF, by
    ``RAYON_NUM_THREADS``), so ``threads`` must be ``BATCH_THREADS`` and its batch scaling is
    not measured.
    """

    key: str
    label: str
    vocab: str
    encode: Callable[[str], list[int]]
    encode_batch: Optional[Callable[[list[str], int], Any]] = None
    batch_threads_fixed: bool = False
    batch_ids: Callable[[Any], list[list[int]]] = lambda result: [list(ids) for ids in result]
    decode: Optional[Callable[[list[int]], str]] = None
    notes: list[str] = field(default_factory=list)


def prepare_data_dir(path: Path) -> None:
    """Write the files the peers load offline into ``path`` and point the environment at it.

    - tiktoken: ``<sha1(url)>`` files (its cache layout) from the bundled ``*.tiktoken.gz``;
      ``TIKTOKEN_CACHE_DIR`` is set so ``tiktoken.get_encoding`` never goes online.
    - tiktoken's stand-in for qwen3: ``qwen3.tiktoken`` (Qwen3's ranks, same file format).
    - Hugging Face: ``qwen3-tokenizer.json`` (Qwen3's own tokenizer.json, from the tests).
    """
    path.mkdir(parents=True, exist_ok=True)
    for name in OPENAI_VOCABS:
        sha = hashlib.sha1(OPENAI_URL.format(name=name).encode()).hexdigest()
        (path / sha).write_bytes(gzip.decompress((VOCAB_DATA / f"{name}.tiktoken.gz").read_bytes()))
    (path / "qwen3.tiktoken").write_bytes(gzip.decompress((VOCAB_DATA / "qwen3.tiktoken.gz").read_bytes()))
    (path / "qwen3-tokenizer.json").write_bytes(gzip.decompress(HF_QWEN3_JSON_GZ.read_bytes()))
    os.environ["TIKTOKEN_CACHE_DIR"] = str(path)
    os.environ[DATA_ENV] = str(path)


def _data_dir() -> Path:
    return Path(os.environ[DATA_ENV])


# -- wordsplit ------------------------------------------------------------------------------


def _wordsplit(key: str, vocab: str, label: str, **options) -> Contender:
    from wordsplit import TokenizerOptions, load_vocab

    tok = TokenizerOptions(**options).build(load_vocab(vocab))
    return Contender(
        key=key,
        # encoder_name is newer than some builds --baseline compares with; their encoders had .name
        label=label.format(spanner=tok.spanner_name, backend=tok.backend,
                           encoder=getattr(tok, "encoder_name", None) or getattr(tok.encoder, "name", "?")),
        vocab=vocab,
        encode=tok.encode_ordinary,
        encode_batch=lambda texts, threads: tok.encode_batch(texts, num_threads=threads, disallowed_special=()),
        decode=tok.decode,
    )


def wordsplit_variant_keys() -> list[str]:
    """Keys of every native spanner × encoder combination registered right now.

    Names come from the registries (aliases folded to their canonical name), so spanners and
    encoders added later are benchmarked without editing this file.
    """
    from wordsplit.encoders import ENCODERS
    from wordsplit.spanners import SPANNERS

    encoders = sorted({ENCODERS.canonical(n) for n in ENCODERS.names()})
    spanners = sorted({SPANNERS.canonical(n) for n in SPANNERS.names()})
    return [f"wordsplit:native:{e}:{s}" for s in spanners for e in encoders]


# -- peers ----------------------------------------------------------------------------------


def _tiktoken(vocab: str) -> Contender:
    import tiktoken

    if vocab in OPENAI_VOCABS:
        enc = tiktoken.get_encoding(vocab)
        label, notes = "tiktoken", []
    else:
        # No official tiktoken qwen3: the same engine on Qwen3's ranks and pattern, as a speed
        # baseline. It skips Qwen3's NFC step, so it can differ on non-NFC input.
        from tiktoken.load import load_tiktoken_bpe
        from wordsplit.patterns import QWEN2_PATTERN

        ranks = load_tiktoken_bpe(str(_data_dir() / "qwen3.tiktoken"))
        enc = tiktoken.Encoding("qwen3-ranks", pat_str=QWEN2_PATTERN, mergeable_ranks=ranks, special_tokens={})
        label, notes = "tiktoken*", ["tiktoken* = tiktoken's engine on Qwen3's ranks and pattern, without NFC"]
    return Contender(
        key="tiktoken", label=label, vocab=vocab, encode=enc.encode_ordinary,
        encode_batch=lambda texts, threads: enc.encode_ordinary_batch(texts, num_threads=threads),
        decode=enc.decode, notes=notes,
    )


def _tokenizers(vocab: str) -> Contender:
    if vocab not in HF_VOCABS:
        raise LookupError("no Hugging Face tokenizer.json for this vocabulary")
    os.environ.setdefault("RAYON_NUM_THREADS", str(BATCH_THREADS))
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(_data_dir() / "qwen3-tokenizer.json"))
    return Contender(
        key="tokenizers", label="HF tokenizers", vocab=vocab,
        encode=lambda text: tok.encode(text, add_special_tokens=False).ids,
        encode_batch=lambda texts, threads: [e.ids for e in tok.encode_batch_fast(texts, add_special_tokens=False)],
        batch_threads_fixed=True,
        decode=lambda ids: tok.decode(ids, skip_special_tokens=False),
    )


def _quicktok(vocab: str) -> Contender:
    import quicktok

    enc = quicktok.get_encoding(vocab)  # bundled data: cl100k_base, o200k_base, qwen3

    def batch_ids(result) -> list[list[int]]:
        tokens, offsets = result
        return [tokens[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]

    return Contender(
        key="quicktok", label="quicktok-v1", vocab=vocab, encode=enc.encode_ordinary,
        encode_batch=lambda texts, threads: enc.encode_batch(texts, threads),
        batch_ids=batch_ids, decode=enc.decode,
        notes=["quicktok-v1 encode_batch returns one flat uint32 array + offsets (no per-document lists)"],
    )


def peer_keys(vocab: str) -> list[str]:
    """The other libraries that can encode ``vocab``."""
    return ["tiktoken", *(["tokenizers"] if vocab in HF_VOCABS else []), "quicktok"]


def make_contender(key: str, vocab: str) -> Contender:
    """Build the contender named ``key`` for ``vocab``; raises if it cannot be built."""
    if key == "wordsplit:auto":
        return _wordsplit(key, vocab, "ws auto ({spanner}+{encoder})")
    if key == "wordsplit:python":
        return _wordsplit(key, vocab, "ws python ({spanner}+{encoder})", backend="python")
    if key.startswith("wordsplit:native:"):
        _, _, encoder, spanner = key.split(":")
        return _wordsplit(key, vocab, "ws {encoder}+{spanner}", backend="native", encoder=encoder, spanner=spanner)
    factories = {"tiktoken": _tiktoken, "tokenizers": _tokenizers, "quicktok": _quicktok}
    if key not in factories:
        raise KeyError(f"unknown contender {key!r}")
    return factories[key](vocab)


def build_contenders(keys: list[str], vocab: str) -> tuple[list[Contender], dict[str, str]]:
    """The contenders among ``keys`` that build for ``vocab``, and why the others did not."""
    built, skipped = [], {}
    for key in keys:
        try:
            built.append(make_contender(key, vocab))
        except Exception as err:  # noqa: BLE001 -- any failure means "not benchmarkable here"
            skipped[key] = f"{type(err).__name__}: {err}"
    return built, skipped
