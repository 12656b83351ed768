"""The facts a report's header gives about its run: the machine (CPU, cores, memory, OS,
Python), and the versions of wordsplit (its git commit and build time) and of the peers."""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Optional

from contenders import PEERS, REPO, interpreter, shown


def machine_info() -> dict:
    """CPU model, cores, memory, OS and Python of this machine."""
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem = next((line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                if line.startswith("MemTotal")), "0")
    return {"cpu": cpu, "vector": vector_paths(), "cores": os.cpu_count(), "mem_gib": round(int(mem) / 2**20, 1),
            "os": f"{platform.system()} {platform.release()}", "python": platform.python_version()}


def vector_paths() -> str:
    """The widest vector code paths wordsplit's core takes on this machine: AVX-512, or AVX2
    (on an AVX-512 CPU when ``WORDSPLIT_NO_AVX512`` turns those paths off), or neither."""
    flags = set(next((line.split(":", 1)[1].split() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("flags")), []))
    switched_off = os.environ.get("WORDSPLIT_NO_AVX512", "0") not in ("", "0")
    if "avx512bw" in flags:
        return "AVX2 paths (AVX-512 switched off by WORDSPLIT_NO_AVX512)" if switched_off else "AVX-512"
    return "AVX2" if "avx2" in flags else "no AVX2"


def versions(snapshot_of: Optional[str], built_elsewhere: bool = False) -> dict:
    """Package versions, and wordsplit's git commit (read-only git calls) and build time;
    ``built_elsewhere``: wordsplit runs from ``snapshot_of`` (``--wordsplit``), a build
    whose commit this checkout cannot tell."""
    out = {}
    for dist in ("wordsplit", "tiktoken", "tokenizers", "quicktok-v1", "gigatoken", "fastokens", "tokie", "kitoken",
                 "splintr-rs"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    # the peers run by another interpreter (contenders.interpreter): their version there
    for key in PEERS:
        python = interpreter(key)
        if python:
            dist = {"tokenizers1": "tokenizers"}.get(key, key)
            code = f"from importlib.metadata import version; print(version({dist!r}))"
            done = subprocess.run([python, "-c", code], capture_output=True, text=True)
            out[f"{dist} ({shown(python)})"] = done.stdout.strip() if done.returncode == 0 else "not installed"

    def git(*cmd: str) -> str:
        return subprocess.run(["git", "-C", str(REPO), *cmd], capture_output=True, text=True).stdout.strip()

    if built_elsewhere:
        out["wordsplit"] += f" (the build {Path(snapshot_of).name}, run from a copy taken at start)"
        return out
    dirty = " + uncommitted changes" if git("status", "--porcelain", "--", "src", "native") else ""
    out["wordsplit"] += f" (commit {git('rev-parse', '--short', 'HEAD')}{dirty}"
    out["wordsplit"] += "; run from a copy of the package taken at start)" if snapshot_of else ")"
    native = next(iter((REPO / "src" / "wordsplit").glob("_native*.so")), None)
    if native:
        built = datetime.fromtimestamp(native.stat().st_mtime, timezone.utc)
        out["wordsplit._native built"] = built.strftime("%Y-%m-%d %H:%M UTC")
    return out
