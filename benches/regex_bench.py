"""The generic regex spanner against the hand-written scanners and tiktoken, same pattern and
ranks: the speed of a vocabulary whose pattern no scanner handles.

    python benches/regex_bench.py [CORPUS_DIR] [--max-bytes 500KB] [--runs 3] [--json out.json] > table.md

Cases (each a pattern on a set of ranks):

- ``cl100k_base``: tiktoken's cl100k pattern and ranks (the cl100k scanner exists);
- ``qwen3``: Qwen3's pattern, ranks and NFC (the qwen2 scanner exists);
- ``llama3``: Meta's Llama 3 pattern on cl100k's ranks (Llama 3's rank file is not bundled;
  the pattern is cl100k's original spelling, which the cl100k scanner is proven for);
- ``llama3-gguf``: the same pattern as llama.cpp spells it (``'[sS]`` for ``(?i:'s)``), which
  no scanner claims: what a Llama 3 GGUF file gets;
- ``deepseek-llm``: llama.cpp's sequence of six regexes for ``deepseek-llm`` GGUF files, on
  cl100k's ranks, run by the native regex sequence (tiktoken cannot express a sequence: its
  row is tiktoken on cl100k's own pattern and ranks, a reference speed, not the same
  tokenizer).
- ``whitespace-split`` and ``whitespace``: HF programs that delete text, Qwen3's tokenizer.json
  (ranks, NFC) with the pre-tokenizer ``Sequence[WhitespaceSplit, ByteLevel]`` or
  ``Sequence[Whitespace, ByteLevel(add_prefix_space)]``. Contenders: ``ws program`` (the
  native split program), ``ws program (Python)`` (the Python ``HFSplitSpanner`` feeding the
  native encoder), ``hf tokenizers`` (the oracle), and, for the speed the program should come
  close to, ``ws regex``: the native regex spanner on ByteLevel's own pattern with the same
  ranks and NFC (a covering pattern, so a different tokenizer, not checked) and tiktoken on
  that pattern and ranks.

Contenders: ``ws regex`` (``TokenizerOptions(spanner="regex")``, the native generic spanner),
``ws scanner`` (``spanner="auto"``, where a scanner claims the pattern) and ``tiktoken``
(``tiktoken.Encoding(pat_str=..., mergeable_ranks=...)``). Each document (~16 KB) of a stride
sample of each corpus is encoded once per contender and run, single thread, timed by the
process's CPU time; the contenders take turns a block of documents at a time, the first of
each block rotating. Each run builds every contender afresh, so wordsplit's piece and DFA
caches start cold. The first run's ids are checked against the oracle's: tiktoken where it is
the same tokenizer, else wordsplit's scanner (qwen3: tiktoken has no NFC step) or, for the
sequence, a pure-Python reference (the ``regex`` module, llama.cpp's semantics) feeding
wordsplit's native encoder. Markdown goes to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Optional

from corpus import CORPUS_ENV, corpus_dir
from documents import doc_blocks, parse_size, read_corpus, split_documents, stride_sample, utf8_len
from passes import compare

# Meta's Llama 3 pattern (tokenizer.json / tiktoken model of Llama 3.x).
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# llama.cpp's adaptation of it (llama-vocab.cpp, LLAMA_VOCAB_PRE_TYPE_LLAMA3).
LLAMA3_GGUF_PATTERN = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# llama.cpp's regexes for LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_LLM (llama-vocab.cpp), applied in turn. The
# characters that NFC would change (U+1F7D, U+1FBE, U+1FD3, U+1FDB, U+2126, U+212A) are escaped,
# so no editor or copy can normalize the ranges.
DEEPSEEK_LLM_REGEXES = [
    "[\r\n]",
    "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-"
    "ὗὙὛὝὟ-\u1f7dᾀ-ᾴᾶ-ᾼ\u1fbeῂ-ῄῆ-ῌῐ-\u1fd3ῖ-\u1fdbῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212a-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-"
    "ﬗＡ-Ｚａ-ｚ\U00010400-\U0001044f𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
    "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
    "\\s+$",
    "[一-龥ࠀ-一가-퟿]+",
    "\\p{N}+",
]
CASES = ("cl100k_base", "qwen3", "llama3", "llama3-gguf", "deepseek-llm", "whitespace-split", "whitespace")
REGEX, SCANNER, TIKTOKEN = "ws regex", "ws scanner", "tiktoken"
PROGRAM, PY_PROGRAM, HF = "ws program", "ws program (Python)", "hf tokenizers"
# The dropping programs' cases: the HF pre-tokenizer steps before ByteLevel, and its add_prefix_space.
PROGRAM_CASES = {"whitespace-split": ([{"type": "WhitespaceSplit"}], False),
                 "whitespace": ([{"type": "Whitespace"}], True)}
QWEN3_JSON = Path(__file__).resolve().parent.parent / "tests" / "data" / "hf" / "tokenizer.json.gz"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class Contender:
    label: str
    encode: Callable[[str], list[int]]
    note: str = ""


@dataclass
class Case:
    """One pattern on one set of ranks: its contenders (built afresh per run) and the oracle."""

    name: str
    build: Callable[[], dict[str, Contender]]
    oracle: str
    notes: list[str] = field(default_factory=list)
    # Contenders that are a different tokenizer (speed references): not checked.
    unchecked: tuple[str, ...] = ()


def _tiktoken(name: str, pattern: str, ranks) -> Contender:
    import tiktoken

    enc = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=dict(ranks), special_tokens={})
    return Contender(TIKTOKEN, enc.encode_ordinary)


def _wordsplit(vocab, spanner: str) -> Contender:
    from wordsplit import TokenizerOptions

    tok = TokenizerOptions(spanner=spanner, backend="native").build(vocab)
    if not tok.native:
        raise RuntimeError(f"{vocab.name}: spanner {spanner!r} does not run natively ({tok.spanner_name})")
    if spanner == "auto" and tok.spanner_name == "regex":
        raise RuntimeError(f"{vocab.name}: no scanner claims the pattern")
    label = REGEX if spanner == "regex" else SCANNER
    return Contender(label, tok.encode_ordinary, note=f"{label} = {tok.spanner_name}+{tok.encoder_name}")


def reference_sequence(patterns: list[str]):
    """llama.cpp's pre-tokenizer semantics on the ``regex`` module with wordsplit's Unicode 16.0
    classes: each regex cuts every piece of the previous one into its matches and the text
    between them."""
    import regex

    from wordsplit.spanners.regex import translate_pattern

    compiled = [regex.compile(translate_pattern(p)) for p in patterns]

    class Reference:
        def split(self, text: str) -> list[str]:
            pieces = [text] if text else []
            for pattern in compiled:
                out = []
                for piece in pieces:
                    pos = 0
                    for m in pattern.finditer(piece):
                        if m.start() > pos:
                            out.append(piece[pos:m.start()])
                        if m.end() > m.start():
                            out.append(m.group())
                        pos = max(pos, m.end())
                    if pos < len(piece):
                        out.append(piece[pos:])
                pieces = out
            return pieces

    return Reference()


def _sequence(vocab, name: str, patterns: list[str], python: bool = False) -> Contender:
    """A native Pipeline running ``patterns`` as a sequence (or, ``python``, the reference)."""
    from wordsplit._native import Pipeline
    from wordsplit.spanners.regex import native_pattern

    spanner = {"spanner_impl": reference_sequence(patterns)} if python else {
        "patterns": [native_pattern(p) for p in patterns]}
    pipeline = Pipeline(vocab.native_tables(), encoder="auto", spanner=name, pattern="", literals=[],
                        normalizer="none", **spanner)
    if pipeline.native == python:
        raise RuntimeError(f"{name}: the pipeline is {'not ' if not pipeline.native else ''}native")
    policy = pipeline.policy(None, [])
    return Contender(REGEX if not python else "python reference", lambda text: pipeline.encode(text, policy),
                     note=f"{REGEX} = the native regex sequence ({len(patterns)} regexes)+auto")


def _program_case(name: str) -> Case:
    """A tokenizer.json whose pre-tokenizer deletes text (see the module docs)."""
    import gzip

    from tokenizers import Tokenizer

    from wordsplit import TokenizerOptions, Vocab
    from wordsplit._native import Pipeline
    from wordsplit.formats.hf import read_hf_tokenizer_json
    from wordsplit.patterns import GPT2_ORIGINAL_PATTERN
    from wordsplit.spanners import HFSplitSpanner

    steps, prefix_space = PROGRAM_CASES[name]
    spec = json.loads(gzip.decompress(QWEN3_JSON.read_bytes()))
    spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        *steps, {"type": "ByteLevel", "add_prefix_space": prefix_space, "trim_offsets": False, "use_regex": True}]}
    spec["post_processor"] = None
    data = json.dumps(spec)
    vocab = read_hf_tokenizer_json(data.encode())
    covering = Vocab(name=f"{name}-bytelevel", ranks=vocab.ranks, pattern=GPT2_ORIGINAL_PATTERN,
                     normalizer=vocab.normalizer)

    def build() -> dict[str, Contender]:
        hf = Tokenizer.from_str(data)
        program = _wordsplit(vocab, "auto")
        python = Pipeline(vocab.native_tables(), encoder="auto", spanner="hf-split", pattern=vocab.pattern,
                          literals=[], normalizer=vocab.normalizer, spanner_impl=HFSplitSpanner(vocab.pattern))
        policy = python.policy(None, [])
        regex_tok = TokenizerOptions(spanner="regex", backend="native").build(covering)
        return {
            PROGRAM: Contender(PROGRAM, program.encode, note=f"{PROGRAM} = {program.note.split(' = ')[1]}, native"),
            PY_PROGRAM: Contender(PY_PROGRAM, lambda text: python.encode(text, policy)),
            HF: Contender(HF, lambda text: hf.encode(text, add_special_tokens=False).ids),
            REGEX: Contender(REGEX, regex_tok.encode_ordinary),
            TIKTOKEN: _tiktoken(covering.name, GPT2_ORIGINAL_PATTERN, covering.ranks),
        }

    kinds = " + ".join(step["type"] for step in steps)
    return Case(name, build, HF, [f"{name}: Qwen3's tokenizer.json with Sequence[{kinds}, ByteLevel"
                                  f"{'(add_prefix_space)' if prefix_space else ''}]; {REGEX} and {TIKTOKEN} run "
                                  "ByteLevel's pattern alone on the same ranks (a speed reference, not checked)"],
                unchecked=(REGEX, TIKTOKEN))


def make_cases() -> dict[str, Case]:
    from wordsplit import Vocab, load_vocab
    from wordsplit.patterns import CL100K_ORIGINAL_PATTERN, CL100K_PATTERN, QWEN2_PATTERN

    assert LLAMA3_PATTERN == CL100K_ORIGINAL_PATTERN  # what the cl100k scanner is proven for
    cl100k, qwen3 = load_vocab("cl100k_base"), load_vocab("qwen3")
    llama3 = Vocab(name="cl100k-llama3", ranks=cl100k.ranks, pattern=LLAMA3_PATTERN)
    llama3_gguf = Vocab(name="cl100k-llama3-gguf", ranks=cl100k.ranks, pattern=LLAMA3_GGUF_PATTERN)

    def trio(vocab, pattern: str, scanner: bool = True) -> Callable[[], dict[str, Contender]]:
        def build():
            out = {REGEX: _wordsplit(vocab, "regex")}
            if scanner:
                out[SCANNER] = _wordsplit(vocab, "auto")
            out[TIKTOKEN] = _tiktoken(vocab.name, pattern, vocab.ranks)
            return out
        return build

    def deepseek():
        return {REGEX: _sequence(cl100k, "deepseek-llm", DEEPSEEK_LLM_REGEXES),
                TIKTOKEN: _tiktoken("cl100k_base", CL100K_PATTERN, cl100k.ranks)}

    return {
        "cl100k_base": Case("cl100k_base", trio(cl100k, CL100K_PATTERN), TIKTOKEN),
        "qwen3": Case("qwen3", trio(qwen3, QWEN2_PATTERN), SCANNER,
                      ["qwen3: tiktoken runs Qwen3's pattern and ranks without the NFC step, so it is a speed "
                       "baseline and not the oracle; the ids are checked against the qwen2 scanner's"]),
        "llama3": Case("llama3", trio(llama3, LLAMA3_PATTERN), TIKTOKEN),
        "llama3-gguf": Case("llama3-gguf", trio(llama3_gguf, LLAMA3_GGUF_PATTERN, scanner=False), TIKTOKEN,
                            ["llama3-gguf: no scanner claims llama.cpp's spelling; its tiktoken row runs the same "
                             "spelling"]),
        **{name: _program_case(name) for name in PROGRAM_CASES},
        "deepseek-llm": Case("deepseek-llm", deepseek, "python reference",
                             ["deepseek-llm: tiktoken cannot run a sequence of regexes; its row is tiktoken on "
                              "cl100k's own pattern (same ranks), a reference speed. The ids are checked against "
                              "the Python reference sequence (the `regex` module) feeding the same native encoder"]),
    }


def time_block(encode: Callable[[str], list[int]], docs: list[str]) -> tuple[list, float]:
    gc.collect()
    start = time.process_time()
    ids = [encode(doc) for doc in docs]
    return ids, time.process_time() - start


def run_case(case: Case, corpora: dict[str, list[str]], block_bytes: int, runs: int) -> dict:
    """``{"labels", "notes", "corpora": {corpus: {label: {"bytes", "seconds": [per run], ...}}}}``."""
    out: dict = {"notes": list(case.notes), "corpora": {}}
    for run in range(runs):
        contenders = case.build()
        if run == 0:
            out["labels"] = list(contenders)
            out["notes"] += [c.note for c in contenders.values() if c.note]
        oracle = None
        if run == 0 and case.oracle not in contenders:
            from wordsplit import load_vocab
            oracle = _sequence(load_vocab("cl100k_base"), case.name, DEEPSEEK_LLM_REGEXES, python=True)
        labels = list(contenders)
        for corpus, docs in corpora.items():
            cells = out["corpora"].setdefault(corpus, {label: {"bytes": utf8_len(docs), "seconds": [],
                                                                  "checked": 0, "mismatched": 0, "first": None}
                                                        for label in labels})
            totals = dict.fromkeys(labels, 0.0)
            for n, block in enumerate(doc_blocks(docs, block_bytes)):
                texts = [docs[i] for i in block]
                start = (n + run) % len(labels)
                ids = {}
                for label in labels[start:] + labels[:start]:
                    ids[label], seconds = time_block(contenders[label].encode, texts)
                    totals[label] += seconds
                if run:
                    continue
                expected = ids[case.oracle] if oracle is None else [oracle.encode(t) for t in texts]
                for label in labels:
                    if label == case.oracle or (label == TIKTOKEN and case.oracle != TIKTOKEN) \
                            or label in case.unchecked:
                        continue
                    parity = compare(expected, ids[label])
                    cell = cells[label]
                    cell["checked"] += parity.checked
                    cell["mismatched"] += parity.mismatched
                    if parity.first and not cell["first"]:
                        cell["first"] = parity.first
                        log(f"MISMATCH {case.name} {corpus} {label}: {parity.first}")
            for label in labels:
                cells[label]["seconds"].append(totals[label])
            log(f"{case.name} run {run + 1}/{runs} {corpus}: "
                + ", ".join(f"{label} {utf8_len(docs) / totals[label] / 1e6:.1f} MB/s" for label in labels))
    return out


def ratio(result: dict, corpus: Optional[str], num: str, den: str) -> Optional[float]:
    """Median over runs of ``den``'s seconds ÷ ``num``'s (how many times faster ``num`` is);
    ``corpus`` None: all corpora together."""
    corpora = [corpus] if corpus else list(result["corpora"])
    cells = [result["corpora"][c] for c in corpora]
    if any(num not in cell or den not in cell for cell in cells):
        return None
    runs = len(cells[0][num]["seconds"])
    return statistics.median(sum(cell[den]["seconds"][r] for cell in cells) / sum(cell[num]["seconds"][r]
                                                                                 for cell in cells)
                             for r in range(runs))


def mb_s(result: dict, corpus: Optional[str], label: str) -> float:
    corpora = [corpus] if corpus else list(result["corpora"])
    cells = [result["corpora"][c][label] for c in corpora]
    runs = len(cells[0]["seconds"])
    seconds = statistics.median(sum(cell["seconds"][r] for cell in cells) for r in range(runs))
    return sum(cell["bytes"] for cell in cells) / seconds / 1e6


def render(results: dict[str, dict], header: dict) -> str:
    lines = ["# Generic regex spanner vs scanner vs tiktoken", ""]
    lines += [f"- {key}: {value}" for key, value in header.items()]
    corpora = list(next(iter(results.values()))["corpora"])
    cols = [*corpora, None]
    names = [c or "all" for c in cols]
    lines += ["", "## Single-thread encode (MB/s)", "",
              "Ratio to tiktoken in parentheses (paired per run: tiktoken's CPU seconds ÷ the contender's, "
              "median over runs); ✗N: N documents differ from the oracle.", "",
              "| case | contender | " + " | ".join(names) + " |", "|:---|:---|" + "---:|" * len(cols)]
    for name, result in results.items():
        for i, label in enumerate(result["labels"]):
            row = []
            for col in cols:
                cell = f"{mb_s(result, col, label):.3g}"
                if label != TIKTOKEN:
                    cell += f" ({ratio(result, col, label, TIKTOKEN):.2f}×)"
                bad = sum(result["corpora"][c][label]["mismatched"] for c in ([col] if col else corpora))
                if bad:
                    cell += f" ✗{bad}"
                row.append(cell)
            shown = label if name != "deepseek-llm" or label != TIKTOKEN else "tiktoken (cl100k pattern)"
            lines.append(f"| {name if i == 0 else ''} | {shown} | " + " | ".join(row) + " |")
    programs = {name: result for name, result in results.items() if name in PROGRAM_CASES}
    if programs:
        lines += ["", "## Dropping programs", "",
                  f"The native split program's speed as a ratio to the native regex spanner on ByteLevel's pattern "
                  f"alone ({REGEX}), to the Python program ({PY_PROGRAM}) and to HF tokenizers, paired per run "
                  "(median over runs).", "",
                  "| case | ratio to | " + " | ".join(names) + " |", "|:---|:---|" + "---:|" * len(cols)]
        for name, result in programs.items():
            for i, den in enumerate((REGEX, PY_PROGRAM, HF)):
                cells = [f"{ratio(result, col, PROGRAM, den):.2f}×" for col in cols]
                lines.append(f"| {name if i == 0 else ''} | {den} | " + " | ".join(cells) + " |")
    lines += ["", "## Bounds", "",
              "The generic spanner is held to ≥ 2× tiktoken (same pattern and ranks: a vocabulary no scanner "
              "handles still beats tiktoken) and ≥ 0.5× the hand-written scanner where one exists. Smallest "
              "cell over the corpora (and `all`).", "",
              "| case | regex ÷ tiktoken | regex ÷ scanner | met |", "|:---|---:|---:|:---|"]
    for name, result in results.items():
        if name in PROGRAM_CASES:
            continue
        vs_tik = [ratio(result, col, REGEX, TIKTOKEN) for col in cols]
        vs_scan = [ratio(result, col, REGEX, SCANNER) for col in cols]
        tik, scan = min(vs_tik), (None if None in vs_scan else min(vs_scan))
        met = tik >= 2 and (scan is None or scan >= 0.5)
        tik_text = f"{tik:.2f}×" + (" (reference)" if name == "deepseek-llm" else "")
        lines.append(f"| {name} | {tik_text} | {'—' if scan is None else f'{scan:.2f}×'} | {'yes' if met else 'no'} |")
    notes = [n for result in results.values() for n in result["notes"]]
    lines += ["", "## Notes", ""] + [f"- {n}" for n in dict.fromkeys(notes)]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("corpus_dir", nargs="?", type=Path, metavar="CORPUS_DIR",
                   help=f"holds <name>.txt.gz; default: ${CORPUS_ENV}")
    p.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    p.add_argument("--corpora", default="prose,code,multilingual")
    p.add_argument("--max-bytes", type=parse_size, default="500KB", help="per corpus: a stride sample of documents")
    p.add_argument("--doc-bytes", type=parse_size, default="16KB")
    p.add_argument("--block", type=parse_size, default="128KB", help="the contenders take turns per block")
    p.add_argument("--runs", type=int, default=3, help="passes, each with freshly built contenders")
    p.add_argument("--json", type=Path, help="write every raw number here")
    args = p.parse_args(argv)
    cases = [c for c in args.cases.split(",") if c]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        p.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}")
    corpora = {}
    args.corpus_dir = corpus_dir(args.corpus_dir, [c for c in args.corpora.split(",") if c])
    for name in [c for c in args.corpora.split(",") if c]:
        docs = split_documents(read_corpus(args.corpus_dir, name), args.doc_bytes)
        corpora[name] = [docs[i] for i in stride_sample(docs, args.max_bytes)]
    import os
    from importlib import metadata

    load = os.getloadavg()[0]
    all_cases = make_cases()
    results = {name: run_case(all_cases[name], corpora, args.block, args.runs) for name in cases}
    header = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "versions": f"wordsplit {metadata.version('wordsplit')}, tiktoken {metadata.version('tiktoken')}",
        "1-min load average (start → end)": f"{load:.1f} → {os.getloadavg()[0]:.1f}",
        "sample": ", ".join(f"{n} {utf8_len(d) / 1e6:.2f} MB / {len(d)} docs" for n, d in corpora.items()),
        "command": "python benches/regex_bench.py " + " ".join(argv),
        "clock": f"process CPU time, single thread; {args.runs} runs, contenders rebuilt per run "
                 f"(cold caches), taking turns per {args.block // 1000} KB block",
    }
    print(render(results, header), end="")
    if args.json:
        args.json.write_text(json.dumps({"header": header, "results": results}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
