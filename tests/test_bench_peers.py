"""The benchmark's contender plumbing, without any peer library installed: a contender that
names another interpreter runs in a worker process started with it, every contender's ids are
checked against the oracle's in the one pass, and one that differs is reported with its first
difference and not timed; one that cannot be built is listed.

The contenders are made by small modules written here (``import:MODULE:FUNCTION`` keys,
``contenders.make_contender``); the "other interpreter" is this one under another path (a
symlink), which ``contenders.interpreter`` tells apart, as it tells a virtual environment's
python from the base interpreter it links to.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

BENCHES = Path(__file__).resolve().parent.parent / "benches"
sys.path.insert(0, str(BENCHES))

import contenders  # noqa: E402
import onepass  # noqa: E402
from report_onepass import render_onepass  # noqa: E402

# Each module makes a contender reporting which interpreter made it (its label) and encoding a
# text to its code points; `wrong` returns 0 at the fourth character of any text holding "x".
FAKES = {
    "fake_oracle": "lambda text: [ord(c) for c in text]",
    "fake_peer": "lambda text: [ord(c) for c in text]",
    "fake_wrong": "lambda text: [0 if i == 3 and 'x' in text else ord(c) for i, c in enumerate(text)]",
}
FAKE_MODULE = '''
import sys
from contenders import Contender

def make(vocab):
    if vocab != "fake":
        raise LookupError(f"no {{vocab}} here")
    return Contender(key="?", label="{name} in " + sys.executable, vocab=vocab, encode={encode})
'''


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    """The fake contenders' modules on PYTHONPATH (this process and its workers), a second path
    to this interpreter, and an oracle for the vocabulary ``fake``."""
    for name, encode in FAKES.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(FAKE_MODULE.format(name=name, encode=encode)))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(BENCHES), os.environ.get("PYTHONPATH", "")]))
    other = tmp_path / "bin" / "python"
    other.parent.mkdir()
    other.symlink_to(sys.executable)
    monkeypatch.setitem(contenders.ORACLE, "fake", "import:fake_oracle:make")
    monkeypatch.delenv(contenders.PYTHONS_ENV, raising=False)
    return other


def key(name: str) -> str:
    return f"import:{name}:make"


def test_interpreter_names_another_python_by_its_path(fakes, monkeypatch):
    assert contenders.interpreter(key("fake_peer")) is None  # nothing named: this process
    monkeypatch.setenv(contenders.PYTHONS_ENV, json.dumps({key("fake_peer"): str(fakes),
                                                           "tiktoken": sys.executable}))
    assert contenders.interpreter(key("fake_peer")) == str(fakes)
    assert contenders.interpreter(key("fake_peer") + contenders.NUMPY) == str(fakes)  # its numpy form alike
    assert contenders.interpreter("tiktoken") is None  # this very interpreter: no worker
    assert contenders.interpreter("gigatoken") is None


def test_a_peers_worker_gets_no_other_environments_site_packages():
    import builds

    path = os.pathsep.join(["/a/src", "/v/lib/python3.11/site-packages", "/u/dist-packages", ""])
    assert builds.peer_env({"PYTHONPATH": path, "X": "1"}) == {"PYTHONPATH": "/a/src", "X": "1"}
    assert builds.peer_env({"PYTHONPATH": "/v/site-packages", "X": "1"}) == {"X": "1"}
    assert builds.peer_env({"X": "1"}) == {"X": "1"}


def test_default_interpreter_only_when_it_exists(tmp_path, monkeypatch):
    monkeypatch.delenv(contenders.PYTHONS_ENV, raising=False)
    missing = tmp_path / "hf1" / "bin" / "python"
    monkeypatch.setitem(contenders.DEFAULT_PYTHONS, "tokenizers1", missing)
    assert contenders.interpreter("tokenizers1") is None
    missing.parent.mkdir(parents=True)
    missing.symlink_to(sys.executable)
    assert contenders.interpreter("tokenizers1") == str(missing)


def test_one_pass_runs_a_contender_in_its_interpreter_and_drops_one_that_differs(fakes, monkeypatch):
    docs = ["hello world " * 20, "abc def " * 30, "one x here " * 20, "more text " * 30, "tail " * 40]
    keys = [key("fake_oracle"), key("fake_peer"), key("fake_wrong"), key("fake_missing"), "no-such-key"]
    monkeypatch.setenv(contenders.PYTHONS_ENV, json.dumps({key("fake_peer"): str(fakes),
                                                           key("fake_wrong"): str(fakes),
                                                           "no-such-key": str(fakes.parent / "absent")}))
    out = onepass.one_pass("fake", {"c": docs}, block_bytes=200, clock="cpu", shift=0, workers=[], keys=keys)

    labels = out["labels"]
    assert labels[key("fake_oracle")] == f"fake_oracle in {sys.executable}"  # in this process
    assert labels[key("fake_peer")] == f"fake_peer in {fakes}"  # in the worker of the other path
    assert labels[key("fake_wrong")] == f"fake_wrong in {fakes}"
    # cannot be built: an unknown module (in this process), an interpreter that is not there
    assert "ModuleNotFoundError" in out["skipped"][key("fake_missing")]
    assert "absent" in out["skipped"]["no-such-key"]

    cells = out["corpora"]["c"]
    blocks = len(onepass.doc_blocks(docs, 200))
    assert blocks == len(docs)
    for good in (key("fake_oracle"), key("fake_peer")):
        assert cells[good]["mismatched"] == 0 and cells[good]["checked"] == len(docs)
        assert len(cells[good]["blocks"]) == blocks and cells[good]["mb_s"] > 0
    wrong = cells[key("fake_wrong")]
    # differs on doc 2 ("one x here", item 3), so it ran the first three blocks and no more
    assert out["differs"] == {key("fake_wrong"): "c: doc 2, item 3: expected [32, 120, 32, 104], got [0, 120, 32, 104]"}
    assert len(wrong["blocks"]) == 3 and wrong["mismatched"] == 1
    assert "seconds" not in wrong and "mb_s" not in wrong


def test_report_shows_differs_not_run_and_close_cells(monkeypatch):
    monkeypatch.setitem(contenders.ORACLE, "fake", "tiktoken")

    def cell(seconds):
        return {"bytes": 10_000_000, "docs": 10, "mismatched": 0, **({"seconds": seconds} if seconds else {})}

    result = {"labels": {"wordsplit:auto": "ws auto", "tiktoken": "tiktoken", "tokie": "tokie", "kitoken": "kitoken"},
              "skipped": {"splintr": "LookupError: no splintr setup"},
              "differs": {"kitoken": "prose: doc 3, item 7: expected [1], got [2]"},
              "corpora": {"prose": {"wordsplit:auto": cell(0.1), "tiktoken": cell(1.0), "tokie": cell(0.12),
                                    "kitoken": cell(None)}}}
    text = render_onepass({"runs": [{"vocab": "fake", "run": 0, "load_avg": [0, 0], "result": result}]})
    assert "| differs |" in text
    assert "fake: kitoken differs from the oracle (tiktoken), not timed; first difference in prose: doc 3" in text
    assert "fake: splintr not run: LookupError: no splintr setup" in text
    # wordsplit 0.1 s against tokie 0.12 s: 1.20×, under 1.25×; tiktoken (10×) is not listed
    assert "a peer (its fastest shape): fake prose: ÷ tokie 1.20×." in text


def test_word_benches_time_a_worker_beside_this_process_and_report_one_that_differs(fakes, tmp_path):
    """wordpiece_bench.run (unigram_bench's and llamacpp_word_bench's too): encode functions
    run in this process, a worker (HF tokenizers 1.x's way) in its interpreter, each checked
    against the oracle and timed run by run; one that differs on a corpus is reported there
    and timed on the others; every worker is stopped."""
    import wordpiece_bench
    from builds import RemoteRunner

    workers = []

    def code_points(text):
        return [ord(c) for c in text]

    def wrong(text):  # fake_wrong's: 0 at the fourth character of a text holding "x"
        return [0 if i == 3 and "x" in text else ord(c) for i, c in enumerate(text)]

    def make(path):
        assert path == tmp_path
        workers.append(RemoteRunner("fake", None, key("fake_peer"), key("fake_peer"), python=str(fakes)))
        return {"wordsplit": code_points, "oracle": code_points, "worker": workers[-1], "wrong": wrong}

    corpora = {"c": ["hello world " * 20, "one x here " * 20], "d": ["abc def " * 30]}
    results = wordpiece_bench.run(tmp_path, corpora, runs=2, make=make, oracle="oracle")

    assert len(workers) == 3  # the check, then a fresh one per run
    assert all(w.contender.label == f"fake_peer in {fakes}" for w in workers)
    assert all(w.proc.poll() is not None for w in workers)
    assert results["c"]["wrong"] == "differs (1 of 2 docs)"
    for name, labels in (("c", ("wordsplit", "oracle", "worker")), ("d", ("wordsplit", "oracle", "worker", "wrong"))):
        for label in labels:
            assert len(results[name][label]) == 2 and min(results[name][label]) > 0, (name, label)


def test_word_bench_table_gives_median_speeds_and_paired_ratios():
    import wordpiece_bench

    results = {"prose": {"wordsplit": [10.0, 30.0], "p": [5.0, 10.0], "q": [1.0, 1.0]},
               "code": {"wordsplit": [20.0, 20.0], "p": "differs (1 of 9 docs)", "q": [4.0, 5.0]}}
    text = wordpiece_bench.table("fake", results, peers=("p", "q", "absent"))
    # medians 20.0 and 7.5 (a ratio of 2.67×), but the runs' ratios 2 and 3: 2.50×
    assert "| prose | 20.0 | 7.5 | 1.0 | 2.50× | 20.00× | 2.50× (p) |" in text
    assert "| code | 20.0 | differs (1 of 9 docs) | 4.5 | – | 4.50× | 4.50× (q) |" in text
    assert "absent" not in text
