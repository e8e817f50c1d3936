""" "Did you mean ...?" for the one-line errors about an unknown name (a scheduler, a
scenario, a scenario key): the closest known name by :func:`difflib.get_close_matches`,
put right after the unknown name so that it survives the CLI's cut of a long line."""

from __future__ import annotations

from collections.abc import Iterable
from difflib import get_close_matches


def closest(given: object, known: Iterable[str]) -> str | None:
    """The known name closest to ``given`` (difflib's similarity ratio of at least 0.6),
    or None when none is that close."""
    close = get_close_matches(str(given), list(known), n=1, cutoff=0.6)
    return close[0] if close else None


def did_you_mean(given: object, known: Iterable[str]) -> str:
    """``" (did you mean 'fifo'?)"`` for the closest of ``known``, else ``""``."""
    name = closest(given, known)
    return "" if name is None else f" (did you mean {name!r}?)"
