"""The reader of the facts both languages share: ``crates/wordsplit/data/registered.json``, the Rust
core's data file, which the package holds as the generated ``_registered.py`` (the same data
without its comments) and ``tools/gen_registered.py`` reads directly.

Each function takes the data and gives one table in the form the package uses: patterns by name,
scanners and encoders, the slow tokenizer classes, and the fields of the registered
vocabularies and of the rank files recognized by content, with their token tables expanded.
The module imports nothing of the package, so the generator loads it by path.

>>> data = {"patterns": {"digits": {"source": "an example", "pattern": "[0-9]+"}},
...         "scanners": {"digit-scanner": ["digits"]}}
>>> scanner_patterns(data)
{'digit-scanner': ('[0-9]+',)}
>>> token_table([{"<|end|>": 9}, {"first_id": 10, "tokens": ["<|a|>", {"template": "<|t{}|>", "range": [0, 2]}]}])
{'<|end|>': 9, '<|a|>': 10, '<|t0|>': 11, '<|t1|>': 12}
>>> token_table([{"first_id": 5, "tokens": [{"template": "<|{}|>", "range": [0, 3], "step": "0.02"}]}])
{'<|0.00|>': 5, '<|0.02|>': 6, '<|0.04|>': 7}
"""

from __future__ import annotations

from typing import Any, Mapping

# The keys that are comments in the data file: no reader uses them.
COMMENT_KEYS = frozenset({"about", "source", "note"})
# The facts a tokenizer defines in code around its rank file (the fields of RankFileFacts but the name).
_FACT_KEYS = ("pattern", "special_tokens", "added_tokens", "n_vocab", "normalizer", "eos_token")
_FILE_KEYS = ("file", "url", "sha256")


def patterns(data: Mapping[str, Any]) -> dict[str, str]:
    """Pattern name → the pattern string."""
    return {name: entry["pattern"] for name, entry in data["patterns"].items()}


def constant_name(pattern_name: str) -> str:
    """The name of a pattern's constant in both languages: ``gpt2-original`` is ``GPT2_ORIGINAL_PATTERN``."""
    return pattern_name.upper().replace("-", "_") + "_PATTERN"


def scanner_patterns(data: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Scanner name → the exact pattern strings it is proven for."""
    by_name = patterns(data)
    return {scanner: tuple(by_name[name] for name in names) for scanner, names in data["scanners"].items()}


def encoder_aliases(data: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Encoder name → its aliases."""
    return {name: tuple(aliases) for name, aliases in data["encoders"].items()}


def tokenizer_classes(data: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """Slow HF tokenizer class → (its pattern, its normalizer)."""
    by_name = patterns(data)
    return {name: (by_name[entry["pattern"]], entry["normalizer"]) for name, entry in data["tokenizer_classes"].items()}


def token_table(spec: Mapping[str, int] | list) -> dict[str, int]:
    """The token → id table ``spec`` spells (the file's "token tables" note says how)."""
    if isinstance(spec, Mapping):
        return dict(spec)
    table: dict[str, int] = {}
    for part in spec:
        if "first_id" not in part:
            table.update(part)
            continue
        tokens: list[str] = []
        for item in part["tokens"]:
            tokens += [item] if isinstance(item, str) else _template_tokens(item)
        if "size" in part and len(tokens) != part["size"]:
            raise ValueError(f"the run from id {part['first_id']} holds {len(tokens)} tokens, not {part['size']}")
        table.update(zip(tokens, range(part["first_id"], part["first_id"] + len(tokens))))
    return table


def _template_tokens(item: Mapping[str, Any]) -> list[str]:
    head, _, tail = item["template"].partition("{}")
    if "each" in item:
        return [f"{head}{text}{tail}" for text in item["each"]]
    start, stop = item["range"]
    if "step" not in item:
        return [f"{head}{n}{tail}" for n in range(start, stop)]
    # n × step in exact decimal arithmetic: "0.02" is 2 units of 1/100.
    decimals = len(item["step"].partition(".")[2])
    unit = int(item["step"].replace(".", ""))
    written = (f"{n * unit:0{decimals + 1}d}" for n in range(start, stop))
    return [f"{head}{digits[:-decimals]}.{digits[-decimals:]}{tail}" if decimals else f"{head}{digits}{tail}"
            for digits in written]


def _facts(name: str, entry: Mapping[str, Any], by_name: Mapping[str, str], *, allowed: tuple[str, ...]) -> dict:
    """The fields of a RankFileFacts (or Pretrained, with ``allowed`` file keys) of one entry."""
    unknown = set(entry) - COMMENT_KEYS - set(_FACT_KEYS) - set(allowed)
    if unknown:
        raise ValueError(f"{name}: unknown keys {sorted(unknown)}")
    fields: dict[str, Any] = {"name": name, "pattern": by_name[entry["pattern"]],
                              "special_tokens": token_table(entry["special_tokens"])}
    if "added_tokens" in entry:
        fields["added_tokens"] = token_table(entry["added_tokens"])
    fields.update((key, entry[key]) for key in ("n_vocab", "normalizer", "eos_token") if key in entry)
    return fields


def vocabularies(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Registered name → the fields of its ``Pretrained`` record (the facts, file, url and sha256)."""
    by_name = patterns(data)
    entries = data["vocabularies"]
    table = {}
    for name, entry in entries.items():
        fields = _facts(name, entry, by_name, allowed=(*_FILE_KEYS, "rank_file_of"))
        fields.update(_rank_file(entries, name))
        table[name] = fields
    return table


def _rank_file(entries: Mapping[str, Any], name: str) -> dict[str, str]:
    """The file, url and sha256 of the registered vocabulary ``name``: its own, or those of the entry
    its ``rank_file_of`` names."""
    entry = entries[name]
    owner = entries[entry["rank_file_of"]] if "rank_file_of" in entry else entry
    return {key: owner[key] for key in _FILE_KEYS}


def sentencepiece_models(data: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Registered SentencePiece name → the fields of its ``PretrainedModel`` record."""
    return {name: {"name": name, **{key: entry[key] for key in _FILE_KEYS}}
            for name, entry in data["sentencepiece_models"].items()}


def rank_files(data: Mapping[str, Any]) -> dict[str, str | dict[str, Any]]:
    """sha256 of a rank file's uncompressed bytes → the registered name whose file it is, or the
    fields of the ``RankFileFacts`` its tokenizer defines in code."""
    recognized = data["rank_files_by_content"]
    table: dict[str, str | dict[str, Any]] = {
        _rank_file(data["vocabularies"], name)["sha256"]: name for name in recognized["registered"]
    }
    by_name = patterns(data)
    for sha256, entry in recognized["others"].items():
        table[sha256] = _facts(entry["name"], entry, by_name, allowed=("name",))
    return table
