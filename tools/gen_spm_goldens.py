"""Write the SentencePiece goldens into tests/golden/: ``sentencepiece-`` + the model's stem, and
``tokenizers-`` + the file's stem for the SentencePiece-style tokenizer.json files of
tests/data/spm/ (made by tools/gen_spm_tokenizer_json.py), with HF ``tokenizers``.

For each model in tests/data/spm/, the ids ``sentencepiece`` gives for a text set rich in what
its rules decide (leading, repeated and trailing spaces, whitespace runs, newlines, tabs, text
after what looks like a special token, emoji, CJK, characters outside the vocabulary that fall
back to bytes, user-defined pieces, control pieces typed as text) plus every line of the test
corpora, and the text it decodes from those ids and from random id sequences (byte pieces,
control pieces and ``<unk>`` among them). The first record names the oracle and its version.

For a tokenizer.json the ids are HF's ``encode(text, add_special_tokens=False)`` (added and
special tokens always matched) and the text its ``decode(ids, skip_special_tokens=False)``.

Run: python tools/gen_spm_goldens.py   (needs sentencepiece and tokenizers, the test-time oracles)
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import sentencepiece
import tokenizers

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "data" / "spm"
CORPUS = ROOT / "tests" / "data" / "corpus"
GOLDEN = ROOT / "tests" / "golden"

TEXTS = [
    "", " ", "  ", "\t", "\n", "a", " a", "  a", "a ", "a  ", " a b  c   d ", "Hello world", "Hello  world",
    "Hello\tworld\n", "line one\nline two\r\n\r\nthree", "\n\n\nx", "x\n\n\n", " \n \t ", "\u3000全角\u3000スペース",
    "\u00a0nbsp\u00a0", "tabs\t\t\tand  spaces   mixed \t \n", "数字123 and 4567890 digits", "3.14159, 2,718",
    "日本語のテキストと中文文本", "한국어 텍스트", "Ελληνικά κείμενο", "العربية نص", "עברית", "Русский текст",
    "emoji 😀 🦀🦀 👩‍👩‍👧‍👦 🇫🇷", "e\u0301 combining", "Zalgo z̷̢͔a̴l̸g̶o̵", "\u200b\u200d\ufeff", "\x00\x01\x07\x1b[31m",
    "𝕳𝖊𝖑𝖑𝖔 𝓌𝑜𝓇𝓁𝒹", "ﬁ ligature Ⅻ ①", "\U0010fffd\U000e0041 private use", "▁already▁escaped ▁", "▁",
    "<s>", "</s>", "<unk>", "<s>Hello</s>", "[INST] What is 2+2? [/INST]", "[INST]x[/INST]", "[TOOL_CALLS] []",
    "[control_8] text", "[REF]doc[/REF]", "a[REFERENCE_DOC_1]b", "[REFERENCE_DOC_1][REFERENCE_DOC_10]",
    " [REF] spaced [/REF] ", "def f(x):\n    return x ** 2  # square\n", "    indented\n        more",
    "<0x41> is a byte piece's text", "http://example.com/path?q=1&r=2#frag", "email@example.com",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", " " * 40 + "x", "x" + " " * 40, "=" * 64, "-" * 33,
    "😀" * 20, "ab" * 50, "The quick brown fox jumps over the lazy dog.",
]


def corpus_lines() -> list[str]:
    lines = []
    for path in sorted(CORPUS.glob("*.txt.gz")):
        if path.name.startswith("prose_large"):
            continue
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
        lines += [line for line in text.split("\n") if line][:300]
    return lines


def main() -> None:
    rng = random.Random(27)
    for model in sorted(MODELS.glob("*.model")):
        processor = sentencepiece.SentencePieceProcessor(model_file=str(model))
        n = processor.get_piece_size()
        texts = TEXTS + corpus_lines()
        cases = []
        for text in texts:
            ids = processor.encode(text)
            cases.append({"text": text, "ids": ids, "decoded": processor.decode(ids)})
        byte_ids = [i for i in range(n) if processor.is_byte(i)]
        special_ids = [i for i in range(n) if processor.is_control(i) or processor.is_unknown(i)]
        decode_cases = []
        for _ in range(400):
            pool = rng.choice([range(n), byte_ids, byte_ids + special_ids + list(range(n))[:2000]])
            ids = [rng.choice(pool) for _ in range(rng.randrange(1, 12))]
            decode_cases.append({"ids": ids, "decoded": processor.decode(ids)})
        record = {"oracle": f"sentencepiece {sentencepiece.__version__}", "generator": "tools/gen_spm_goldens.py",
                  "model": model.name, "n_vocab": n, "bos_id": processor.bos_id(), "eos_id": processor.eos_id(),
                  "cases": cases, "decode_cases": decode_cases}
        out = GOLDEN / f"sentencepiece-{model.stem}.json.gz"
        out.write_bytes(gzip.compress(json.dumps(record, ensure_ascii=False).encode("utf-8"), mtime=0))
        print(out.relative_to(ROOT), len(cases), "cases,", len(decode_cases), "decode cases")
    for path in sorted(MODELS.glob("*.tokenizer.json.gz")):
        hf = tokenizers.Tokenizer.from_str(gzip.decompress(path.read_bytes()).decode("utf-8"))
        n = hf.get_vocab_size()
        cases = []
        for text in TEXTS + corpus_lines():
            ids = hf.encode(text, add_special_tokens=False).ids
            cases.append({"text": text, "ids": ids, "decoded": hf.decode(ids, skip_special_tokens=False)})
        decode_cases = []
        for _ in range(400):
            ids = [rng.randrange(n) for _ in range(rng.randrange(1, 12))]
            decode_cases.append({"ids": ids, "decoded": hf.decode(ids, skip_special_tokens=False)})
        record = {"oracle": f"tokenizers {tokenizers.__version__}", "generator": "tools/gen_spm_goldens.py",
                  "file": path.name, "n_vocab": n, "cases": cases, "decode_cases": decode_cases}
        out = GOLDEN / f"tokenizers-{path.name.removesuffix('.tokenizer.json.gz')}.json.gz"
        out.write_bytes(gzip.compress(json.dumps(record, ensure_ascii=False).encode("utf-8"), mtime=0))
        print(out.relative_to(ROOT), len(cases), "cases,", len(decode_cases), "decode cases")


if __name__ == "__main__":
    main()
