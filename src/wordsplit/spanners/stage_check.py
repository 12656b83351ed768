"""The check a spanner that reads a vocabulary's spanner stage makes: that the stage is of the
kind it runs, so that a spanner named explicitly for another kind of vocabulary is refused
with a typed error, not run on a stage it cannot read."""

from __future__ import annotations

from ..errors import UnsupportedTokenizerError
from ..spec import RegexSplit


def refuse_other_stage(name: str, stage: object, expected: type, what: str) -> None:
    """Raise :class:`~wordsplit.errors.UnsupportedTokenizerError` unless ``stage`` is an
    ``expected``: the spanner ``name`` runs ``what``.

    >>> from wordsplit.spec import SplitProgram
    >>> try:
    ...     refuse_other_stage("hf-split", "\\\\w+", SplitProgram, "a tokenizer.json's split program")
    ... except UnsupportedTokenizerError as error:
    ...     print(*str(error).split("; "), sep="\\n")
    the hf-split spanner runs a tokenizer.json's split program
    this vocabulary's spanner stage is a regex: use spanner='auto' (it picks 'regex')
    """
    if isinstance(stage, expected):
        return
    from . import spanner_for  # (the package imports the spanners, which import this)

    if isinstance(stage, str):
        kind, auto = "regex", spanner_for(RegexSplit(stage)) or "regex"
    else:
        kind, auto = getattr(stage, "kind", type(stage).__name__), spanner_for(stage)
    raise UnsupportedTokenizerError(
        f"the {name} spanner runs {what}; this vocabulary's spanner stage is a {kind}: "
        f"use spanner='auto' (it picks {auto!r})"
    )
