r"""SentencePiece's precompiled character maps run as ``sentencepiece`` and as HF ``tokenizers``
run them (:func:`~wordsplit.formats.charsmap.read_charsmap` reads a map into its rules; a
malformed map is a :class:`VocabFormatError` then).

The two tools run a map differently:

* ``sentencepiece`` (:func:`spm_chunks`): from each place, the *longest* key there is replaced
  by its output; where none is, the character stays (``NormalizePrefix``);
* HF's ``Precompiled`` (:func:`hf_changes`): the text is cut into extended grapheme clusters
  (the crate ``unicode-segmentation``; here :func:`_graphemes`, UAX #29's rules); a cluster of more
  than one character and fewer than 6 UTF-8 bytes that starts with a key is replaced as a whole
  by the output of the *shortest* such key (HF's ``transform`` takes the first result of the
  prefix search, which may leave the rest of the cluster out); any other cluster is looked up a
  character at a time, each character that is a key replaced by its output. Each replacement is
  recorded as HF's ``replace`` records it (the new characters, the last ones inserted or the
  last one removing what is left over), which the offsets read
  (:func:`~wordsplit.offsets.apply_changes`).

>>> from wordsplit.formats.charsmap import CharsMap
>>> cmap = CharsMap({"\uff21": "A", "e\u0301": "\u00e9", "\u2460": "1"})
>>> hf_normalize(cmap, "\uff21e\u0301\u2460"), spm_normalize(cmap, "\uff21xe\u0301")
('Aé1', 'Axé')
"""

from __future__ import annotations

import base64
import functools
from typing import Callable, Iterator, Optional

from ..formats.charsmap import CharsMap, cached_charsmap

__all__ = ["charsmap_of", "hf_changes", "hf_normalize", "precompiled_normalizer", "spm_chunks", "spm_normalize"]

# HF looks a whole grapheme cluster up only when it has fewer UTF-8 bytes than this.
HF_GRAPHEME_BYTES = 6


def spm_chunks(cmap: CharsMap, text: str) -> Iterator[tuple[int, int, Optional[str]]]:
    """``sentencepiece``'s cut of ``text``: ``(start, end, output)`` for each place a key
    matched (its longest key), ``(start, end, None)`` for each stretch that stays."""
    done = 0
    if cmap.starts is None:
        if text:
            yield 0, len(text), None
        return
    for match in cmap.starts.finditer(text):
        at = match.start()
        if at < done:
            continue
        found = longest_rule(cmap, text, at)
        if found is not None:
            if at > done:
                yield done, at, None
            yield at, *found
            done = found[0]
    if done < len(text):
        yield done, len(text), None


def longest_rule(cmap: CharsMap, text: str, at: int) -> Optional[tuple[int, str]]:
    """``(end, output)`` of the map's longest key at ``text[at:]``, or None."""
    rules = cmap.rules
    for end in range(min(len(text), at + cmap.longest), at, -1):
        out = rules.get(text[at:end])
        if out is not None:
            return end, out
    return None


def spm_normalize(cmap: CharsMap, text: str) -> str:
    """The text the rules alone make of ``text`` in ``sentencepiece``."""
    return "".join(text[a:b] if out is None else out for a, b, out in spm_chunks(cmap, text))


def hf_changes(cmap: CharsMap, text: str) -> Optional[list[tuple[str, int]]]:
    """HF's ``Precompiled`` of ``text`` as ``(character, change)`` pairs, HF's transformations
    (see the module docstring), or None when no rule applies."""
    if cmap.starts is None or cmap.starts.search(text) is None:
        return None
    changes: list[tuple[str, int]] = []
    rules = cmap.rules
    modified = False
    for match in _graphemes().finditer(text):
        cluster = match.group()
        if len(cluster) > 1 and len(cluster.encode("utf-8", "surrogatepass")) < HF_GRAPHEME_BYTES:
            out = next((rules[cluster[:n]] for n in range(1, len(cluster) + 1) if cluster[:n] in rules), None)
            if out is not None:
                _replace(changes, len(cluster), out)
                modified = True
                continue
        for char in cluster:
            out = rules.get(char)
            if out is None:
                changes.append((char, 0))
            else:
                _replace(changes, 1, out)
                modified = True
    return changes if modified else None


def hf_normalize(cmap: CharsMap, text: str) -> str:
    """HF's ``Precompiled`` of ``text``."""
    changes = hf_changes(cmap, text)
    return text if changes is None else "".join(char for char, _ in changes)


@functools.cache
def _graphemes():
    """Extended grapheme clusters as UAX #29 (Unicode 15.1 and later) defines them, which the
    crate ``unicode-segmentation`` that HF uses follows: the rules written as a pattern of the
    ``regex`` module's Unicode properties. (That module's own ``\\X`` joins a linker and a
    consonant after any character, where rule GB9c asks for a consonant before them:
    ``"\\xa0\\u094d\\u0915"`` is two clusters, not one.)"""
    import regex

    def gcb(value: str) -> str:
        return rf"\p{{Grapheme_Cluster_Break={value}}}"

    controls = f"{gcb('Control')}{gcb('CR')}{gcb('LF')}"
    hangul = f"(?:{gcb('L')}*(?:{gcb('V')}+|{gcb('LV')}{gcb('V')}*|{gcb('LVT')}){gcb('T')}*|{gcb('L')}+|{gcb('T')}+)"
    flags = f"{gcb('Regional_Indicator')}{gcb('Regional_Indicator')}"
    pictographs = rf"\p{{Extended_Pictographic}}(?:{gcb('Extend')}*{gcb('ZWJ')}\p{{Extended_Pictographic}})*"
    joiners = r"[\p{InCB=Extend}\p{InCB=Linker}]"
    conjunct = rf"\p{{InCB=Consonant}}(?:{joiners}*\p{{InCB=Linker}}{joiners}*\p{{InCB=Consonant}})+"
    core = f"(?:{hangul}|{flags}|{pictographs}|{conjunct}|[^{controls}])"
    after = f"[{gcb('Extend')}{gcb('ZWJ')}{gcb('SpacingMark')}]"
    return regex.compile(rf"\r\n|[{controls}]|{gcb('Prepend')}*{core}{after}*", regex.DOTALL | regex.V1)


def _replace(changes: list[tuple[str, int]], old_length: int, new: str) -> None:
    """HF's ``replace`` (``normalizers/precompiled.rs``): ``new`` replaces ``old_length``
    characters; with more characters, the last extra ones are insertions (+1); with fewer, the
    last change so far (an earlier character's, when ``new`` is empty) removes the rest."""
    changes.extend((char, 0) for char in new)
    diff = len(new) - old_length
    if diff > 0:
        for i in range(len(changes) - diff, len(changes)):
            changes[i] = (changes[i][0], 1)
    elif diff < 0 and changes:
        char, change = changes[-1]
        changes[-1] = (char, change + diff)


def charsmap_of(charsmap: str) -> CharsMap:
    """The rules of a map given in base64 (a stage's ``charsmap``), read once per map.

    Raises:
        VocabFormatError: a malformed map.
    """
    return cached_charsmap(base64.b64decode(charsmap))


def precompiled_normalizer(charsmap: str) -> Callable[[str], str]:
    """The function that runs HF's ``Precompiled`` with the map ``charsmap`` (base64; empty:
    the identity)."""
    if not charsmap:
        return lambda text: text
    return functools.partial(hf_normalize, charsmap_of(charsmap))
