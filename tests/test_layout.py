"""The package's shape: the facts both languages share have one source, the version is one
value, requires-python is what the code needs, and the layers import only downwards."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import wordsplit

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "wordsplit"


def test_native_names_are_generated_from_the_python_table():
    """crates/wordsplit/src/names.rs is what tools/gen_native_names.py makes of wordsplit/native_names.py."""
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_native_names.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_native_core_has_exactly_the_shared_names():
    from wordsplit.native_names import ENCODER_ALIASES, SCANNER_PATTERNS
    from wordsplit.vocab import native_module

    native = native_module()
    assert sorted(native.SCANNERS) == sorted((name, p) for name, patterns in SCANNER_PATTERNS.items() for p in patterns)
    assert sorted(native.ENCODERS) == sorted(ENCODER_ALIASES)


def test_version_is_the_pyproject_version():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == wordsplit.__version__


def test_requires_python_is_what_the_code_needs():
    """vermin finds the oldest Python the package's code runs on; requires-python says the same."""
    minimum = re.search(r'^requires-python = ">=(3\.\d+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    result = subprocess.run([str(Path(sys.executable).with_name("vermin")), "--no-tips", "--violations", f"-t={minimum}-",
                             str(PACKAGE)], capture_output=True, text=True)
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
    """The cache knows nothing above it; patterns is a leaf; spanners do not reach the download stack."""
    assert _imports(PACKAGE / "store" / "cache.py") <= {"wordsplit.errors"}
    assert _imports(PACKAGE / "patterns.py") == set()
    for path in (PACKAGE / "spanners").glob("*.py"):
        assert not {m for m in _imports(path) if m.startswith(("wordsplit.store", "wordsplit.vocabs"))}, path
