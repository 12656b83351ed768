"""Ctrl-C stops a long native encode: the engine checks for signals between blocks of pieces
(about every millisecond of work), so KeyboardInterrupt arrives during the call, not when it
returns."""

import subprocess
import sys
import textwrap

# A child process: random words (pieces no cache has seen, so each is merged: about 0.7 s of
# work on the benches' Zen 4, where 8 MB took 0.17 s and left too little room after the
# signal), timed whole once, then again with SIGINT sent 50 ms into the call.
CHILD = textwrap.dedent("""
    import os, random, signal, threading, time
    import wordsplit

    tok = wordsplit.get_tokenizer("cl100k_base", backend="native")
    letters = bytes((b"abcdefghijklmnopqrstuvwxyz " * 10)[:256])
    text = random.Random(0).randbytes(32_000_000).translate(letters).decode()
    start = time.perf_counter()
    tok.count(text)
    full = time.perf_counter() - start
    threading.Timer(0.05, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    start = time.perf_counter()
    try:
        tok.count(text)
        print("finished", full, time.perf_counter() - start)
    except KeyboardInterrupt:
        print("interrupted", full, time.perf_counter() - start)
""")


def test_ctrl_c_interrupts_a_long_encode():
    result = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    outcome, full, interrupted = result.stdout.split()
    assert outcome == "interrupted"
    # Without the check the exception waits for the whole call; with it, a block of pieces.
    assert float(interrupted) < 0.5 * float(full), result.stdout
