"""The sections measured in this process (single-thread and batch encode, batch scaling, decode,
the piece-length sweep), one vocabulary at a time; a baseline build takes part from its worker
process (:class:`builds.RemoteRunner`)."""

from __future__ import annotations

import math
import random
import statistics
from array import array
from typing import Optional

from builds import BASELINE_KEY, WORKER_KEY, build_runners, close_runners, start_workers
from contenders import (BATCH_THREADS, NUMPY, ORACLE, Contender, as_id_list, encoder_keys, peer_keys,
                        wordsplit_variant_keys)
from documents import utf8_len
from passes import compare, first_passes, interleaved, log, report_parity
from timing import WARM_UP, Runner

PIECE_LENGTHS = [10, 100, 1_000, 10_000]
# Batch scaling is a ratio of two short calls: more rounds than the other sections.
SCALING_ROUNDS_PER_REPEAT = 3


def throughput_entry(c: Contender, nbytes: int, times: dict, clock: str, parity: Optional[dict], **extra) -> dict:
    """One table cell's raw data: MB/s (10^6 bytes per second) from the median time on ``clock``
    (``"wall"`` or ``"cpu"``); both clocks' times are kept."""
    median = statistics.median(times[clock])
    return {"label": c.label, "bytes": nbytes, "times": times["wall"], "cpu_times": times["cpu"], "clock": clock,
            "median_s": median, "mb_s": nbytes / median / 1e6, "parity": parity, **extra}


def measure_single(contenders: list[Contender], runners: dict[str, Runner], tag: str,
                   expected: Optional[list[array]], docs: list[str], python_idx: list[int], args) -> dict:
    """Single-thread encode of every document of one corpus, one call per document.

    First a checked pass: every contender encodes all documents (wordsplit's Python backend
    only the ``python_idx`` subset) and is compared with the oracle's ids ``expected``. A
    pass that overruns ``--pass-budget``, or whose ids differ, drops the contender from timing.
    Then ``--repeats`` interleaved timed passes.

    The checked pass is also reported on its own (``first_pass``): it is the first time each
    contender sees these documents, so caches of recent pieces (wordsplit's, HF's) hold
    nothing of them yet, whereas the timed passes repeat the same documents. The contenders
    take turns over their checked passes, a block of documents at a time (:func:`first_passes`),
    so those are paired too. ``runners`` run each contender's passes (a baseline's in its
    worker); ``docs`` are stored in them under ``tag``.
    """
    cells, jobs, subsets, first = {}, {}, {}, {}
    indices = {c.key: list(python_idx if c.key == "wordsplit:python" else range(len(docs))) for c in contenders}
    passes = first_passes({c.key: runners[c.key] for c in contenders}, tag, indices, docs, args.pass_budget)
    for c in contenders:
        idx = indices[c.key]
        subsets[c.key] = [docs[i] for i in idx]
        ids, seconds, done = passes.pop(c.key)
        parity = report_parity("encode", c, compare([expected[i] for i in idx], ids) if expected else None)
        # Checked, the ids are dropped: kept through the timed passes (a million Python ints
        # or more), the collection before each pass would walk them all and leave every
        # contender's pass to start with the CPU's caches and TLB flushed.
        del ids
        if not done:
            log(f"    {c.label}: over the {args.pass_budget:.0f} s pass budget; not timed")
            cells[c.key] = {"label": c.label, "timeout_s": seconds["wall"], "parity": parity}
            continue
        if parity and parity["mismatched"] and c.key != ORACLE[c.vocab]:
            # a peer whose ids differ is reported (report_parity logged where), not timed
            cells[c.key] = {"label": c.label, "differs": parity["first"], "parity": parity}
            continue
        first[c.key] = seconds
        cells[c.key] = parity
        subset = None if len(idx) == len(docs) else idx
        jobs[c.key] = lambda runner=runners[c.key], subset=subset: runner.encode(tag, subset)
    by_key = {c.key: c for c in contenders}
    for key, times in interleaved(jobs, args.repeats).items():
        nbytes = utf8_len(subsets[key])
        cells[key] = throughput_entry(by_key[key], nbytes, times, args.clock, cells[key], docs=len(subsets[key]),
                                      first_pass_s=first[key][args.clock],
                                      first_pass_mb_s=nbytes / first[key][args.clock] / 1e6,
                                      first_pass_blocks=first[key]["blocks"])
    return cells


def measure_batch(contenders: list[Contender], runners: dict[str, Runner], tag: str,
                  expected: Optional[list[array]], docs: list[str], args) -> dict:
    """One ``encode_batch`` call (2 threads) over all documents of one corpus (stored in the
    runners under ``tag``), per contender; checked against the oracle's ids first. Always
    wall time (CPU time adds up the threads)."""
    parities, jobs = {}, {}
    for c in contenders:
        if c.encode_batch is None:
            continue
        ids, _, _ = runners[c.key].batch(tag, BATCH_THREADS, keep=True)
        parities[c.key] = report_parity("batch", c, compare(expected, ids) if expected else None)
        del ids  # not kept through the timed calls (see measure_single)
        jobs[c.key] = lambda runner=runners[c.key]: runner.batch(tag, BATCH_THREADS)
    by_key = {c.key: c for c in contenders}
    return {key: throughput_entry(by_key[key], utf8_len(docs), times, "wall", parities[key])
            for key, times in interleaved(jobs, args.repeats).items()}


def measure_scaling(contenders: list[Contender], runners: dict[str, Runner], tag: str, docs: list[str],
                    rounds: int) -> dict:
    """How much faster ``encode_batch`` finishes all documents of one corpus on 2 threads than
    on 1, per contender: the median over ``rounds`` of the ratio of two back-to-back calls
    (which goes first alternates). Pairing the calls cancels this shared machine's slow and
    fast spells, which last far longer than one pair; wall time."""
    result = {}
    for c in contenders:
        if c.encode_batch is None or c.batch_threads_fixed:
            continue
        one, two, ratios = [], [], []
        for round_ in range(rounds):
            calls = [(1, one), (BATCH_THREADS, two)]
            for threads, times in calls if round_ % 2 == 0 else calls[::-1]:
                times.append(runners[c.key].batch(tag, threads)[1])
            ratios.append(one[-1] / two[-1])
        result[c.key] = {"label": c.label, "bytes": utf8_len(docs), "ratio": statistics.median(ratios),
                         "one_thread_s": statistics.median(one), "two_threads_s": statistics.median(two),
                         "one_thread_times": one, "two_thread_times": two, "ratios": ratios}
    return result


def measure_decode(contenders: list[Contender], runners: dict[str, Runner], oracle: Optional[Contender],
                   id_arrays: list[array], args) -> dict:
    """Decode the oracle's ids of every document back to text, one call per document, per
    contender; each output is checked against the oracle's decode. Reports M ids/s and MB/s
    of UTF-8 output."""
    if oracle is None or oracle.decode is None:
        return {}
    id_lists = [ids.tolist() for ids in id_arrays]
    expected = [oracle.decode(ids) for ids in id_lists]
    out_bytes, n_ids = utf8_len(expected), sum(len(ids) for ids in id_lists)
    parities, jobs = {}, {}
    for c in contenders:
        if c.decode is None:
            continue
        runners[c.key].put("decode", id_lists)
        got, _, _ = runners[c.key].decode("decode", keep=True)
        parities[c.key] = report_parity("decode", c, compare(expected, got))
        jobs[c.key] = lambda runner=runners[c.key]: runner.decode("decode")
    by_key = {c.key: c for c in contenders}
    return {key: throughput_entry(by_key[key], out_bytes, times, args.clock, parities[key], n_ids=n_ids,
                                  mids_s=n_ids / statistics.median(times[args.clock]) / 1e6)
            for key, times in interleaved(jobs, args.repeats).items()}


# Every byte value to a lowercase letter (``bytes.translate``): random bytes become random letters.
LETTERS = bytes(97 + b % 26 for b in range(256))
# One contender's round of new pieces of one length: at most this many bytes and pieces (all
# rounds' pieces are made before the timing, as Python strings).
UNSEEN_ROUND_BYTES = 2_000_000
UNSEEN_ROUND_PIECES = 20_000


def random_letters(n: int, rng: random.Random) -> str:
    """``n`` random lowercase ASCII letters: one pre-token under every pattern benchmarked."""
    return rng.randbytes(n).translate(LETTERS).decode()


def new_pieces(length: int, count: int, rng: random.Random) -> list[str]:
    """``count`` pieces of ``length`` random lowercase letters (distinct in practice: ten
    letters already have 26^10 values)."""
    return [random_letters(length, rng) for _ in range(count)]


def piece_cells(contenders: list[Contender], times: dict, calls: dict, parity: dict, clock: str) -> dict:
    """The piece sweep's cells of one length, ``{key: cell}``, from :func:`interleaved`'s
    ``times`` of jobs of ``calls[key]`` calls each."""
    labels = {c.key: c.label for c in contenders}
    return {key: {"label": labels[key], "us_per_call": statistics.median(t[clock]) / calls[key] * 1e6,
                  "calls": calls[key], "times": t["wall"], "cpu_times": t["cpu"], "parity_ok": parity[key]}
            for key, t in times.items()}


def measure_unseen(contenders: list[Contender], runners: dict[str, Runner], oracle: Optional[Contender],
                   length: int, args) -> dict:
    """Time per encode call of pieces of ``length`` random letters, each call on a piece that
    contender has not seen: what a piece costs the first time, where :func:`measure_pieces`'
    repeated piece is answered by each library's cache of pieces.

    Each round of a contender encodes a list of new pieces, as many as last about 30 ms (and
    at most ``UNSEEN_ROUND_BYTES``); the per-call time is the median over ``--repeats``
    interleaved rounds divided by that count. Parity: three other new pieces against the oracle.
    """
    rng = random.Random(length)
    check = new_pieces(length, 3, rng)
    expected = [oracle.encode(text) for text in check] if oracle else None
    jobs, calls, parity, rounds = {}, {}, {}, [f"unseen-{r}" for r in range(args.repeats)]
    for c in contenders:
        runner = runners[c.key]
        runner.put("unseen-check", check)
        got, _, _ = runner.encode("unseen-check", keep=True)
        parity[c.key] = None if expected is None else [as_id_list(ids) for ids in got] == expected
        if parity[c.key] is False:
            log(f"    MISMATCH (new piece {length}) {c.label}")
        runner.put("unseen-probe", new_pieces(length, 10, rng))
        per_call = runner.encode("unseen-probe")[2 if args.clock == "cpu" else 1] / 10
        calls[c.key] = max(1, min(UNSEEN_ROUND_PIECES, UNSEEN_ROUND_BYTES // length,
                                   math.ceil(0.03 / max(per_call, 1e-9))))
        for tag in rounds:  # made before any timing, each round's pieces new to this contender
            runner.put(tag, new_pieces(length, calls[c.key], rng))
        jobs[c.key] = lambda runner=runner, tags=iter(rounds): runner.encode(next(tags))
    times = interleaved(jobs, args.repeats)
    for c in contenders:
        for tag in rounds:
            runners[c.key].put(tag, [])
    return piece_cells(contenders, times, calls, parity, args.clock)


def measure_pieces(contenders: list[Contender], runners: dict[str, Runner], oracle: Optional[Contender],
                   args) -> dict:
    """Time per encode call of one unsplittable piece of random letters, per length: the same
    piece every call (``{length: {key: cell}}``), and a new piece every call
    (``{"unseen": {length: {key: cell}}}``, :func:`measure_unseen`).

    Each job loops enough calls to last about 30 ms; the per-call time is the median over
    ``--repeats`` interleaved rounds divided by that count.
    """
    result = {"unseen": {str(length): measure_unseen(contenders, runners, oracle, length, args)
                         for length in PIECE_LENGTHS}}
    for length in PIECE_LENGTHS:
        text = random_letters(length, random.Random(length))
        expected = oracle.encode(text) if oracle else None
        jobs, calls, parity = {}, {}, {}
        for c in contenders:
            ids, _, _ = runners[c.key].repeat(text, 1)
            # calls per job from the faster of two 10-call loops: one slow first call (a page
            # fault, a fresh worker) would otherwise leave a job of a few calls, all overhead
            per_call = min(runners[c.key].repeat(text, 10)[1] for _ in range(2)) / 10
            calls[c.key] = max(1, min(100_000, math.ceil(0.03 / max(per_call, 1e-9))))
            parity[c.key] = None if expected is None else ids == expected
            if parity[c.key] is False:
                log(f"    MISMATCH (piece {length}) {c.label}")
            jobs[c.key] = lambda runner=runners[c.key], n=calls[c.key]: runner.repeat(text, n)
        result[str(length)] = piece_cells(contenders, interleaved(jobs, args.repeats), calls, parity, args.clock)
    return result


def measure_vocab(vocab: str, corpora: dict, sections: list[str], results: dict, args) -> None:
    """The in-process sections (single, batch, decode, pieces) for one vocabulary; with
    ``--baseline``, the baseline build takes part from its worker process."""
    meta = results["meta"]
    keys = ["wordsplit:auto", "wordsplit:auto" + NUMPY, *wordsplit_variant_keys(), "wordsplit:python",
            *peer_keys(vocab, numpy=True)]
    contenders, own_runners, skipped = build_runners(keys, vocab)  # a peer of another Python in its worker
    workers = start_workers(vocab, args, meta["notes"])
    contenders[1:1] = [w.contender for w in workers]
    meta["notes"] += [n for c in contenders for n in c.notes]
    not_applicable = [k for k, why in skipped.items() if why.startswith("UnsupportedTokenizerError")]
    if not_applicable:
        meta["notes"].append(f"{vocab}: not applicable to its pattern (UnsupportedTokenizerError): "
                             + ", ".join(k.removeprefix("wordsplit:native:") for k in not_applicable))
    meta["notes"] += [f"{vocab}: {k} failed to build: {why}" for k, why in skipped.items() if k not in not_applicable]
    oracle = next((c for c in contenders if c.key == ORACLE[vocab]), None)
    if oracle is None:
        meta["notes"].append(f"{vocab}: oracle {ORACLE[vocab]} unavailable, parity not checked")
    log(f"{vocab}: {[c.label for c in contenders]}; skipped {list(skipped)}")
    by_key = {c.key: c for c in contenders}
    remote = {w.contender.key: w for w in workers}
    runners = {c.key: remote.get(c.key) or own_runners[c.key] for c in contenders}
    for runner in runners.values():
        # a short text first (see timing.WARM_UP): the first pass's documents are not billed
        # for a library's one-time setup
        runner.put("warm-up", [WARM_UP])
        runner.encode("warm-up")
    wordsplit_keys = ["wordsplit:auto", WORKER_KEY, BASELINE_KEY]
    variant_keys = {*wordsplit_variant_keys(), "wordsplit:python"}
    try:
        decode_ids = []
        for name, (docs, python_idx) in corpora.items():
            # as arrays, which the garbage collector does not walk (see measure_single)
            expected = [array("I", oracle.encode(doc)) for doc in docs] if oracle else None
            decode_ids += expected or []
            for runner in runners.values():
                runner.put(name, docs)
            if "single" in sections:
                log(f"  single {vocab}/{name}")
                # Two rounds, each its contenders taking turns: the libraries' headline
                # tokenizers (and a baseline build), then wordsplit's other encoder and spanner
                # variants and its Python backend. In one round, each wordsplit pass would
                # follow six more wordsplit passes than a peer's does, each with caches of its
                # own, filling the CPU's caches with them.
                headline = [c for c in contenders if c.key not in variant_keys]
                variants = [c for c in contenders if c.key in variant_keys]
                cells = measure_single(headline, runners, name, expected, docs, python_idx, args)
                if variants:
                    cells |= measure_single(variants, runners, name, expected, docs, python_idx, args)
                results.setdefault("single", {}).setdefault(vocab, {})[name] = cells
            if "batch" in sections:
                log(f"  batch {vocab}/{name}")
                batch_keys = [*wordsplit_keys, "wordsplit:auto" + NUMPY, *peer_keys(vocab, numpy=True)]
                batchers = [by_key[k] for k in batch_keys if k in by_key and by_key[k].encode_batch is not None]
                results.setdefault("batch", {}).setdefault(vocab, {})[name] = \
                    measure_batch(batchers, runners, name, expected, docs, args)
                results.setdefault("scaling", {}).setdefault(vocab, {})[name] = \
                    measure_scaling(batchers, runners, name, docs, SCALING_ROUNDS_PER_REPEAT * args.repeats)
        if "decode" in sections:
            log(f"  decode {vocab}")
            decoders = [by_key[k] for k in [*wordsplit_keys, "wordsplit:python", *peer_keys(vocab)] if k in by_key]
            results.setdefault("decode", {})[vocab] = measure_decode(decoders, runners, oracle, decode_ids, args)
        if "pieces" in sections:
            log(f"  pieces {vocab}")
            sweep_keys = encoder_keys(vocab)
            extra, extra_runners, _ = build_runners([k for k in sweep_keys if k not in runners], vocab)
            own_runners.update(extra_runners)
            every = {**by_key, **{c.key: c for c in extra}}
            sweepers = [every[k] for k in sweep_keys if k in every]
            sweepers[1:1] = [w.contender for w in workers]
            sweep_runners = {c.key: runners.get(c.key) or extra_runners[c.key] for c in sweepers}
            results.setdefault("pieces", {})[vocab] = measure_pieces(sweepers, sweep_runners, oracle, args)
    finally:
        close_runners(workers)
        close_runners(own_runners)
