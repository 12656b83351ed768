"""The tokenizers the benchmark times, each behind the same small interface.

A :class:`Contender` is one library configured for one vocabulary: an ``encode`` (text →
ids, special-token strings as plain text), an ``encode_batch`` on a given number of threads
and a ``decode``.
Contenders are named by a *key* (``"wordsplit:auto"``, ``"wordsplit:native:heap-merge:regex"``,
``"wordsplit:python"``, ``"tiktoken"``, ``"tokenizers"``, ``"tokenizers1"``, ``"quicktok"``,
``"gigatoken"``, ``"fastokens"``, ``"tokie"``, ``"kitoken"``, ``"splintr"``) so a subprocess probe
can rebuild exactly the one the parent asked for: :func:`make_contender`. A key ending in
``+numpy`` (``"gigatoken+numpy"``) is the same library returning a numpy array per document
instead of a Python list (:data:`NUMPY`), so the two output shapes are timed side by side.

Every library is imported lazily, inside its factory, so a probe that times import + load
sees only the library it measures. All peers run offline: :func:`prepare_data_dir` writes
tiktoken's cache files and a Hugging Face ``tokenizer.json`` per vocabulary from wordsplit's own
data.

A contender may name another Python interpreter (:func:`interpreter`): HF tokenizers 1.x cannot
share a process, nor a virtual environment, with the 0.23 that transformers pins, so it runs in
a worker process (``worker.py``) started with the Python of its own environment.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import json
import os
import pickle
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

# numpy's OpenBLAS starts a thread per core when numpy is imported, and each spins (calling
# sched_yield) for about 0.1-0.2 s before it sleeps. No contender calls BLAS, but the bench
# times the CPU of the whole process, so the spin was billed to whoever ran next: the
# contender that loads fastest after its factory imports numpy (wordsplit's first blocks:
# one pass over cl100k_base prose measured 155 MB/s instead of 230). With one thread,
# OpenBLAS starts none. Set before any import of numpy: every bench process and probe imports
# this module first, and the processes they start inherit it.
os.environ["OPENBLAS_NUM_THREADS"] = "1"

REPO = Path(__file__).resolve().parent.parent
VOCAB_DATA = REPO / "src" / "wordsplit" / "vocabs" / "data"
HF_QWEN3_JSON_GZ = REPO / "tests" / "data" / "hf" / "tokenizer.json.gz"
# The virtual environments of README.md's install commands (untracked; see .gitignore).
PEERS_DIR = REPO / ".peers"
OPENAI_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
OPENAI_VOCABS = ("cl100k_base", "o200k_base", "r50k_base", "p50k_base")
VOCABS = ("cl100k_base", "o200k_base", "qwen3")
# The reference each vocabulary's ids are checked against.
ORACLE = {"cl100k_base": "tiktoken", "o200k_base": "tiktoken", "qwen3": "tokenizers"}
HF_VOCABS = ("qwen3",)  # vocabularies with a Hugging Face tokenizer.json of their own
# The interpreter each contender key runs in when it is not this one's: ``--python KEY=PATH``
# (bench.py) puts a JSON object here for every process it starts; without one, a key of
# DEFAULT_PYTHONS whose interpreter exists runs there.
PYTHONS_ENV = "WORDSPLIT_BENCH_PYTHONS"
DEFAULT_PYTHONS = {"tokenizers1": PEERS_DIR / "hf1" / "bin" / "python"}
BATCH_THREADS = 2
NUMPY = "+numpy"  # key suffix: the library's numpy output form
IMPORT = "import:"  # key prefix: "import:MODULE:FUNCTION", a contender made by FUNCTION(vocab)
# Set by prepare_data_dir; subprocess probes inherit it.
DATA_ENV = "WORDSPLIT_BENCH_DATA"


@dataclass
class Contender:
    """One library set up for one vocabulary.

    ``encode_batch(texts, threads)`` returns the library's own batch result (quicktok: a flat
    array plus offsets) and ``batch_ids`` turns that into ``list[list[int]]`` for the parity
    check, so the timed call does no conversion the library would not do itself.
    ``batch_threads_fixed``: the library sets its thread count once per process (HF,
    gigatoken and fastokens, by ``RAYON_NUM_THREADS``), so ``threads`` must be
    ``BATCH_THREADS`` and its batch scaling is not measured.
    ``numpy``: the contender of key ``key + NUMPY`` (a numpy array per document, and the
    library's flat or array batch form), for libraries that have one.
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
    numpy: Optional["Contender"] = None


def as_id_list(ids) -> list[int]:
    """A list of ints from any id sequence a contender returns (list, numpy array, memoryview)."""
    return ids if isinstance(ids, list) else ids.tolist()


def flat_batch_ids(ids, offsets) -> list[list[int]]:
    """``list[list[int]]`` from one flat id buffer and its ``len + 1`` offsets."""
    ids, offsets = as_id_list(ids), as_id_list(offsets)
    return [ids[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]


def _numpy_form(base: Contender, encode: Callable, encode_batch: Optional[Callable] = None,
                batch_ids: Optional[Callable] = None, what: str = "") -> Contender:
    """The contender ``base.key + NUMPY``: ``base`` with a numpy encode (and batch) form."""
    return Contender(key=base.key + NUMPY, label=base.label + " numpy", vocab=base.vocab, encode=encode,
                     encode_batch=encode_batch, batch_threads_fixed=base.batch_threads_fixed,
                     batch_ids=batch_ids or base.batch_ids, decode=base.decode,
                     notes=[f"{base.label} numpy: {what}"] if what else [])


def prepare_data_dir(path: Path) -> None:
    """Write the files the peers load offline into ``path`` and point the environment at it.

    - tiktoken: ``<sha1(url)>`` files (its cache layout) from the bundled ``*.tiktoken.gz``;
      ``TIKTOKEN_CACHE_DIR`` is set so ``tiktoken.get_encoding`` never goes online.
    - tiktoken's stand-in for qwen3: ``qwen3.tiktoken`` (Qwen3's ranks, same file format).
    - Hugging Face: ``qwen3-tokenizer.json`` (Qwen3's own tokenizer.json, from the tests), and
      ``cl100k_base-tokenizer.json``, ``o200k_base-tokenizer.json`` written by wordsplit's
      ``tokenizer_json`` from the bundled rank files (their pattern, byte-level BPE, merges in rank
      order), for the peers that load only tokenizer.json files (tokie, HF tokenizers). About
      20 s: o200k's merge list is built in Python.
    - ``<name>.pattern``: the split pattern of cl100k_base and o200k_base, for peers that
      load a bare rank file (fastokens).
    """
    path.mkdir(parents=True, exist_ok=True)
    for name in OPENAI_VOCABS:
        sha = hashlib.sha1(OPENAI_URL.format(name=name).encode()).hexdigest()
        (path / sha).write_bytes(gzip.decompress((VOCAB_DATA / f"{name}.tiktoken.gz").read_bytes()))
    (path / "qwen3.tiktoken").write_bytes(gzip.decompress((VOCAB_DATA / "qwen3.tiktoken.gz").read_bytes()))
    (path / "qwen3-tokenizer.json").write_bytes(gzip.decompress(HF_QWEN3_JSON_GZ.read_bytes()))
    os.environ["TIKTOKEN_CACHE_DIR"] = str(path)
    os.environ[DATA_ENV] = str(path)
    import tiktoken
    from wordsplit import load_vocab
    from wordsplit.patterns import CL100K_ORIGINAL_PATTERN
    from wordsplit.training.save import tokenizer_json

    for name in ("cl100k_base", "o200k_base"):
        (path / f"{name}-tokenizer.json").write_text(tokenizer_json(load_vocab(name)), encoding="utf-8")

    # The split pattern a rank file does not carry, for fastokens (a file, so its load time does
    # not include importing anything else). cl100k_base in the spelling of the tokenizer.json
    # files published for it (no possessive quantifiers, as in o200k_base's own): fastokens'
    # hand-written pre-tokenizer recognizes that spelling, while tiktoken's possessive one runs
    # through its regex engine at a quarter of the speed. The two split alike (wordsplit's
    # cl100k scanner is proven for both); every document's ids are checked against tiktoken's.
    patterns = {"cl100k_base": CL100K_ORIGINAL_PATTERN, "o200k_base": tiktoken.get_encoding("o200k_base")._pat_str}
    for name, pattern in patterns.items():
        (path / f"{name}.pattern").write_text(pattern, encoding="utf-8")


def _data_dir() -> Path:
    return Path(os.environ[DATA_ENV])


def _tokenizer_json(vocab: str) -> Path:
    """The tokenizer.json of ``vocab`` that :func:`prepare_data_dir` wrote, or ``vocab`` itself
    when it is the path of a ``.json`` file (the word-model benches give their files so)."""
    if vocab.endswith(".json") and Path(vocab).is_file():
        return Path(vocab)
    path = _data_dir() / f"{vocab}-tokenizer.json"
    if not path.is_file():
        raise LookupError(f"no tokenizer.json for {vocab}")
    return path


def shown(path: str) -> str:
    """``path`` as the report shows it: relative to the repository when inside it."""
    absolute = Path(os.path.normpath(os.path.abspath(path)))
    return str(absolute.relative_to(REPO)) if absolute.is_relative_to(REPO) else path


def interpreter(key: str) -> Optional[str]:
    """The Python that contender ``key`` (its numpy form alike) runs in, when it is not this
    process's: from ``$WORDSPLIT_BENCH_PYTHONS`` (a JSON object, key → path), else
    DEFAULT_PYTHONS if that file exists; ``None``: this process.

    >>> os.environ[PYTHONS_ENV] = '{"tokie": "/opt/py/bin/python"}'
    >>> interpreter("tokie+numpy"), interpreter("tiktoken")
    ('/opt/py/bin/python', None)
    >>> del os.environ[PYTHONS_ENV]
    """
    base = key.removesuffix(NUMPY)
    chosen = json.loads(os.environ.get(PYTHONS_ENV) or "{}")
    python = chosen.get(base)
    if python is None and base in DEFAULT_PYTHONS and DEFAULT_PYTHONS[base].is_file():
        python = str(DEFAULT_PYTHONS[base])
    # not realpath: a virtual environment's python is a symlink to the base interpreter, and
    # which environment it runs is decided by the link's own path
    if python is None or os.path.normpath(os.path.abspath(python)) == os.path.normpath(os.path.abspath(sys.executable)):
        return None
    return python


# -- wordsplit ------------------------------------------------------------------------------


# The vocabularies a wordsplit contender of this process was built on (see `_own_vocab`).
_WORDSPLIT_VOCABS: set[str] = set()


def _own_vocab(vocab: str):
    """The vocabulary a new wordsplit contender is built on: the one ``load_vocab`` keeps for
    the process for the first contender of ``vocab`` (as a user's tokenizer gets it; a load
    probe builds only that one), a private copy for each other. Tokenizers built on one loaded
    vocabulary share each thread's piece caches (docs/design.md), so contenders taking turns
    over the same documents (the list and numpy forms, the encoder variants) would warm them
    for each other: a pass after another over the same block would not be a first pass, and a
    warm pass would start with the lines its sibling just read. Each is timed as a tokenizer of
    its own, as each peer's two forms are two instances of it."""
    from wordsplit import load_vocab

    loaded = load_vocab(vocab)
    if vocab not in _WORDSPLIT_VOCABS:
        _WORDSPLIT_VOCABS.add(vocab)
        return loaded
    return pickle.loads(pickle.dumps(loaded))  # the same tokens, tables of its own


def _wordsplit(key: str, vocab: str, label: str, **options) -> Contender:
    from wordsplit import TokenizerOptions

    tok = TokenizerOptions(**options).build(_own_vocab(vocab))
    base = Contender(
        key=key,
        # encoder_name is newer than some builds --baseline compares with; their encoders had .name
        label=label.format(spanner=tok.spanner_name, backend=tok.backend,
                           encoder=getattr(tok, "encoder_name", None) or getattr(tok.encoder, "name", "?")),
        vocab=vocab,
        encode=tok.encode_ordinary,
        encode_batch=lambda texts, threads: tok.encode_batch(texts, num_threads=threads, disallowed_special=()),
        decode=tok.decode,
    )
    if key == "wordsplit:auto" and hasattr(tok, "encode_batch_flat"):
        # wordsplit's numpy form of one document: encode_to_numpy (an array holding the native ids,
        # no copy); builds without it (a --baseline) take the flat batch of a one-text batch.
        # numpy is imported where the numpy form first runs, not here: the load probe times
        # this factory, and the list form, what it measures, needs no numpy.
        flat = tok.encode_batch_flat
        if hasattr(tok, "encode_to_numpy"):
            one = lambda text: tok.encode_to_numpy(text, disallowed_special=())  # noqa: E731
            what = "`encode_to_numpy(doc, disallowed_special=())`"
        else:
            def one(text):
                import numpy as np

                return np.frombuffer(flat([text], num_threads=1, disallowed_special=())[0], np.uint32)
            what = "`encode_batch_flat([doc])`, the uint32 buffer as a numpy array"
        base.numpy = _numpy_form(
            base, one, lambda texts, threads: flat(texts, num_threads=threads, disallowed_special=()),
            lambda result: flat_batch_ids(*result),
            f"{what}; batch: `encode_batch_flat(docs)`, one flat buffer + offsets")
    return base


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
    base = Contender(
        key="tiktoken", label=label, vocab=vocab, encode=enc.encode_ordinary,
        encode_batch=lambda texts, threads: enc.encode_ordinary_batch(texts, num_threads=threads),
        decode=enc.decode, notes=notes,
    )
    # encode_to_numpy has encode's special-token policy: disallowed_special=() makes it ordinary
    base.numpy = _numpy_form(base, lambda text: enc.encode_to_numpy(text, disallowed_special=()),
                             what="`encode_to_numpy(text, disallowed_special=())`; no numpy batch form")
    return base


def _tokenizers(vocab: str) -> Contender:
    """HF tokenizers 0.23 (the one transformers pins): the oracle for qwen3, a peer on the
    tokenizer.json files written for the OpenAI vocabularies."""
    os.environ.setdefault("RAYON_NUM_THREADS", str(BATCH_THREADS))
    from tokenizers import Tokenizer, __version__

    if int(__version__.split(".")[0]) >= 1:
        raise ImportError(f"tokenizers {__version__} here; the key `tokenizers` is 0.23 (`tokenizers1` is 1.x)")
    tok = Tokenizer.from_file(str(_tokenizer_json(vocab)))
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


# gigatoken's names for the OpenAI pre-tokenizers (its from_tiktoken takes one for any rank file)
GIGATOKEN_PRETOKENIZER = {"cl100k_base": "gpt4", "o200k_base": "o200k", "r50k_base": "gpt2"}


def _rayon_threads() -> None:
    """gigatoken, fastokens and HF size one rayon pool per process, from ``RAYON_NUM_THREADS``
    (default: every core); the batch section runs them on ``BATCH_THREADS``."""
    os.environ.setdefault("RAYON_NUM_THREADS", str(BATCH_THREADS))


def _openai_rank_file(vocab: str) -> Path:
    return _data_dir() / hashlib.sha1(OPENAI_URL.format(name=vocab).encode()).hexdigest()


def _gigatoken(vocab: str) -> Contender:
    """gigatoken's own API (its fastest; the tiktoken/HF compatibility wrappers add checks):
    ``BPETokenizer.encode`` returns a numpy uint32 array, ``encode_batch_list`` plain lists
    built in Rust, ``encode_batch`` an awkward array; ``decode`` returns bytes.

    OpenAI vocabularies load from their rank file with the pre-tokenizer named and no special
    tokens (gigatoken always matches the special tokens it knows, so with none every string is
    plain text, as ``encode_ordinary`` does); qwen3 loads Qwen3's tokenizer.json (with its NFC
    step and its added tokens: the corpora hold none of their strings)."""
    _rayon_threads()
    import gigatoken

    if vocab in GIGATOKEN_PRETOKENIZER:
        tok = gigatoken.Tokenizer.from_tiktoken(_openai_rank_file(vocab), pretokenizer=GIGATOKEN_PRETOKENIZER[vocab],
                                                special_tokens={})
    elif vocab in HF_VOCABS:
        tok = gigatoken.Tokenizer.from_json((_data_dir() / f"{vocab}-tokenizer.json").read_bytes())
    else:
        raise LookupError(f"no gigatoken setup for {vocab}")
    backend = tok.backend
    batch_list = backend.encode_batch_list
    base = Contender(
        key="gigatoken", label="gigatoken", vocab=vocab,
        encode=lambda text: batch_list([text], parallel=False)[0],
        encode_batch=lambda texts, threads: batch_list(texts, parallel=threads > 1),
        batch_threads_fixed=True,
        decode=lambda ids: backend.decode(ids).decode("utf-8", errors="replace"),
        notes=["gigatoken list = `encode_batch_list([doc], parallel=False)[0]` (its tiktoken wrapper's "
               "`encode_ordinary`); batch: `encode_batch_list(docs)` on its rayon pool"],
    )
    base.numpy = _numpy_form(base, backend.encode,
                             lambda texts, threads: backend.encode_batch(texts, parallel=threads > 1),
                             lambda result: result.to_list(),
                             "`BPETokenizer.encode(doc)` (a uint32 array); "
                             "batch: `encode_batch(docs)`, an awkward array")
    return base


def _fastokens(vocab: str) -> Contender:
    """fastokens: ``Tokenizer.encode_ordinary(text).ids`` (a list; special-token strings as
    text), and ``encode_batch_flat`` (one little-endian uint32 buffer + uint64 offsets, no
    Python int per token) as its numpy form. OpenAI vocabularies load with ``from_tiktoken``
    (the rank file, tiktoken's pattern, no special tokens), qwen3 from its tokenizer.json."""
    _rayon_threads()
    import fastokens

    pattern = _data_dir() / f"{vocab}.pattern"
    if pattern.is_file():
        tok = fastokens.Tokenizer.from_tiktoken(str(_openai_rank_file(vocab)), pattern=pattern.read_text("utf-8"),
                                                special_tokens={})
    elif vocab in HF_VOCABS:
        tok = fastokens.Tokenizer.from_file(str(_data_dir() / f"{vocab}-tokenizer.json"))
    else:
        raise LookupError(f"no fastokens setup for {vocab}")
    encode, flat = tok.encode_ordinary, tok.encode_batch_flat

    # numpy is imported where the numpy form runs (see `_wordsplit`).
    def flat_ids(result) -> list[list[int]]:
        import numpy as np

        return flat_batch_ids(np.frombuffer(result[0], np.uint32), np.frombuffer(result[1], np.uint64))

    def one(text):
        import numpy as np

        return np.frombuffer(flat([text], split_special_tokens=True)[0], np.uint32)

    base = Contender(
        key="fastokens", label="fastokens", vocab=vocab, encode=lambda text: encode(text).ids,
        encode_batch=lambda texts, threads: [e.ids for e in tok.encode_batch(texts, split_special_tokens=True)],
        batch_threads_fixed=True, decode=tok.decode,
    )
    base.numpy = _numpy_form(
        base, one,
        lambda texts, threads: flat(texts, split_special_tokens=True), flat_ids,
        "`np.frombuffer(encode_batch_flat([doc])[0], np.uint32)`; batch: `encode_batch_flat(docs)` (bytes + offsets)")
    return base


def _tokenizers1(vocab: str) -> Contender:
    """HF tokenizers 1.x, in the interpreter of its own environment (:func:`interpreter`): the
    same tokenizer.json as 0.23; ``encode(text, add_special_tokens=False).ids``, and its numpy
    form ``.ids_array`` (a uint32 array)."""
    os.environ.setdefault("RAYON_NUM_THREADS", str(BATCH_THREADS))
    from tokenizers import Tokenizer, __version__

    if int(__version__.split(".")[0]) < 1:
        raise ImportError(f"tokenizers {__version__} in {sys.executable}: tokenizers1 needs 1.x, in a virtual "
                          "environment of its own (benches/README.md)")
    tok = Tokenizer.from_file(str(_tokenizer_json(vocab)))
    label = f"HF tokenizers {__version__}"
    base = Contender(
        key="tokenizers1", label=label, vocab=vocab,
        encode=lambda text: tok.encode(text, add_special_tokens=False).ids,
        encode_batch=lambda texts, threads: [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)],
        batch_threads_fixed=True,
        decode=lambda ids: tok.decode(ids, skip_special_tokens=False),
    )
    base.numpy = _numpy_form(base, lambda text: tok.encode(text, add_special_tokens=False).ids_array,
                             what="`encode(doc, add_special_tokens=False).ids_array` (a uint32 array)")
    return base


def _tokie(vocab: str) -> Contender:
    """tokie (loads tokenizer.json files only): ``encode(text, add_special_tokens=False).ids``.
    Its ``encode_bytes`` skips the pre-tokenizer's byte-level mapping (its ids differ), and it
    has no numpy form per document."""
    _rayon_threads()
    import tokie

    tok = tokie.Tokenizer.from_json(str(_tokenizer_json(vocab)))
    return Contender(
        key="tokie", label="tokie", vocab=vocab,
        encode=lambda text: tok.encode(text, add_special_tokens=False).ids,
        encode_batch=lambda texts, threads: [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)],
        batch_threads_fixed=True, decode=tok.decode,
    )


def _kitoken(vocab: str) -> Contender:
    """kitoken: OpenAI vocabularies from their rank file (``from_tiktoken_file``, which knows
    their patterns), qwen3 from its tokenizer.json (``from_tokenizers_file``);
    ``encode(text, False)`` (special-token strings as text). No numpy form."""
    import kitoken

    if vocab in GIGATOKEN_PRETOKENIZER:
        tok = kitoken.Kitoken.from_tiktoken_file(str(_openai_rank_file(vocab)))
    else:
        tok = kitoken.Kitoken.from_tokenizers_file(str(_tokenizer_json(vocab)))
    return Contender(
        key="kitoken", label="kitoken", vocab=vocab, encode=lambda text: tok.encode(text, False),
        encode_batch=lambda texts, threads: tok.encode_all(texts, False),
        batch_threads_fixed=True,
        decode=lambda ids: tok.decode(ids, False).decode("utf-8", errors="replace"),
    )


def _splintr(vocab: str) -> Contender:
    """splintr (PyPI ``splintr-rs``): OpenAI vocabularies as ``Tokenizer(rank file, its pattern
    constant, {})`` (no special tokens, no template: ``encode`` is sequential and ordinary),
    qwen3 as ``splintr.from_json(tokenizer.json)`` with ``encode_ordinary``. Numpy form:
    ``encode_flat`` (uint32 bytes) as an array."""
    _rayon_threads()
    import splintr

    patterns = {"cl100k_base": "CL100K_BASE_PATTERN", "o200k_base": "O200K_BASE_PATTERN"}
    if vocab in patterns:
        tok = splintr.Tokenizer(str(_openai_rank_file(vocab)), getattr(splintr, patterns[vocab]), {})
        encode = tok.encode
    else:
        tok = splintr.from_json(str(_tokenizer_json(vocab)))
        encode = tok.encode_ordinary
    flat = tok.encode_flat

    def one(text):
        import numpy as np

        return np.frombuffer(flat(text), np.uint32)

    base = Contender(
        key="splintr", label="splintr", vocab=vocab, encode=encode,
        encode_batch=lambda texts, threads: tok.encode_batch(texts), batch_threads_fixed=True,
        decode=tok.decode,
    )
    base.numpy = _numpy_form(base, one, what="`np.frombuffer(encode_flat(doc), np.uint32)`")
    return base


# The peers in report order; the ones with a numpy form per document get a `+numpy` twin.
PEERS = ("tiktoken", "tokenizers", "tokenizers1", "quicktok", "gigatoken", "fastokens", "tokie", "kitoken",
         "splintr")
NO_NUMPY = ("tokenizers", "quicktok", "tokie", "kitoken")


def peer_keys(vocab: str, numpy: bool = False) -> list[str]:
    """The other libraries, for any ``vocab`` (one that cannot load it fails when built and is
    listed as such); with ``numpy``, each one's numpy form right after it."""
    return [f for k in PEERS for f in ([k, k + NUMPY] if numpy and k not in NO_NUMPY else [k])]


def encoder_keys(vocab: str) -> list[str]:
    """wordsplit auto, every native encoder (with the auto spanner), then the peers: the
    contenders of the worst-case and piece-length measurements."""
    encoders = sorted({k.split(":")[2] for k in wordsplit_variant_keys()})
    return ["wordsplit:auto"] + [f"wordsplit:native:{e}:auto" for e in encoders] + peer_keys(vocab)


def make_contender(key: str, vocab: str) -> Contender:
    """Build the contender named ``key`` for ``vocab``; raises if it cannot be built."""
    if key.endswith(NUMPY):
        base = make_contender(key.removesuffix(NUMPY), vocab)
        if base.numpy is None:
            raise LookupError(f"{base.label} has no numpy output form")
        return base.numpy
    if key == "wordsplit:auto":
        return _wordsplit(key, vocab, "ws auto ({spanner}+{encoder})")
    if key == "wordsplit:python":
        return _wordsplit(key, vocab, "ws python ({spanner}+{encoder})", backend="python")
    if key.startswith("wordsplit:native:"):
        _, _, encoder, spanner = key.split(":")
        return _wordsplit(key, vocab, "ws {encoder}+{spanner}", backend="native", encoder=encoder, spanner=spanner)
    if key.startswith(IMPORT):
        # a contender from any module: "import:MODULE:FUNCTION", FUNCTION(vocab) -> Contender
        _, module, function = key.split(":")
        contender = getattr(importlib.import_module(module), function)(vocab)
        contender.key = key
        return contender
    factories = {"tiktoken": _tiktoken, "tokenizers": _tokenizers, "tokenizers1": _tokenizers1,
                 "quicktok": _quicktok, "gigatoken": _gigatoken, "fastokens": _fastokens, "tokie": _tokie,
                 "kitoken": _kitoken, "splintr": _splintr}
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
