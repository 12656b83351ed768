"""Write the expected results of the Rust vocabulary readers (crates/wordsplit/src/formats/) from the
Python loaders, for every real vocabulary file the repository has, plus the tokenizer.json
variants and derived entries this script makes. Run from the repository root:

    python tools/gen_format_digests.py            # writes tests/data/formats/
    python tools/gen_format_digests.py --check    # exits 1 if anything there is stale (the tests do this)

``tests/data/formats/digests.json`` lists each case: the reader, its input files and a digest of
what the Python loader makes of it (the name, pattern, normalizer name, n_vocab, the sha256 of the
BPE tokens in id order and of the special and added tokens in their order, the flags, the sha256 of the pair-ranked
merges, and the other fields; for a WordPiece, WordLevel or CharacterBpe (HF's BPE over characters)
tokenizer.json of tests/data/wordpiece/, its pipeline's text in place of the pattern and normalizer;
for a Unigram tokenizer.json or SentencePiece Unigram model of tests/data/unigram/, its pipeline's
text and the sha256 of its scores).
``crates/wordsplit/tests/formats.rs`` reads every input with the Rust reader and compares its
digest with this one, so the two languages cannot drift apart.

The tokenizer.json variants are cut from Qwen3's (its first 3,000 tokens) and changed where the
Rust reader has a decision to make: NFC, Qwen's Split pre-tokenizer, added tokens with flags,
one that a vocab entry also has; merges as pairs and out of merged-id order (pair-ranked), a
missing byte with an unk token; a Sequence of ByteLevel alone with ignore_merges. The derived
entries are what ``store/derived.py`` writes for r50k_base and for two of the variants.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import struct
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "formats"
sys.path.insert(0, str(ROOT / "src"))

from generated_files import write_or_check  # noqa: E402  (tools/, the script's own folder)

from wordsplit import load_vocab  # noqa: E402  (after the path is set)
from wordsplit.errors import UnsupportedTokenizerError  # noqa: E402
from wordsplit.spec import CharacterBpe, Unigram, WordLevel, WordPiece, normalizer_name  # noqa: E402
from wordsplit.formats import read_file, with_tokenizer_config  # noqa: E402
from wordsplit.formats.hf import load_hf_tokenizer_json, load_vocab_merges  # noqa: E402
from wordsplit.formats.tiktoken import load_tiktoken  # noqa: E402
from wordsplit.store.derived import dump_vocab, read_vocab  # noqa: E402
from wordsplit.vocab import Vocab  # noqa: E402
from wordsplit.vocabs.pretrained import ALIASES, PRETRAINED  # noqa: E402

BUNDLED = "src/wordsplit/vocabs/data"
QWEN_JSON = "tests/data/hf/tokenizer.json.gz"
WORD_MODELS = "tests/data/wordpiece"
UNIGRAM = "tests/data/unigram"


def digest(vocab: Vocab) -> dict:
    """What the Rust test compares: every field of the vocabulary, the tables as sha256."""
    tokens = hashlib.sha256()
    for piece, i in sorted(vocab.ranks.items(), key=lambda kv: kv[1]):
        tokens.update(i.to_bytes(4, "little") + len(piece).to_bytes(4, "little") + piece)
    merges = None
    if vocab.merges is not None:
        table = hashlib.sha256()
        for (left, right), rank in sorted(vocab.merges.items()):
            table.update(b"".join(v.to_bytes(4, "little") for v in (left, right, rank)))
        merges = {"count": len(vocab.merges), "sha256": table.hexdigest()}
    template = vocab.chat_template

    def literals(table) -> dict:
        h = hashlib.sha256()
        for text, i in table.items():
            data = text.encode("utf-8")
            h.update(i.to_bytes(4, "little") + len(data).to_bytes(4, "little") + data)
        return {"count": len(table), "sha256": h.hexdigest()}

    return {
        # (the normalizer by the name the Rust core gives its stage: "none", "nfc")
        "name": vocab.name, "pattern": vocab.pattern, "normalizer": normalizer_name(vocab.normalizer),
        "n_vocab": vocab.n_vocab,
        "n_tokens": len(vocab.ranks), "tokens_sha256": tokens.hexdigest(),
        "special_tokens": literals(vocab.special_tokens), "added_tokens": literals(vocab.added_tokens),
        "literal_flags": dict(sorted(vocab.literal_flags.items())), "merges": merges,
        "whole_piece_lookup": vocab.whole_piece_lookup, "eos_token_id": vocab.eos_token_id,
        "bos_token_id": vocab.bos_token_id, "unk_token_id": vocab.unk_token_id, "fuse_unk": vocab.fuse_unk,
        "chat_template_sha256": None if template is None else hashlib.sha256(template.encode()).hexdigest(),
    }


def _qwen_slice() -> dict:
    """Qwen3's tokenizer.json cut to its first 3,000 tokens and the merges that make them."""
    spec = json.loads(gzip.decompress((ROOT / QWEN_JSON).read_bytes()))
    vocab = {text: i for text, i in spec["model"]["vocab"].items() if i < 3000}
    spec["model"]["vocab"] = vocab
    spec["model"]["merges"] = [m for m in spec["model"]["merges"] if "".join(m) in vocab]  # (["a", "b"] pairs)
    spec.update(added_tokens=[], post_processor=None)
    return spec


def _added(i: int, content: str, *, special: bool, **flags) -> dict:
    entry = {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": not special, "special": special}
    entry.update(flags)
    return entry


def variants() -> dict[str, dict]:
    """The tokenizer.json variants, by file name."""
    flags = _qwen_slice()
    flags["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFC"}]}
    flags["model"]["merges"] = [" ".join(m) for m in flags["model"]["merges"]]  # the "a b" spelling
    flags["decoder"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    # GPT-2's way: <|endoftext|> in the vocab and as a special token (set aside from the ranks).
    flags["model"]["vocab"]["<|endoftext|>"] = 3000
    the = "the" if "the" in flags["model"]["vocab"] else next(t for t in flags["model"]["vocab"] if len(t) == 3)
    flags["added_tokens"] = [
        _added(3000, "<|endoftext|>", special=True),
        _added(3001, "<think>", special=False, lstrip=True, rstrip=True),
        _added(3002, "<tool>", special=False, single_word=True, normalized=False),
        _added(9999, the, special=False),  # HF gives it the vocab entry's id
        _added(3003, "<|im_end|>", special=True, rstrip=True),
    ]

    pairs = _qwen_slice()
    merges = pairs["model"]["merges"]
    merges[10], merges[11] = merges[11], merges[10]  # out of merged-id order: pair-ranked
    pairs["model"].update(unk_token="<unk>", fuse_unk=True)
    del pairs["model"]["vocab"]["ÿ"]  # byte 0xFF has no token: it becomes <unk>
    pairs["model"]["vocab"]["<unk>"] = 3000
    pairs["added_tokens"] = [_added(3000, "<unk>", special=True)]
    pairs["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}

    sequence = _qwen_slice()
    sequence["model"]["ignore_merges"] = True
    sequence["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True}]}
    sequence["model"]["vocab"]["<|endoftext|>"] = 3000
    sequence["added_tokens"] = [_added(3000, "<|endoftext|>", special=True)]
    return {"qwen-slice-nfc-flags.json.gz": flags, "qwen-slice-pair-ranked.json.gz": pairs,
            "qwen-slice-sequence.json.gz": sequence}


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def render(cache_dir: Path) -> dict[str, bytes]:
    """Every file of tests/data/formats/, by name."""
    files: dict[str, bytes] = {}
    cases: list[dict] = []
    for path in sorted((ROOT / BUNDLED).glob("*.tiktoken.gz")) + sorted((ROOT / "tests/data/tiktoken").glob("*.gz")):
        relative = path.relative_to(ROOT).as_posix()
        cases.append({"reader": "tiktoken", "input": relative, "expected": digest(load_tiktoken(relative))})
    for name in [*PRETRAINED, *ALIASES]:
        file = PRETRAINED[ALIASES.get(name, name)].file
        vocab = load_vocab(name, cache_dir=cache_dir)
        cases.append({"reader": "named", "name": name, "input": f"{BUNDLED}/{file}", "expected": digest(vocab)})
    qwen = load_hf_tokenizer_json(QWEN_JSON)
    cases.append({"reader": "tokenizer.json", "input": QWEN_JSON, "expected": digest(qwen)})
    # With the tokenizer_config.json beside it (eos, bos, chat template), as load_vocab reads it.
    config = "tests/data/hf/tokenizer_config.json"
    with_config = with_tokenizer_config(qwen, read_file(config))
    cases.append({"reader": "tokenizer.json", "input": QWEN_JSON, "config": config, "expected": digest(with_config)})
    for vocab_file, merges_file, config in (("vocab.json.gz", "merges.txt.gz", "tokenizer_config.json"),
                                            ("gpt2-encoder.json.gz", "gpt2-vocab.bpe.gz", None)):
        inputs = {"input": f"tests/data/hf/{vocab_file}", "merges": f"tests/data/hf/{merges_file}",
                  "config": config and f"tests/data/hf/{config}"}
        vocab = load_vocab_merges(inputs["input"], inputs["merges"], inputs["config"])
        cases.append({"reader": "vocab.json", **inputs, "expected": digest(vocab)})
    # The word-model files (WordPiece, WordLevel): their pipeline, which the Rust reader writes
    # the same text of, in place of the pattern and normalizer byte-level BPE has.
    for path in sorted((ROOT / WORD_MODELS).glob("*/tokenizer.json*")):
        vocab = load_hf_tokenizer_json(path)
        if not isinstance(vocab.pipeline.model, (WordPiece, WordLevel)):
            continue
        expected = {key: value for key, value in digest(vocab).items() if key not in ("pattern", "normalizer")}
        cases.append({"reader": "word model", "input": path.relative_to(ROOT).as_posix(),
                      "expected": {**expected, "pipeline": vocab.pipeline.dumps()}})
    # The files of HF's BPE over characters (CLIP's, tokenizer-wiki's, Tortoise's): their
    # pipeline and pair-ranked merges.
    for path in sorted((ROOT / WORD_MODELS).glob("*/tokenizer.json*")):
        vocab = load_hf_tokenizer_json(path)
        if not isinstance(vocab.pipeline.model, CharacterBpe):
            continue
        expected = {key: value for key, value in digest(vocab).items() if key not in ("pattern", "normalizer")}
        cases.append({"reader": "character bpe", "input": path.relative_to(ROOT).as_posix(),
                      "expected": {**expected, "pipeline": vocab.pipeline.dumps()}})
    # The Unigram files: their pipeline and scores (the Rust reader refuses a file whose
    # pipeline has a normalizer the core does not run; the Rust test checks that it is so).
    unigram_files = [*sorted((ROOT / UNIGRAM).glob("*.tokenizer.json.gz")),
                     *sorted((ROOT / UNIGRAM).glob("*/tokenizer.json*")), *sorted((ROOT / UNIGRAM).glob("*.model.gz"))]
    for path in unigram_files:
        try:
            vocab = load_vocab(path)
        except UnsupportedTokenizerError:
            continue  # (the Python package refuses it: a denormalizer, UNUSED pieces)
        if not isinstance(vocab.pipeline.model, Unigram):
            continue
        scores = hashlib.sha256(b"".join(struct.pack("<d", score) for score in vocab.scores)).hexdigest()
        expected = {key: value for key, value in digest(vocab).items() if key not in ("pattern", "normalizer")}
        config = path.parent / "tokenizer_config.json"  # (load_vocab reads it beside a tokenizer.json)
        config = config.relative_to(ROOT).as_posix() if path.name.startswith("tokenizer.json") and config.exists() \
            else None
        cases.append({"reader": "unigram", "input": path.relative_to(ROOT).as_posix(), "config": config,
                      "expected": {**expected, "pipeline": vocab.pipeline.dumps(), "scores_sha256": scores}})
    loaded = {}
    for file, spec in variants().items():
        files[file] = _gz(json.dumps(spec, ensure_ascii=False).encode())
        relative = f"tests/data/formats/{file}"
        (cache_dir / file).write_bytes(files[file])
        loaded[file] = vocab = load_hf_tokenizer_json(cache_dir / file, name=file.removesuffix(".json.gz"))
        cases.append({"reader": "tokenizer.json", "input": relative, "expected": digest(vocab)})
    flags = loaded["qwen-slice-nfc-flags.json.gz"]
    blob, ids, lengths = flags.packed()
    # Every header field set: eos, bos and a chat template too.
    full = Vocab.from_packed(blob=blob, ids=ids, lengths=lengths, **{
        **flags._fields(), "eos_token_id": 3003, "bos_token_id": 3000, "source": "qwen-slice-nfc-flags",
        "chat_template": "{% for m in messages %}{{ m.content }}<|im_end|>{% endfor %}"})
    pairs = loaded["qwen-slice-pair-ranked.json.gz"]
    pairs = Vocab.from_packed(blob=pairs.packed()[0], ids=pairs.packed()[1], lengths=pairs.packed()[2],
                              **{**pairs._fields(), "source": "qwen-slice-pair-ranked"})
    for file, vocab in (("r50k_base.vocab.gz", load_vocab("r50k_base", cache_dir=cache_dir)),
                        ("qwen-slice-nfc-flags.vocab.gz", full), ("qwen-slice-pair-ranked.vocab.gz", pairs)):
        entry = dump_vocab(vocab, label=vocab.name)
        files[file] = _gz(entry)
        relative = f"tests/data/formats/{file}"
        cases.append({"reader": "derived", "input": relative, "expected": digest(read_vocab(entry))})
    files["digests.json"] = (json.dumps({"cases": cases}, indent=1, ensure_ascii=False) + "\n").encode()
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if tests/data/formats/ is stale")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache_dir:
        files = render(Path(cache_dir))
    return write_or_check({OUT / name: data for name, data in files.items()}, check=args.check,
                          command="python tools/gen_format_digests.py")


if __name__ == "__main__":
    sys.exit(main())
