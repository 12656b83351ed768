"""The package's shape: the facts both languages share have one source, the version is one
value, requires-python is what the code needs, the layers import only downwards, and no Python
file is too long to hold one role."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import wordsplit

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "wordsplit"


def test_the_shared_facts_are_generated_from_the_cores_data_file():
    """crates/wordsplit/src/names.rs, crates/wordsplit/src/formats/named_table.rs and
    wordsplit/_registered.py are what tools/gen_registered.py makes of crates/wordsplit/data/registered.json."""
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_registered.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_every_named_pattern_is_a_constant_of_patterns_py():
    """patterns.py names each pattern of the data file as names.rs does (``gpt2-original`` is
    GPT2_ORIGINAL_PATTERN), and no other."""
    from wordsplit import patterns
    from wordsplit.registered import constant_name

    constants = {name: value for name, value in vars(patterns).items() if name.endswith("_PATTERN")}
    assert constants == {constant_name(name): pattern for name, pattern in patterns.PATTERNS.items()}


def test_the_native_core_has_exactly_the_shared_names():
    from wordsplit.native_names import ENCODER_ALIASES, SCANNER_PATTERNS
    from wordsplit.core import extension

    native = extension()
    assert sorted(native.SCANNERS) == sorted((name, p) for name, patterns in SCANNER_PATTERNS.items() for p in patterns)
    assert sorted(native.ENCODERS) == sorted(ENCODER_ALIASES)


def test_version_is_the_pyproject_version():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == wordsplit.__version__


def test_requires_python_is_what_the_code_needs():
    """vermin finds the oldest Python the package's code runs on; requires-python says the same."""
    minimum = re.search(r'^requires-python = ">=(3\.\d+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    vermin = str(Path(sys.executable).with_name("vermin"))
    result = subprocess.run([vermin, "--no-tips", "--violations", f"-t={minimum}-", str(PACKAGE)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    older = f"3.{int(minimum.split('.')[1]) - 1}"
    result = subprocess.run([str(Path(sys.executable).with_name("vermin")), "--no-tips", "--violations", f"-t={older}-",
                             str(PACKAGE)], capture_output=True, text=True)
    assert result.returncode != 0, f"the code also runs on {older}: lower requires-python"


def _imports(path: Path) -> set[str]:
    """The wordsplit modules ``path`` imports at module level (absolute dotted names)."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            found.add(f"{base}.{node.module}" if node.module else base)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("wordsplit"):
            found.add(node.module)
    return found


def test_layers_import_only_downwards():
    """The cache knows nothing above it (but the errors and its hashes); patterns reads only the
    shared data, whose reader imports nothing of the package (tools/gen_registered.py loads it by
    path); spanners do not reach the download stack."""
    assert _imports(PACKAGE / "store" / "cache.py") <= {"wordsplit.errors", "wordsplit.store.digests"}
    assert _imports(PACKAGE / "store" / "digests.py") == set()
    assert _imports(PACKAGE / "patterns.py") == {"wordsplit._registered", "wordsplit.registered"}
    assert _imports(PACKAGE / "registered.py") == _imports(PACKAGE / "_registered.py") == set()
    for path in (PACKAGE / "spanners").glob("*.py"):
        assert not {m for m in _imports(path) if m.startswith(("wordsplit.store", "wordsplit.vocabs"))}, path


# The layers of the package, lowest first, by the first name under ``wordsplit`` (a module, or a
# subpackage and everything in it; ``""`` is the package's ``__init__``, the public API). A module
# may import its own layer and the layers below it, never one above.
LAYERS = {
    # the way into the Rust core (core), what a vocabulary is (its pipeline's typed stages: spec),
    # how files become one, where they are kept, and the registries and contracts that name
    # components without importing them
    "data": ("errors", "_version", "_native", "core", "_unicode16", "_nfc_data", "_hf_char_data", "_registered",
             "registered", "patterns", "native_names", "registry", "protocols", "spec", "split_programs",
             "normalizer_programs", "post_processor_programs", "vocab", "tables", "formats", "store", "vocabs",
             "sentencepiece"),
    # the pipeline's stages
    "components": ("normalizers", "specials", "spanners", "encoders", "offsets",
                   "postprocess"),
    # the two engines that run the stages
    "engines": ("engines",),
    # the Tokenizer and what it hands out
    "tokenizer": ("tokenizer", "options", "streaming", "chat", "explain"),
    # programs built on the Tokenizer, and the public API that gathers everything
    "apps": ("apps", "cli", "compat", "datasets", "training", "terminal", "__main__", ""),
}
RANK = {name: rank for rank, names in enumerate(LAYERS.values()) for name in names}
LAYER_OF = {name: layer for layer, names in LAYERS.items() for name in names}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    """Whether ``dotted`` (``wordsplit....``) names a module or package of the source tree."""
    base = PACKAGE.parent.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or base.is_dir() or any(base.parent.glob(base.name + ".*.so"))


def _module_level(tree: ast.Module, *, types: bool) -> list[ast.stmt]:
    """The statements that run when the module is imported (the body, and the blocks of its
    top-level ``if``, ``try`` and ``with``), not those of functions and classes; with ``types``
    false, not the blocks of ``if TYPE_CHECKING:`` either."""
    found, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        found.append(node)
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            todo += node.body if types else []
            todo += node.orelse
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for block in ("body", "orelse", "finalbody", "handlers"):
                todo += getattr(node, block, [])
        elif isinstance(node, ast.ExceptHandler):
            todo += node.body
    return found


def _every_import(path: Path, *, depth: str = "any") -> list[tuple[str, int, str]]:
    """Every wordsplit module ``path`` imports: ``(module, line, the import as written)``.
    ``depth`` is ``"any"`` (in functions and ``TYPE_CHECKING`` blocks too), ``"module"`` (what
    runs on import and what a type checker reads: ``TYPE_CHECKING`` blocks, not functions) or
    ``"run"`` (what runs on import). ``from X import y`` imports ``X.y`` when that is a module,
    else ``X``."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    nodes = ast.walk(tree) if depth == "any" else _module_level(tree, types=depth == "module")
    found = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, f"import {alias.name}") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            written = f"from {'.' * node.level}{node.module or ''} import {', '.join(a.name for a in node.names)}"
            for alias in node.names:
                target = f"{source}.{alias.name}"
                found.append((target if _is_module(target) else source, node.lineno, written))
    return [(name, line, written) for name, line, written in found if name.split(".")[0] == "wordsplit"]


def _layer_key(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def test_every_module_has_a_layer():
    keys = {_layer_key(_module_name(path)) for path in PACKAGE.rglob("*.py")}
    assert not keys - set(RANK), f"add these to LAYERS in tests/test_layout.py: {sorted(keys - set(RANK))}"
    assert not set(RANK) - keys - {"_native"}, f"LAYERS names what is not in the package: {sorted(set(RANK) - keys)}"


def test_layers_import_only_downwards_at_any_depth():
    """No module imports a layer above its own, even inside a function (see LAYERS)."""
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        key = _layer_key(_module_name(path))
        for target, line, written in _every_import(path):
            target_key = _layer_key(target)
            if RANK[target_key] > RANK[key]:
                upward.append(f"{path.relative_to(ROOT)}:{line}: {written!r} ({LAYER_OF[key]} imports "
                              f"{target} of {LAYER_OF[target_key]})")
    assert not upward, "imports that run upward:\n" + "\n".join(upward)


# The contracts name in their annotations the data their implementations take (a Vocab, the
# MergeTables) and the registries the contracts they hold, under ``if TYPE_CHECKING:``: those
# names are for type checkers, not dependencies, so they make no cycle.
CONTRACTS = ("wordsplit.protocols", "wordsplit.registry")


def _data_layer_imports() -> dict[str, dict[str, tuple[int, str]]]:
    """module → {data module it imports → (line, the import)}, for the modules of the data layer,
    counting what runs on import and what a type checker reads (``TYPE_CHECKING`` blocks)."""
    graph: dict[str, dict[str, tuple[int, str]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if LAYER_OF[_layer_key(module)] != "data":
            continue
        depth = "run" if module in CONTRACTS else "module"
        for target, line, written in _every_import(path, depth=depth):
            if target != module and LAYER_OF.get(_layer_key(target)) == "data":
                graph.setdefault(module, {}).setdefault(target, (line, written))
    return graph


def _a_cycle(graph: dict[str, dict[str, tuple[int, str]]]) -> list[str]:
    """The modules of one cycle of ``graph``, in import order (the first again at the end), or []."""
    state: dict[str, str] = {}  # "open" while on the path, then "done"
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = "open"
        path.append(module)
        for target in graph.get(module, {}):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        state[module] = "done"
        path.pop()
        return []

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return []


def test_the_data_layer_has_no_import_cycle():
    """Within the data layer, modules import each other one way only, counting what runs on
    import and what a type checker reads (a ``TYPE_CHECKING`` import is a dependency too); an
    import inside a function, made on call, is not counted."""
    graph = _data_layer_imports()
    cycle = _a_cycle(graph)
    steps = [f"{a} imports {b} ({_module_file(a)}:{graph[a][b][0]}: {graph[a][b][1]!r})"
             for a, b in zip(cycle, cycle[1:])]
    assert not cycle, "an import cycle in the data layer: move what both need below both:\n" + "\n".join(steps)


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b": (1, "")}, "b": {"c": (1, "")}, "c": {"b": (1, "")}, "d": {"a": (1, "")}}
    assert _a_cycle(graph) == ["b", "c", "b"]
    assert _a_cycle({"a": {"b": (1, "")}, "b": {}}) == []


def _module_file(module: str) -> str:
    base = PACKAGE.parent.joinpath(*module.split("."))
    return str((base / "__init__.py" if base.is_dir() else base.with_suffix(".py")).relative_to(ROOT))


MAX_LINES = 800


def _generated(text: str) -> bool:
    return "GENERATED" in text[:300] or "@generated" in text[:300]


def _hand_written_lines(path) -> int:
    """The lines of a source file before its unit tests (a Rust file's trailing
    ``#[cfg(test)] mod tests``): tests may sit beside the code they test."""
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "#[cfg(test)]" and re.match(r"\s*mod tests\b", lines[i + 1]):
            return i
    return len(lines)


def _too_long(paths, root=ROOT) -> list[str]:
    return [f"{path.relative_to(root)}: {n} lines" for path in sorted(paths)
            if not _generated(path.read_text()) and (n := _hand_written_lines(path)) > MAX_LINES]


def test_no_python_file_is_too_long():
    """A file over 800 lines holds several roles: split it (generated tables excepted)."""
    long = _too_long([*PACKAGE.rglob("*.py"), *(ROOT / "benches").glob("*.py")])
    assert not long, long


def test_no_rust_file_is_too_long():
    """The same rule for the Rust crates' code (generated tables, test files and a file's
    trailing unit tests excepted)."""
    sources = [path for path in (ROOT / "crates").glob("*/src/**/*.rs") if path.name not in ("tests.rs", "testing.rs")]
    assert len(sources) > 50
    long = _too_long(sources)
    assert not long, long


def test_the_line_rule_counts_what_it_should(tmp_path):
    code = tmp_path / "a.rs"
    code.write_text("fn a() {}\n" * 3 + "#[cfg(test)]\nmod tests {\n}\n")
    assert _hand_written_lines(code) == 3
    code.write_text("fn a() {}\n" * (MAX_LINES + 1))
    assert _too_long([code], tmp_path) == ["a.rs: 801 lines"]
    code.write_text("//! @generated by a tool\n" + "fn a() {}\n" * MAX_LINES)
    assert _too_long([code], tmp_path) == []


def test_one_boundary_to_the_extension():
    """Only ``wordsplit.core`` imports the compiled extension, and three modules reach the core
    through it, one per part of the bindings they use: ``vocab`` (the tables), ``engines.native``
    (the pipeline, its stages, the regex engine, training's word counter) and ``formats.native``
    (the file readers' fast paths)."""
    def importers(target: str) -> list[str]:
        return sorted(_module_name(path) for path in PACKAGE.rglob("*.py")
                      if any(name == target for name, _, _ in _every_import(path)))

    assert importers("wordsplit._native") == ["wordsplit.core"]
    assert importers("wordsplit.core") == ["wordsplit.engines.native", "wordsplit.formats.native", "wordsplit.vocab"]
