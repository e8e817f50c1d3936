"""Running one claim: the registry's loading and selection, and the :class:`Outcome` of a
run.  Below both :mod:`mrgym.reproduce.report` (which writes reports) and
:mod:`mrgym.reproduce.parallel` (which runs claim groups in workers), so neither imports
the other's caller."""

from __future__ import annotations

import importlib
import pkgutil
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mrgym.reproduce.claims import CLAIMS, Claim, Result

PAPERS = ("ila", "pna", "lsap", "hybridmr", "lee")
FAILED = "experiment failed: "


@dataclass(frozen=True)
class Outcome:
    """One claim's run: the claim, its result, the seeds used and how long it took."""

    claim: Claim
    result: Result
    seeds: list[int]
    wall_s: float
    failed: bool = False


def claim_modules() -> list[str]:
    """Names of the claim modules of :mod:`mrgym.reproduce.claims` (``effects`` first, then
    the papers' modules in name order; ``_``-prefixed modules hold no claims)."""
    import mrgym.reproduce.claims as pkg

    names = sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name[0] != "_")
    names.sort(key=lambda n: n != "effects")
    return [f"{pkg.__name__}.{n}" for n in names]


def load_claims() -> list[Claim]:
    """Import every claim module and return the registry (registration order).

    A claim module that fails to import is a bug: the error is raised, naming the module."""
    for name in claim_modules():
        try:
            importlib.import_module(name)
        except ImportError as e:
            raise ImportError(f"claim module {name}: {e}") from e
    return list(CLAIMS)


def pick(claims: Sequence[Claim], keys: Sequence[str]) -> list[Claim]:
    """The claims named in ``keys`` (``--claims``), in ``claims``' order."""
    known = {c.key for c in claims}
    bad = [k for k in keys if k not in known]
    if bad:
        raise ValueError(
            f"--claims {','.join(bad)}: no such claim; `mrgym reproduce --list` names them"
        )
    return [c for c in claims if c.key in set(keys)]


def select(claims: Iterable[Claim], paper: str = "all") -> list[Claim]:
    """The claims of ``paper`` (one of :data:`PAPERS`, or ``all``), in the papers' order
    of :data:`PAPERS`, then their modules' (:func:`claim_modules`), then registration
    order: the same order whichever module a program happened to import first."""
    if paper != "all" and paper not in PAPERS:
        raise ValueError(f"--paper {paper!r}: expected one of {', '.join(PAPERS)} or all")
    picked = [c for c in claims if paper == "all" or c.paper == paper]
    rank = {p: i for i, p in enumerate(PAPERS)}
    mods = {m: i for i, m in enumerate(claim_modules())}

    def key(c: Claim) -> tuple[int, int]:
        return rank.get(c.paper, len(PAPERS)), mods.get(c.run.__module__, len(mods))

    return sorted(picked, key=key)  # stable: registration order within a module


def _one_line(e: BaseException) -> str:
    text = " ".join((str(e) or "").split())
    text = f"{type(e).__name__}: {text}" if text else type(e).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def run_claim(c: Claim, seeds: list[int], out: Path, quick: bool = False) -> Outcome:
    """Run one claim with the report folder ``out`` (``quick``: :meth:`Claim.execute`); an
    exception becomes a ``not reproduced`` row (Ctrl-C still stops)."""
    t0 = time.perf_counter()
    try:
        result = c.execute(list(seeds), out, quick)
        if not isinstance(result, Result):
            raise TypeError(f"claim {c.key} returned {type(result).__name__}, not Result")
        failed = False
    except Exception as e:  # noqa: BLE001 - reported in the row, see the module docstring
        result = Result(ours="-", verdict="not reproduced", why=FAILED + _one_line(e))
        failed = True
    return Outcome(c, result, list(seeds), time.perf_counter() - t0, failed)
