"""The stated limits (docs/reliability.md): very large inputs take linear time and bounded
memory, or raise a typed error; they never abort the interpreter.

The large cases run in a subprocess, so that their peak memory can be read on its own
(``ru_maxrss`` is a high-water mark of the whole process) and a failure cannot take the test
run down with it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import BACKENDS


def run_measured(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints a JSON dict, to which the child's peak RSS
    (MiB) is added."""
    wrapper = textwrap.dedent("""
        import json, resource, sys
        result = {}
        exec(sys.stdin.read(), {"result": result})
        result["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
    """)
    done = subprocess.run([sys.executable, "-c", wrapper], input=textwrap.dedent(code), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_one_gib_string_is_counted_in_linear_time_and_bounded_memory():
    """1 GiB of one letter: one piece of 2**30 bytes, which the O(n) encoder takes; memory is
    the text, its ids and the encoder's per-byte arrays, a few bytes per input byte."""
    result = run_measured("""
        import time
        from wordsplit import get_tokenizer
        tok = get_tokenizer("cl100k_base", backend="native")
        text = "a" * 2**30
        start = time.process_time()
        result["count"] = tok.count(text)
        result["seconds"] = time.process_time() - start
    """)
    assert result["count"] == 2**30 // 8  # "aaaaaaaa" is one cl100k token
    assert result["seconds"] < 60
    assert result["peak_mib"] < 6 * 1024


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_ten_million_token_decode(backend):
    result = run_measured(f"""
        import time
        from wordsplit import get_tokenizer
        tok = get_tokenizer("qwen3", backend="{backend}")
        ids = tok.encode("hello world, ") * 2_500_000
        open("/proc/self/clear_refs", "w").write("5")  # reset the peak RSS: count the decode alone
        before = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024
        start = time.process_time()
        text = tok.decode(ids)
        result["seconds"] = time.process_time() - start
        after = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024
        result["decode_mib"] = after - before
        result["ok"] = text == "hello world, " * 2_500_000 and len(ids) == 10_000_000
    """)
    assert result["ok"]
    assert result["seconds"] < 30
    # The text (130 MB) as bytes and as str, plus the work of joining; not 80 bytes per id.
    assert result["decode_mib"] < 512
