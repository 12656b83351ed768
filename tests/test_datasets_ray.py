"""The ray engine on a local 2-CPU Ray (one ray.init for the module): the same bytes as the local
engine, errors raised as the same class on the driver, progress summed across workers, resume."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from wordsplit.datasets import DatasetInputError, encode_dataset

from test_datasets import make_inputs, snapshot

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
             configure_logging=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("inputs")
    make_inputs(root)
    # one input more, so two workers have several to share
    (root / "d.jsonl").write_text("".join(json.dumps({"body": f"doc {i} " * i}) + "\n" for i in range(40)))
    return root


def test_ray_writes_the_local_engines_bytes(inputs, local_ray, tmp_path):
    # one format is enough: the engines share the writers, and differ only in who runs them
    options = dict(vocab="qwen3", format="megatron", eos=True, shard_tokens=200, field="body")
    local = encode_dataset(inputs / "d.jsonl", tmp_path / "local", **options)
    seen = []
    remote = encode_dataset(inputs / "d.jsonl", tmp_path / "ray", engine="ray", workers=2, **options,
                            progress=lambda s: seen.append((s.documents, s.tokens)))
    assert snapshot(tmp_path / "ray") == snapshot(tmp_path / "local")
    counts = (local.documents, local.tokens, local.shards)
    assert (remote.documents, remote.tokens, remote.shards) == counts != (0, 0, 0)
    assert seen[-1] == (local.documents, local.tokens)


def test_ray_all_inputs_resume_and_errors(inputs, local_ray, tmp_path):
    options = dict(vocab="gpt2", format="llmc", on_error="skip")
    local = encode_dataset(inputs, tmp_path / "local", **options)
    remote = encode_dataset(inputs, tmp_path / "ray", engine="ray", workers=2, **options)
    assert snapshot(tmp_path / "ray") == snapshot(tmp_path / "local")
    assert local.skipped == 40  # d.jsonl has no "text" field: every line skipped, and counted
    assert encode_dataset(inputs, tmp_path / "ray", engine="ray", **options).resumed == remote.inputs == 4
    with pytest.raises(DatasetInputError, match=r"d\.jsonl:1: the JSON object has no field 'text'"):
        encode_dataset(inputs, tmp_path / "raise", engine="ray", vocab="gpt2", format="npy")
    assert not [p for p in (tmp_path / "raise").iterdir() if ".tmp-" in p.name]


def test_command_joins_a_running_cluster(inputs, local_ray, tmp_path):
    """--address: a second driver (the command, in its own process) joins this module's Ray."""
    address = ray.get_runtime_context().gcs_address
    result = subprocess.run([sys.executable, "-m", "wordsplit", "encode-dataset", str(inputs / "c.txt"),
                             str(inputs / "a.parquet"), "--out", str(tmp_path / "ray"), "--vocab", "gpt2",
                             "--format", "nanogpt", "--eos", "--engine", "ray", "--address", address],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    # No Ray internal error line (actors with constructor arguments in the object store and
    # max_restarts > 0), and no start-up note: a running cluster was given.
    assert "core_worker" not in result.stderr and "max_restarts" not in result.stderr
    assert "ray_remote_args" not in result.stderr and "note:" not in result.stderr
    assert result.stdout.startswith(f"wrote {tmp_path / 'ray'} (nanogpt): 2 inputs, 2 shards")
    encode_dataset([inputs / "c.txt", inputs / "a.parquet"], tmp_path / "local", vocab="gpt2", format="nanogpt",
                   eos=True)
    assert snapshot(tmp_path / "ray") == snapshot(tmp_path / "local")
