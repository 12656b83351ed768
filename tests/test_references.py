"""Every file the repository's text points to is in the repository, and no text points outside it.

The tracked text files are read (``git ls-files``) and three kinds of reference checked:

* a Markdown link ``[text](target)`` to a relative target resolves from the file's folder;
* a path that starts at a top-level entry of the repository (``src/...``, ``tests/...``,
  ``native/...``) or at the package (``wordsplit/...``) names a tracked file or folder;
* a Markdown file named anywhere (``see plugins.md``, ``gguf/SOURCES.md``) is a tracked file, or
  the end of a tracked file's path.

Another project's file is named with its owner (``llama.cpp's src/llama-vocab.cpp``), or is of
a kind the repository's folder of that name never holds (a ``.rs`` file under ``src``); a file
a command writes (``> table.md``) is no reference, nor is a build's output (a path the
repository's .gitignore ignores, such as ``wasm/dist/``). And no text names an absolute path on some
machine: a home or work folder anywhere, the temporary folder in code (a default location that
exists only where it was written).
"""

from __future__ import annotations

import re
import subprocess
from functools import lru_cache
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent

# Folders no repository shares with any machine; the temporary folder is checked in code only,
# since a command line in the docs may well write its output there.
MACHINE_PATHS = re.compile(r"(?<![\w.~-])/(?:work|home|root|Users)/[\w.-]")
TMP_PATH = re.compile(r"(?<![\w.~-])/t[m]p/")
CODE_SUFFIXES = {".py", ".rs", ".toml", ".sh", ".cfg", ".yml", ".yaml", ".json"}

MARKDOWN_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
URL = re.compile(r"\b(?:https?|file)://\S+|\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|io|net|dev|ai|co)/\S*")
# A path-like token: no spaces, made of path characters, not ending in punctuation.
PATH_TOKEN = re.compile(r"(?<![\w./<{*$-])((?:[\w.-]+/)+[\w.-]*[\w/])")
MARKDOWN_NAME = re.compile(r"(?<![\w./<{*$-])((?:[\w.-]+/)*[\w-]+\.md)\b")
# Before a token: its owner named (``llama.cpp's ``), or a shell redirection (``> ``).
OWNED = re.compile(r"'s [`(]*$")
WRITTEN = re.compile(r"> *$")


@lru_cache(maxsize=1)
def tracked() -> tuple[str, ...]:
    """The tracked files, as repository-relative POSIX paths."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return tuple(name for name in out.decode().split("\0") if name)


@lru_cache(maxsize=1)
def entries() -> frozenset[str]:
    """Every tracked file and every folder above one."""
    found = set()
    for name in tracked():
        path = PurePosixPath(name)
        found.add(name)
        found.update(str(parent) for parent in path.parents if str(parent) != ".")
    return frozenset(found)


def text_files() -> list[str]:
    """The tracked files that are text (valid UTF-8 without NUL bytes), except the real
    tokenizer files of tests/data/, which are kept exactly as their sources have them (a
    tokenizer_config.json may name a path on its author's machine); their SOURCES.md count."""
    files = []
    for name in tracked():
        if name.startswith("tests/data/") and not name.endswith(".md") or (ROOT / name).is_symlink():
            continue  # (a link is no text of its own: the crate's links to the package's files)
        data = (ROOT / name).read_bytes()
        if b"\0" in data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        files.append(name)
    return files


@lru_cache(maxsize=1)
def suffixes_under() -> dict[str, frozenset[str]]:
    """Per top-level folder, the file suffixes found anywhere below it."""
    found: dict[str, set[str]] = {}
    for name in tracked():
        path = PurePosixPath(name)
        if len(path.parts) > 1:
            found.setdefault(path.parts[0], set()).add(path.suffix)
    return {folder: frozenset(suffixes) for folder, suffixes in found.items()}


def _another_projects(line: str, start: int, token: str) -> bool:
    """Whether ``token`` (at ``start`` in ``line``) names another project's file, or one a
    command writes, rather than one of the repository."""
    before = line[:start]
    if OWNED.search(before) or WRITTEN.search(before):
        return True
    first, suffix = token.split("/")[0], PurePosixPath(token).suffix
    folder = "src" if first == "wordsplit" else first  # the package is src/wordsplit
    return bool(suffix) and suffix not in suffixes_under().get(folder, frozenset())


@lru_cache(maxsize=None)
def _build_output(path: str) -> bool:
    """Whether the repository's .gitignore ignores ``path``: a file or folder a build writes."""
    # As a file, or as a folder (a pattern that ends in "/" ignores folders only).
    return any(subprocess.run(["git", "check-ignore", "-q", "--no-index", candidate], cwd=ROOT).returncode == 0
               for candidate in (path, path + "/"))


def _exists(target: str, base: PurePosixPath) -> bool:
    """Whether ``target`` names a tracked file or folder, or a build's output, from ``base`` or
    from the root."""
    target = target.rstrip("/")
    for start in (base, PurePosixPath(".")):
        parts: list[str] = []
        for part in (start / target).parts:
            if part == "..":
                if not parts:
                    return False
                parts.pop()
            elif part != ".":
                parts.append(part)
        if "/".join(parts) in entries() or (parts and _build_output("/".join(parts))):
            return True
    return False


def references(name: str, text: str) -> list[str]:
    """What is wrong with the references of the file ``name`` holding ``text``."""
    base = PurePosixPath(name).parent
    top = {PurePosixPath(entry).parts[0] for entry in tracked()}
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        where = f"{name}:{number}"
        for match in MACHINE_PATHS.finditer(line):
            problems.append(f"{where}: an absolute path outside the repository: {line[match.start():].split()[0]!r}")
        if PurePosixPath(name).suffix in CODE_SUFFIXES:
            for match in TMP_PATH.finditer(line):
                if WRITTEN.search(line[:match.start()]):
                    continue
                path = line[match.start():].split()[0]
                problems.append(f"{where}: a path in the temporary folder as a fixed location: {path!r}")
        if name.endswith(".md"):
            for target in MARKDOWN_LINK.findall(line):
                if re.match(r"[a-z]+:|#", target):
                    continue
                if not _exists(target.split("#")[0], base):
                    problems.append(f"{where}: the link {target!r} points to no file of the repository")
        line = URL.sub(lambda m: " " * len(m.group()), line)
        for match in PATH_TOKEN.finditer(line):
            token = match.group(1)
            first = token.split("/")[0]
            if first not in top and first != "wordsplit" or _exists(token, base):
                continue
            if _another_projects(line, match.start(), token):
                continue
            if first in top and not _exists(token, PurePosixPath(".")):
                problems.append(f"{where}: {token!r} is not a file or folder of the repository")
            elif first == "wordsplit" and not _exists(token, PurePosixPath("src")):
                problems.append(f"{where}: {token!r} is not a file or folder of the package")
        for match in MARKDOWN_NAME.finditer(line):
            token = match.group(1)
            if _exists(token, base) or any(entry == token or entry.endswith("/" + token) for entry in tracked()):
                continue
            if OWNED.search(line[:match.start()]) or WRITTEN.search(line[:match.start()]):
                continue
            problems.append(f"{where}: {token!r} is not a Markdown file of the repository")
    return problems


def _sample(text: str) -> str:
    """``text`` with ``|`` for ``/`` and ``§`` for ``.``: the samples below, written so that
    this file's own lines hold none of the references they show."""
    return text.replace("|", "/").replace("§", ".")


def test_the_checks_find_what_they_look_for():
    """Each rule on made-up lines (so that a rule that stopped matching cannot pass unnoticed)."""
    text = _sample("\n".join([
        "See DESIGN§md and vocabs|SOURCES§md, [a link](nowhere§md) and `tests|nowhere§py`.",
        "The corpus is in |work|shared|corpus; `wordsplit|missing§py` is not a module.",
        "Fine: [plugins](plugins§md), docs|plugins§md, `src|wordsplit|vocab§py`, https:||github§com|x|y|README§md,",
        "llama§cpp's src|llama-vocab§cpp, the crate's src|tables§rs, ggml's docs|gguf§md, bench > table§md.",
        "Built, not tracked: target|release|x§so and wasm|dist|wordsplit§js (.gitignore ignores them).",
    ]))
    problems = references(_sample("docs|example§md"), text)
    assert [p.split(": ", 1)[1] for p in problems] == [_sample(p) for p in [
        "the link 'nowhere§md' points to no file of the repository",
        "'tests|nowhere§py' is not a file or folder of the repository",
        "'DESIGN§md' is not a Markdown file of the repository",
        "'vocabs|SOURCES§md' is not a Markdown file of the repository",
        "'nowhere§md' is not a Markdown file of the repository",
        "an absolute path outside the repository: '|work|shared|corpus;'",
        "'wordsplit|missing§py' is not a file or folder of the package",
    ]]
    assert references(_sample("tools|x§py"), _sample('OUT = Path("|tmp|out")')) == [
        _sample("tools|x§py:1: a path in the temporary folder as a fixed location: '|tmp|out\")'")
    ]
    assert references(_sample("docs|x§md"), _sample("python bench§py > |tmp|bench§md")) == []


def test_every_reference_is_to_a_file_of_the_repository():
    """Every tracked text file, benches/ and native/ included: a dangling reference or a
    machine's path anywhere is listed with its file and line."""
    problems = [problem for name in text_files() for problem in references(name, (ROOT / name).read_text())]
    assert not problems, f"{len(problems)} references to fix:\n" + "\n".join(problems)
