"""Write the goldens of the WordPiece, WordLevel, Unigram and BPE-variant test files into
tests/golden/: one ``<family>-<stem>.json.gz`` per tokenizer file of tests/data/wordpiece/ and
tests/data/unigram/ (their SOURCES.md say what each file is).

* A tokenizer.json goes through HF ``tokenizers``. Its golden is named after its model type
  (``wordpiece-``, ``wordlevel-``, ``bpe-``) in tests/data/wordpiece/, ``unigram-`` in
  tests/data/unigram/. Each case holds ``encode(text, add_special_tokens=False).ids``, then
  ``encode(text)`` with the special tokens (ids, type_ids, attention_mask, offsets) and
  ``decode`` of those ids with ``skip_special_tokens`` false and true; ``pair_cases`` do the
  same for ``encode(a, b)``. These run with the file's truncation and padding switched off;
  a file that sets them (all-MiniLM-L6-v2: truncation and fixed padding to 128) also gets
  ``configured_cases`` run as the file says. Offsets are what the Python binding reports:
  character (code point) offsets into the text, not byte offsets.
* A SentencePiece model (``*.model.gz``, ``*.spm.gz``) goes through ``sentencepiece``:
  ``EncodeAsIds``, ``EncodeAsPieces`` and ``DecodeIds`` of those ids. Its golden is
  ``unigram-`` + the stem, whatever the model's type (the record names it).

Both kinds also decode random id sequences (``decode_cases``). The texts are
tools/gen_spm_goldens.py's ``TEXTS`` and its corpus lines (the first 300 non-empty lines of each
tests/data/corpus/*.txt.gz but prose_large) plus ``FAMILY_TEXTS``, which stress what BERT's
normalizer and pre-tokenizer, WordPiece and SentencePiece's character maps decide. The first
keys of a record name the oracle and its version.

Run: python tools/gen_family_goldens.py   (needs tokenizers and sentencepiece, the test-time oracles)
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

import sentencepiece
import tokenizers
from sentencepiece import sentencepiece_model_pb2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_spm_goldens import TEXTS, corpus_lines  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
GOLDEN = ROOT / "tests" / "golden"
GENERATOR = "tools/gen_family_goldens.py"

FAMILY_TEXTS = [
    # accents and case (BERT lowercase and strip_accents, NFKD in ALBERT's normalizer)
    "café", "Café naïve résumé", "Ångström", "ÅNGSTRÖM ångström", "Crème Brûlée", "naïve façade coöperate",
    "e\u0301 decomposed, é composed", "Straße STRASSE", "İstanbul ıi", "ǅ ǆ Ǆ titlecase digraphs", "ΣΑΣ ς σ",
    "HELLO WORLD", "Hello World", "hELLO wORLD", "McDonald's iPhone XR", "ÉCOLE École école",
    # CJK next to Latin (BERT puts spaces around CJK ideographs, not around kana or hangul)
    "我爱NLP和机器学习", "中文abc中文", "日本語とEnglishの混在テキスト", "한국어와 English 혼합",
    "𠀀𠀁 extension B", "〇 ideographic zero", "ＡＢＣ全角ｶﾀｶﾅ", "〜～", "北京2024年奥运会", "漢字かなカナ",
    # control, format and replacement characters (BERT clean_text)
    "a\x00b", "tab\tnl\ncr\r", "\x7f del", "\x85 next line", "soft\u00adhyphen", "zero\u200bwidth\u200cnon\u200djoiner",
    "\ufffd replacement", "\ufffd", "bom\ufeffinside", "\u2028line sep\u2029para sep", "\x1f unit \x1e record",
    "\u0300 leading combining", "a\u0301\u0302\u0303 stacked", "\u200e\u200f marks", "\ue000 private use",
    # punctuation runs and contractions
    "...!!!???", "don't", "U.S.A.", "can't won't isn't", "e.g. i.e. etc.", "(parens) [brackets] {braces}",
    "«guillemets» „quotes“ 'single' \"double\"", "a--b---c", "¿Qué? ¡Sí!", "$100.00 €50 £20 ¥1000", "#hashtag @mention",
    "C++ C# F#", "→ ← ↔ ∀∃ ≤≥", "😀!😀", "don’t curly", "`` quotes ''", "hello,world;foo:bar", "~!@#$%^&*()_+-=",
    # long words (WordPiece max_input_chars_per_word is 100) and words absent from the vocabularies
    "a" * 200, "x" * 100, "x" * 101, "é" * 101, "supercalifragilistic" * 10,
    "Pneumonoultramicroscopicsilicovolcanoconiosis", "antidisestablishmentarianism", "qwxzv zzyzx", "Xyzzy plugh",
    "asdfghjkl", "ʘ‿ʘ ಠ_ಠ", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "\U0001f9e0 brain", "ꙮ multiocular o", "Ꭰ Cherokee ᚠᚢᚦ runes",
    # full-width forms, ligatures, compatibility characters (nmt_nfkc and nfkc character maps)
    "Ｈｅｌｌｏ　Ｗｏｒｌｄ！", "ﬁﬂﬀﬃ", "Ⅻ ⅻ", "㍻ ㎏ ㎞ ℃ ™ №", "ｶﾞ ｶﾟ halfwidth", "ＡＢＣ１２３", "µ vs μ", "Å vs Å",
    "ﷺ", "½ ¼ ² ³", "①②③ ⅰⅱⅲ", "ℌ ℍ ℕ", "…", "‥ two dots",
    # Unicode whitespace
    "a\u00a0b", "a\u2002b\u2003c\u2009d", "a\u3000b", "a\u200ab", "a\u202fb\u205fc", "\u1680ogham", "a\u180eb",
    "  leading and trailing  ", "\t\tindent", "a\vb\fc", "  multiple   spaces  ", "▁▁", "end▁", "a ▁ b",
    # numbers
    "0", "007", "1234567890", "1st 2nd 3rd 4th", "2024-01-15", "12:30:45", "+1 (555) 123-4567", "10%", "-42",
    "0x1F 0b1010", "1e10", "1,000,000.50", "3.14e-10", "12345678901234567890", "٣٤٥ Arabic-Indic", "१२३ Devanagari",
    # special tokens of the families typed as text
    "[CLS] [SEP] [MASK] [PAD] [UNK]", "[cls] [sep]", "hello[MASK]world", "a[SEP]b", "[MASK]ed", "<s>x</s>",
    "<pad><unk><mask>", "<extra_id_0> fill <extra_id_1>", "<|endoftext|>", "<|startoftext|>hi<|endoftext|>",
    # added tokens of fastberttokenizer-issue-100, codons of genslm, words of the Marian pair
    "09.52 англ. 01.01", "Англ текст 12.52", "9.52", "ATG GCC TAA", "ATGGCCTAA", "atg gcc",
    "Manao ahoana ianao?", "Tsara be ny andro anio.",
    # scripts
    "Привет мир", "Ελληνικά", "עברית", "ภาษาไทย", "हिन्दी", "தமிழ்", "ქართული", "Tiếng Việt", "Türkçe ğüşöç",
    "The quick brown fox " * 20,
]

PAIRS = [
    ("", ""), ("Hello", ""), ("", "world"), ("What is it?", "It is a test."), ("我爱NLP", "café"), ("[SEP]", "[CLS]"),
    ("don't", "U.S.A."), ("Ｈｅｌｌｏ", "ﬁﬂ"), ("a" * 200, "b"), ("  spaced  ", "\tx\n"), ("09.52", "англ."),
    ("Ångström", "ÅNGSTRÖM"), ("ATG GCC", "TAA"), ("The quick brown fox " * 10, "jumps over the lazy dog " * 10),
    ("<s>", "</s>"), ("数字123", "4567890"), ("😀", "🦀"), ("\ufffd", "\x00"),
]


def decode_pair(tokenizer, ids: list[int]) -> dict:
    return {"decoded": tokenizer.decode(ids, skip_special_tokens=False),
            "decoded_skip_special": tokenizer.decode(ids, skip_special_tokens=True)}


def encoding(tokenizer, encoded) -> dict:
    return {"ids": encoded.ids, "type_ids": encoded.type_ids, "attention_mask": encoded.attention_mask,
            "offsets": [list(span) for span in encoded.offsets], **decode_pair(tokenizer, encoded.ids)}


def hf_record(path: Path, texts: list[str], rng: random.Random) -> dict:
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8")
    configured = tokenizers.Tokenizer.from_str(text)
    plain = tokenizers.Tokenizer.from_str(text)
    plain.no_truncation()
    plain.no_padding()
    file = json.loads(text)
    cases = []
    for text_ in texts:
        ids = plain.encode(text_, add_special_tokens=False).ids
        cases.append({"text": text_, "ids": ids, "decoded": plain.decode(ids, skip_special_tokens=False),
                      "with_specials": encoding(plain, plain.encode(text_))})
    pair_cases = [{"text": a, "pair": b, **encoding(plain, plain.encode(a, b))} for a, b in PAIRS]
    n = plain.get_vocab_size(with_added_tokens=True)
    added = sorted(plain.get_added_tokens_decoder())
    decode_cases = []
    for _ in range(300):
        pool = rng.choice([range(n), added + list(range(min(n, 500)))])
        ids = [rng.choice(pool) for _ in range(rng.randrange(1, 12))]
        decode_cases.append({"ids": ids, **decode_pair(plain, ids)})
    record = {"oracle": f"tokenizers {tokenizers.__version__}", "generator": GENERATOR,
              "file": str(path.relative_to(ROOT)), "model": type(plain.model).__name__, "n_vocab": n,
              "file_truncation": file.get("truncation"), "file_padding": file.get("padding"),
              "cases": cases, "pair_cases": pair_cases, "decode_cases": decode_cases}
    if file.get("truncation") or file.get("padding"):
        record["configured_cases"] = [{"text": t, **encoding(configured, configured.encode(t))}
                                      for t in TEXTS + FAMILY_TEXTS]
        record["configured_pair_cases"] = [{"text": a, "pair": b, **encoding(configured, configured.encode(a, b))}
                                           for a, b in PAIRS]
    return record


def spm_record(path: Path, texts: list[str], rng: random.Random) -> dict:
    processor = sentencepiece.SentencePieceProcessor(model_proto=gzip.decompress(path.read_bytes()))
    n = processor.get_piece_size()
    cases = []
    for text in texts:
        ids = processor.EncodeAsIds(text)
        cases.append({"text": text, "ids": ids, "pieces": processor.EncodeAsPieces(text),
                      "decoded": processor.DecodeIds(ids)})
    byte_ids = [i for i in range(n) if processor.is_byte(i)]
    special_ids = [i for i in range(n) if processor.is_control(i) or processor.is_unknown(i)]
    decode_cases = []
    for _ in range(300):
        pool = rng.choice([range(n), byte_ids + special_ids + list(range(min(n, 500)))])
        ids = [rng.choice(pool) for _ in range(rng.randrange(1, 12))]
        decode_cases.append({"ids": ids, "decoded": processor.DecodeIds(ids)})
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(gzip.decompress(path.read_bytes()))
    model_type = sentencepiece_model_pb2.TrainerSpec.ModelType.Name(proto.trainer_spec.model_type)
    return {"oracle": f"sentencepiece {sentencepiece.__version__}", "generator": GENERATOR,
            "model": str(path.relative_to(ROOT)), "model_type": model_type, "n_vocab": n,
            "unk_id": processor.unk_id(), "bos_id": processor.bos_id(), "eos_id": processor.eos_id(),
            "pad_id": processor.pad_id(), "cases": cases, "decode_cases": decode_cases}


def golden_files() -> list[tuple[str, Path]]:
    """(golden name, tokenizer file) for every tokenizer file of the two family folders."""
    found = []
    for family in ("wordpiece", "unigram"):
        folder = DATA / family
        for path in sorted(folder.rglob("*")):
            name = path.name
            stem = path.parent.name if path.parent != folder else ""
            if name in ("tokenizer.json", "tokenizer.json.gz"):
                kind = "tokenizers"
            elif name.endswith(".tokenizer.json.gz"):
                kind, stem = "tokenizers", name.removesuffix(".tokenizer.json.gz")
            elif name.endswith((".model.gz", ".spm.gz")):
                kind = "sentencepiece"
                own = name.removesuffix(".gz").rsplit(".", 1)[0]
                stem = f"{stem}.{own}" if stem else own
            else:
                continue
            found.append((family, kind, stem, path))
    named = []
    for family, kind, stem, path in found:
        prefix = family
        if kind == "tokenizers" and family == "wordpiece":
            raw = path.read_bytes()
            text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8")
            prefix = type(tokenizers.Tokenizer.from_str(text).model).__name__.lower()
        named.append((f"{prefix}-{stem}", path))
    return named


def main() -> None:
    texts = TEXTS + FAMILY_TEXTS + corpus_lines()
    for name, path in golden_files():
        rng = random.Random(name)
        if path.name.endswith((".model.gz", ".spm.gz")):
            record = spm_record(path, texts, rng)
        else:
            record = hf_record(path, texts, rng)
        out = GOLDEN / f"{name}.json.gz"
        out.write_bytes(gzip.compress(json.dumps(record, ensure_ascii=False).encode("utf-8"), mtime=0))
        print(out.relative_to(ROOT), f"{out.stat().st_size:,} bytes", len(record["cases"]), "cases")


if __name__ == "__main__":
    main()
