"""What the report's tables share: numbers and Markdown tables, a cell with its ratio to the
reference contender, the paired speed ratio of two contenders, all corpora summed, and which
contenders are wordsplit and which peers."""

from __future__ import annotations

import re
import statistics
from typing import Optional

from contenders import NUMPY

REFERENCE = "tiktoken"  # every throughput is also shown as a ratio to this contender
WORDSPLIT = "wordsplit:auto"
#: The keys of wordsplit builds timed in worker processes (the build under test's twin and a
#: baseline build): wordsplit, not peers.
WORKER_KEYS = ("wordsplit:worker", "baseline")


def without_paths(text: str) -> str:
    """``text`` with every absolute path cut to its last part (a report names files, not the
    machine's directories): ``--json /data/runs/out.json`` → ``--json out.json``."""
    return re.sub(r"(?<![\w.])/(?:[^\s/`'\"]+/)*([^\s/`'\"]+)", r"\1", text)


def num(x: float) -> str:
    """Three significant digits, never in exponent form: 0.0123, 1.23, 12.3, 123, 12,345."""
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def md_table(header: list[str], rows: list[list[str]], left: int = 1) -> str:
    """A Markdown table; the first ``left`` columns are left-aligned, the rest right-aligned."""
    align = [":---"] * left + ["---:"] * (len(header) - left)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def round_times(entry: dict) -> Optional[list[float]]:
    """The seconds of each interleaved round on the entry's clock, if it has them."""
    return entry.get("cpu_times" if entry.get("clock") == "cpu" else "times")


def speed_ratio(entry: dict, ref: dict, value: str = "mb_s") -> float:
    """How many times faster ``entry`` is than ``ref``: the median over rounds of the ratio of
    their times in the same round, when both timed the same work round by round (a drift in
    machine speed then cancels out), else the ratio of their ``value``s."""
    mine, theirs = round_times(entry), round_times(ref)
    if mine and theirs and len(mine) == len(theirs) and "bytes" in entry and entry["bytes"] == ref.get("bytes"):
        return statistics.median(t / m for m, t in zip(mine, theirs))
    return entry[value] / ref[value]


def cell(entry: Optional[dict], ref: Optional[dict], value: str = "mb_s") -> str:
    """``12.3 (0.85×)``; ``✗N`` when N documents differ from the oracle; why, when not timed."""
    if not entry:
        return "–"
    if "timeout_s" in entry:
        return f"not timed (pass > {entry['timeout_s']:.0f} s)"
    if "differs" in entry:
        return f"differs, not timed ✗{entry['parity']['mismatched']}"
    text = num(entry[value])
    if ref and value in ref:
        text += f" ({speed_ratio(entry, ref, value):.2f}×)"
    parity = entry.get("parity")
    if parity and parity["mismatched"]:
        text += f" ✗{parity['mismatched']}"
    return text


def total_entry(cells: list[dict]) -> Optional[dict]:
    """All corpora together: total bytes / total median seconds (None if any is missing), and
    the time of each round summed over the corpora, so ratios can still be paired by round."""
    if not cells or any("mb_s" not in c for c in cells):
        return None
    mismatched = sum((c["parity"] or {}).get("mismatched", 0) for c in cells)
    total = {"mb_s": sum(c["bytes"] for c in cells) / sum(c["median_s"] for c in cells) / 1e6,
             "parity": {"mismatched": mismatched}, "bytes": sum(c["bytes"] for c in cells),
             "clock": cells[0].get("clock")}
    rounds = [round_times(c) for c in cells]
    if all(rounds) and len({len(r) for r in rounds}) == 1:
        total["cpu_times" if total["clock"] == "cpu" else "times"] = [sum(ts) for ts in zip(*rounds)]
    return total


def is_peer(key: str, worker_keys: tuple = ()) -> bool:
    return not key.startswith("wordsplit:") and key not in worker_keys


def shape_of(key: str, section: str) -> str:
    """The output shape of a contender's result in ``section``: quicktok's batch is a flat
    uint32 array plus offsets, the ``+numpy`` contenders' results are arrays."""
    if key.endswith(NUMPY) or (section == "batch" and key == "quicktok"):
        return "numpy"
    return "list"
