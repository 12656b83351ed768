"""wordsplit encode-dataset: arguments, summary, JSON, errors, progress bar, Ctrl-C."""

from __future__ import annotations

import io
import json

import pytest

import wordsplit.cli.encode_dataset as cli_module
from wordsplit.cli import main

from test_datasets import make_inputs, read_megatron


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("inputs")
    make_inputs(root)
    return root


def test_encode_dataset_command(inputs, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["encode-dataset", str(inputs / "*.txt"), str(inputs / "b.jsonl.gz"), "--out", str(out),
                 "--vocab", "gpt2", "--format", "megatron", "--eos", "--shard-tokens", "1k"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"wrote {out} (megatron): 2 inputs, 3 shards, 63 documents, ")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["options"]["shard_tokens"] == 1000 and manifest["options"]["eos_token_id"] == 50256
    docs, _ = read_megatron(out / "00001-c-00000")
    assert len(docs) == 3
    assert main(["encode-dataset", str(inputs / "c.txt"), str(inputs / "b.jsonl.gz"), "--out", str(out), "--vocab",
                 "gpt2", "--format", "megatron", "--eos", "--shard-tokens", "1000", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["resumed"] == 2 and summary["documents"] == 63


def test_encode_dataset_errors(inputs, tmp_path, capsys):
    assert main(["encode-dataset", str(inputs / "nothing*"), "--out", str(tmp_path), "--vocab", "gpt2",
                 "--format", "npy"]) == 2
    assert "nothing*: no such file, directory or matching glob pattern" in capsys.readouterr().err
    assert main(["encode-dataset", str(inputs / "a.parquet"), "--out", str(tmp_path), "--vocab", "gpt2",
                 "--format", "npy", "--column", "body"]) == 2
    assert "no column 'body'; it has text, id (choose one with --column)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["encode-dataset", str(inputs), "--out", str(tmp_path), "--vocab", "gpt2", "--format", "parquet"])


def test_ctrl_c_exits_130(inputs, tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_module, "encode_dataset", interrupted)
    with pytest.raises(SystemExit) as exit_info:
        main(["encode-dataset", str(inputs), "--out", str(tmp_path), "--vocab", "gpt2", "--format", "npy"])
    assert exit_info.value.code == 130
    assert "interrupted; complete shards are kept" in capsys.readouterr().err


def test_progress_bar_on_a_terminal(inputs, tmp_path, monkeypatch, capsys):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(cli_module.sys, "stderr", terminal)
    assert main(["encode-dataset", str(inputs), "--out", str(tmp_path), "--vocab", "gpt2", "--format", "nanogpt",
                 "--batch-size", "100"]) == 0
    assert "encoding" in terminal.getvalue()
    assert "71 documents" in capsys.readouterr().out


def test_eta_text():
    assert cli_module._eta(None) == "-:--:--" and cli_module._eta(3725.4) == "1:02:05"


def test_a_small_dataset_on_a_local_ray_gets_a_note_about_start_up(inputs, tmp_path, capsys, monkeypatch):
    """--engine ray without --address starts a local Ray, seconds before the first input: the
    command says so once when the inputs are small, and --engine local is not held up."""
    calls = []
    monkeypatch.setattr(cli_module, "encode_dataset", lambda *args, **kwargs: calls.append(kwargs) or None)
    argv = ["encode-dataset", str(inputs / "c.txt"), "--out", str(tmp_path / "o"), "--vocab", "gpt2", "--format", "npy"]
    main([*argv, "--engine", "ray", "--quiet"])
    assert capsys.readouterr().err == ""
    main([*argv, "--engine", "ray"])
    err = capsys.readouterr().err
    assert err.startswith("wordsplit: note: 0.0 MB of input; starting a local Ray") and err.count("\n") == 1
    assert "--engine local is faster" in err
    main([*argv, "--engine", "local"])
    assert "note" not in capsys.readouterr().err and [c["engine"] for c in calls] == ["ray", "ray", "local"]
