"""The corpora as the benchmark reads them: sizes given on the command line, a corpus file cut
into documents, a stride sample of them, and blocks of them for contenders that take turns; the
command-line arguments of the benches that time one pass over documents of each corpus."""

from __future__ import annotations

import argparse
import gzip
import re
from pathlib import Path


def parse_size(text: str) -> int:
    """``"4MB"`` → 4_000_000, ``"1MiB"`` → 1_048_576, ``"250000"`` → 250_000."""
    match = re.fullmatch(r"\s*([\d.]+)\s*([KMG]i?B?)?\s*", text, re.IGNORECASE)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}")
    unit = (match.group(2) or "").upper().rstrip("B")
    scale = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "KI": 2**10, "MI": 2**20, "GI": 2**30}[unit]
    return int(float(match.group(1)) * scale)


def split_documents(text: str, doc_bytes: int) -> list[str]:
    """Cut ``text`` into documents of about ``doc_bytes`` UTF-8 bytes.

    Paragraphs (ending at a blank line) are packed together until a document reaches
    ``doc_bytes``; a paragraph longer than that is cut every ``doc_bytes`` characters.
    """
    docs, current, size = [], [], 0
    for paragraph in re.split(r"(?<=\n\n)", text):
        for start in range(0, len(paragraph), doc_bytes):
            part = paragraph[start:start + doc_bytes]
            current.append(part)
            size += len(part.encode("utf-8"))
            if size >= doc_bytes:
                docs.append("".join(current))
                current, size = [], 0
    if current:
        docs.append("".join(current))
    return docs


def stride_sample(docs: list[str], max_bytes: int) -> list[int]:
    """Indices of documents spread evenly over ``docs`` whose sizes add up to ≈ ``max_bytes``."""
    total = utf8_len(docs)
    if total <= max_bytes:
        return list(range(len(docs)))
    take = max(1, round(len(docs) * max_bytes / total))
    return sorted({j * len(docs) // take for j in range(take)})


def read_corpus(corpus_dir: Path, name: str) -> str:
    with gzip.open(corpus_dir / f"{name}.txt.gz", "rt", encoding="utf-8", newline="") as f:
        return f.read()


def add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments :func:`corpus_documents` reads: the corpus directory, the corpora, and how
    much of each to take in documents of what size."""
    parser.add_argument("corpus_dir", nargs="?", type=Path)
    parser.add_argument("--corpora", default="prose,code,multilingual")
    parser.add_argument("--max-bytes", type=parse_size, default=parse_size("4MB"),
                        help="the first this many characters of each corpus (0: all)")
    parser.add_argument("--doc-bytes", type=parse_size, default=parse_size("16KB"))


def corpus_documents(args: argparse.Namespace) -> dict[str, list[str]]:
    """Each corpus of ``args`` (see :func:`add_corpus_arguments`): its first ``max_bytes``
    characters cut into documents."""
    from corpus import corpus_dir

    names = args.corpora.split(",")
    directory = corpus_dir(args.corpus_dir, names)
    corpora = {}
    for name in names:
        text = read_corpus(directory, name)
        corpora[name] = split_documents(text[:args.max_bytes] if args.max_bytes else text, args.doc_bytes)
    return corpora


def utf8_len(texts: list[str]) -> int:
    return sum(len(t.encode("utf-8")) for t in texts)


def doc_blocks(docs: list[str], block_bytes: int) -> list[list[int]]:
    """Consecutive runs of document indices of at least ``block_bytes`` UTF-8 bytes each (the
    last one may be shorter)."""
    blocks, block, size = [], [], 0
    for i, doc in enumerate(docs):
        block.append(i)
        size += len(doc.encode("utf-8"))
        if size >= block_bytes or i == len(docs) - 1:
            blocks.append(block)
            block, size = [], 0
    return blocks
