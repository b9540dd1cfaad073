"""The one place that suggests a name for a misspelt one (a command, a study, ...)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported: the command line's start-up stays lean
if TYPE_CHECKING:
    from typing import Iterable


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`, did you mean 'analyze'?` when one of `choices` is close to `word`, else ''."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1)
    return f", did you mean {close[0]!r}?" if close else ""
