"""The npm package: wasm/dist/ (written by ``bash wasm/build.sh``) packs with ``npm pack`` into a
tarball that an empty JavaScript project installs offline and imports by its name, as an ES
module, by ``require`` and with its TypeScript types; the installed package gives the golden ids
of every registered vocabulary, and the example of its README runs as written.

The build is the one tests/test_wasm.py makes (about a second when nothing changed)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WASM = ROOT / "wasm"
VOCABS = ROOT / "src" / "wordsplit" / "vocabs" / "data"


def run(command: list[str], cwd: Path) -> str:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(command)}:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def tarball(tmp_path_factory) -> Path:
    """The package's tarball, packed from a fresh build of wasm/dist/."""
    for tool in ("node", "npm"):
        assert shutil.which(tool), f"{tool} is needed to test the npm package (apt-get install nodejs npm)"
    run(["bash", str(WASM / "build.sh")], ROOT)
    out = tmp_path_factory.mktemp("npm")
    (packed,) = json.loads(run(["npm", "pack", str(WASM / "dist"), "--pack-destination", str(out), "--json"], ROOT))
    return out / packed["filename"]


@pytest.fixture(scope="module")
def project(tarball, tmp_path_factory) -> Path:
    """An empty project with the tarball installed (no registry: --offline)."""
    project = tmp_path_factory.mktemp("consumer")
    (project / "package.json").write_text(json.dumps({"name": "consumer", "private": True, "type": "module"}))
    run(["npm", "install", "--offline", "--no-audit", "--no-fund", str(tarball)], project)
    return project


def test_the_package_json_names_the_module_its_types_and_the_version_of_the_release():
    package = json.loads((WASM / "package.json").read_text())
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert (package["name"], package["version"], package["license"], package["type"]) == (
        "wordsplit", version, "MIT", "module")
    assert package["exports"]["."] == {"types": "./wordsplit.d.ts", "default": "./wordsplit.js"}
    assert package["main"] == "./wordsplit.js" and package["types"] == "./wordsplit.d.ts"


def test_the_tarball_holds_the_module_its_types_readme_and_licences(tarball):
    with tarfile.open(tarball) as tar:
        files = {member.name.removeprefix("package/"): member for member in tar.getmembers() if member.isfile()}
        assert set(files) == {"package.json", "wordsplit.js", "wordsplit.d.ts", "wordsplit.wasm", "README.md",
                              "LICENSE", "rust-crates.txt"}
        assert tar.extractfile(files["LICENSE"]).read() == (ROOT / "LICENSE").read_bytes()
        assert tar.extractfile(files["README.md"]).read() == (WASM / "README.md").read_bytes()
        assert tar.extractfile(files["wordsplit.wasm"]).read(4) == b"\0asm"
    assert tarball.name == f"wordsplit-{json.loads((WASM / 'package.json').read_text())['version']}.tgz"


GOLDEN_CHECK = """
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { Tokenizer, VOCAB_FILES } from "wordsplit";

const [vocabs, goldens] = process.argv.slice(2);
const read = (path) => gunzipSync(readFileSync(path));
const checked = {};
for (const name of Object.keys(VOCAB_FILES)) {
  const file = name === "qwen3" ? "qwen3-tokenizers.json.gz" : `tiktoken-${name}.json.gz`;
  const golden = JSON.parse(read(`${goldens}/${file}`).toString("utf8"));
  const tok = await Tokenizer.fromVocabData(name, read(`${vocabs}/${VOCAB_FILES[name]}.gz`));
  const cases = [...golden.cases, ...(golden.special_cases ?? [])];
  const special = new Set(name === "qwen3" ? golden.cases : golden.special_cases ?? []);
  for (const c of cases) {
    const got = Array.from(tok.encode(c.text, special.has(c) ? { allowedSpecial: "all" } : {}));
    if (JSON.stringify(got) !== JSON.stringify(c.ids)) throw new Error(`${name}: ${JSON.stringify(c.text)}: ${got}`);
  }
  tok.free();
  checked[name] = cases.length;
}
console.log(JSON.stringify(checked));
"""


def test_an_installed_project_gets_the_golden_ids_of_every_registered_vocabulary(project):
    (project / "golden.mjs").write_text(GOLDEN_CHECK)
    checked = json.loads(run(["node", "golden.mjs", str(VOCABS), str(ROOT / "tests" / "golden")], project))
    assert set(checked) == {"gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base",
                            "o200k_harmony", "qwen3"}
    assert all(count > 300 for count in checked.values())


def test_commonjs_requires_it_and_typescript_finds_its_types(project):
    # (the package's package.json by its exported subpath, "wordsplit" + "/package.json")
    script = ("const w = require('wordsplit'); const p = require(['wordsplit', 'package.json'].join('/'));"
              "console.log(typeof w.Tokenizer, typeof w.init, p.types)")
    assert run(["node", "--input-type=commonjs", "-e", script], project).split() == ["function", "function",
                                                                                     "./wordsplit.d.ts"]
    types = (project / "node_modules" / "wordsplit" / "wordsplit.d.ts").read_text()
    assert "export class Tokenizer" in types


def test_the_readme_example_runs_in_an_installed_project(project):
    (block,) = re.findall(r"```js\n(.*?)```", (WASM / "README.md").read_text(), re.S)
    shutil.copy(VOCABS / "cl100k_base.tiktoken.gz", project / "cl100k_base.tiktoken.gz")
    (project / "readme.mjs").write_text(block)
    run(["node", "readme.mjs"], project)
