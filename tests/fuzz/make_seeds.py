"""Write the seed inputs of every fuzz target into ``corpus/<target>/seed-*``.

Seeds are small valid inputs the mutations start from: a 400-token slice of Qwen3's
vocabulary in every file format (the 256 bytes, the first 144 merges, one special and one
added token), texts, id lists and command lines. Run it again only to change the seeds:

    python tests/fuzz/make_seeds.py

Findings are kept beside the seeds as ``crash-<sha1>`` files; this script leaves them alone.
"""

from __future__ import annotations

import gzip
import json
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"
CORPUS = HERE / "corpus"
MERGES_SEPARATOR = b"\n\x00MERGES\x00\n"  # = fuzz_targets.MERGES_SEPARATOR (kept importable without wordsplit)
N_TOKENS = 400


def qwen_slice() -> tuple[dict, list[list[str]], dict]:
    """Qwen3's first 400 tokens, the merges that make them, and the whole tokenizer.json."""
    spec = json.loads(gzip.decompress((DATA / "hf" / "tokenizer.json.gz").read_bytes()))
    vocab = {token: i for token, i in spec["model"]["vocab"].items() if i < N_TOKENS}
    merges = spec["model"]["merges"][: N_TOKENS - 256]
    return vocab, merges, spec


def tokenizer_json(vocab, merges, spec) -> bytes:
    small = dict(spec)
    small["model"] = {**spec["model"], "vocab": vocab, "merges": merges}
    small["added_tokens"] = [
        {**spec["added_tokens"][0], "id": N_TOKENS},  # <|endoftext|>, special
        {"id": N_TOKENS + 1, "content": "<think>", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": False},
    ]
    return json.dumps(small, ensure_ascii=False, indent=1).encode()


def gguf_file(vocab, merges) -> bytes:
    """A GGUF (ggml's docs/gguf.md layout, version 3) with the slice as a gpt2/qwen2 tokenizer."""
    def gstr(text: str) -> bytes:
        data = text.encode()
        return struct.pack("<Q", len(data)) + data

    def kv(key: str, kind: int, payload: bytes) -> bytes:
        return gstr(key) + struct.pack("<I", kind) + payload

    STRING, ARRAY, I32, U32 = 8, 9, 5, 4
    tokens = sorted(vocab, key=vocab.get) + ["<|endoftext|>", "<think>"]
    types = [1] * len(vocab) + [3, 4]
    kvs = [
        kv("general.name", STRING, gstr("fuzz-seed")),
        kv("tokenizer.ggml.model", STRING, gstr("gpt2")),
        kv("tokenizer.ggml.pre", STRING, gstr("qwen2")),
        kv("tokenizer.ggml.tokens", ARRAY, struct.pack("<IQ", STRING, len(tokens)) + b"".join(map(gstr, tokens))),
        kv("tokenizer.ggml.token_type", ARRAY,
           struct.pack("<IQ", I32, len(types)) + struct.pack(f"<{len(types)}i", *types)),
        kv("tokenizer.ggml.merges", ARRAY,
           struct.pack("<IQ", STRING, len(merges)) + b"".join(gstr(" ".join(m)) for m in merges)),
        kv("tokenizer.ggml.eos_token_id", U32, struct.pack("<I", N_TOKENS)),
    ]
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs)


def tiktoken_file(n: int) -> bytes:
    lines = gzip.decompress((HERE.parents[1] / "src/wordsplit/vocabs/data/r50k_base.tiktoken.gz").read_bytes())
    return b"\n".join(lines.splitlines()[:n]) + b"\n"


def gpt2_files(n_merges: int = 144) -> bytes:
    """GPT-2's encoder.json (its 256 bytes and the tokens its first merges make) + vocab.bpe."""
    encoder = json.loads(gzip.decompress((DATA / "hf" / "gpt2-encoder.json.gz").read_bytes()))
    bpe = gzip.decompress((DATA / "hf" / "gpt2-vocab.bpe.gz").read_bytes()).decode().splitlines()
    merges = [line for line in bpe[1:] if line][:n_merges]
    made = {left + right for left, right in (m.split(" ") for m in merges)}
    small = {token: i for token, i in encoder.items() if i < 256 or token in made}
    return (json.dumps(small, ensure_ascii=False).encode() + MERGES_SEPARATOR
            + ("\n".join([bpe[0], *merges]) + "\n").encode())


def seeds() -> dict[str, dict[str, bytes]]:
    vocab, merges, spec = qwen_slice()
    merges_txt = ("#version: 0.2\n" + "\n".join(" ".join(m) for m in merges) + "\n").encode()
    vocab_json = json.dumps(vocab, ensure_ascii=False).encode()
    prose = gzip.decompress((DATA / "corpus" / "prose.txt.gz").read_bytes())[:300]
    multilingual = gzip.decompress((DATA / "corpus" / "multilingual.txt.gz").read_bytes())[:300]
    return {
        "tiktoken-file": {"r50k-300": tiktoken_file(300), "r50k-600": tiktoken_file(600)},
        "tokenizer-json": {"qwen3-400": tokenizer_json(vocab, merges, spec)},
        "vocab-merges": {"qwen3-400": vocab_json + MERGES_SEPARATOR + merges_txt, "gpt2-files": gpt2_files()},
        "gguf": {"qwen3-400": gguf_file(vocab, merges)},
        # first byte: the vocabulary; second: how the text is read (see fuzz_targets.text_from)
        "encode": {
            "prose": b"\x00\x00" + prose,
            "multilingual": b"\x01\x00" + multilingual,
            "interesting": b"\x02\x01" + bytes(range(256)),
            "codepoints": b"\x03\x02" + bytes(range(0, 256, 3)) * 3,
            "specials": b"\x04\x00<|endoftext|> <think>x</think>\r\n\r\n   \t1234567",
        },
        "decode": {
            "in-range": b"\x00" + struct.pack("<8i", 14990, 1879, 151643, 0, 255, 256, 151668, 100),
            "edges": b"\x01" + struct.pack("<6i", -1, 2**31 - 1, 100256, 100257, 100276, 100277),
        },
        "cli": {
            "encode": b"\x00hello world",
            "encode-vocab": b"\x00--vocab\x00cl100k_base\x00--special\x00allow\x00<|endoftext|>x",
            "decode": b"\x0114990\x001879",
            "count-stdin": b"\x02--vocab\x00o200k_base\x00\x00some text on stdin\n",
            "show": b"\x03--ids\x00hello world",
            "explain": b"\x04hello",
            "compare": b"\x05some text\x00--vocab\x00qwen3,cl100k_base",
            "vocabs": b"\x06",
        },
    }


def main() -> None:
    for target, files in seeds().items():
        folder = CORPUS / target
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("seed-*"):
            old.unlink()
        for name, data in files.items():
            (folder / f"seed-{name}").write_bytes(data)
        print(f"{target}: {len(files)} seeds")


if __name__ == "__main__":
    main()
