"""The claims of ``mrgym reproduce``: the registry here, the experiments in this package's
modules (``effects``, then one or more per paper), one entry per number a paper reports.

A :class:`Claim` names its paper, figure or table, the paper's number (as the paper states
it) and an experiment; running the experiment over seeds gives a :class:`Result`: our
number (mean ± 95 % confidence interval where it is a mean over seeds), a verdict and the
reason for it.  Verdicts are honest: ``reproduced`` when our number meets the stated
criterion, ``same direction`` when the effect has the paper's sign/ordering but not its
magnitude, ``not reproduced`` otherwise — with the measured numbers and the reason.
Experiments use only the public simulator API (scenarios, ``run_sim``, schedulers), so a
model change shows up here without touching this package.

This module imports no claim module, so that a claim module importing the registry
cannot recurse; :func:`mrgym.reproduce.report.load_claims` imports them all.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VERDICTS = ("reproduced", "same direction", "not reproduced")


@dataclass(frozen=True)
class Result:
    ours: str  # our number(s), formatted for the table (e.g. "1.77, 2.71, ... x")
    verdict: str  # one of VERDICTS
    why: str  # the criterion applied and, when not reproduced, the reason found
    plot: Path | None = None  # the experiment's figure, if it wrote one
    data: dict = field(default_factory=dict)  # raw numbers (written to results.json)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


@dataclass(frozen=True)
class Claim:
    paper: str  # ila | pna | lsap | hybridmr | lee
    key: str  # unique id, e.g. "ila-fig2"
    where: str  # "Fig. 2", "Table 1", "§4.4.2"
    what: str  # the effect, in a few words
    paper_value: str  # the paper's number, as stated
    run: Callable[..., Result]  # (seeds, output folder[, quick=]) -> Result
    default_seeds: int = 3  # seeds when the user does not say
    # the values behind the number, each with its source (mrgym.reproduce.setups): a tuple
    # of Settings or a callable returning one (built when a report is written)
    setup: Any = None

    @property
    def has_quick(self) -> bool:
        """Whether the experiment has smaller sizes: a ``quick`` keyword of ``run``."""
        return "quick" in inspect.signature(self.run).parameters

    def settings(self) -> tuple:
        """The claim's setup (:func:`mrgym.reproduce.setups.resolve`)."""
        from mrgym.reproduce.setups import resolve

        return resolve(self.setup)

    def execute(self, seeds: list[int], out: Path, quick: bool = False) -> Result:
        """Run the experiment; ``quick`` asks for its smaller sizes where it has them (a
        smoke run: the test suite, ``--quick``), the full ones otherwise."""
        if quick and self.has_quick:
            return self.run(seeds, out, quick=True)
        return self.run(seeds, out)


CLAIMS: list[Claim] = []


def claim(**kw) -> Callable:
    """Register an experiment function as a claim: ``@claim(paper=..., key=..., ...)``."""

    def deco(fn: Callable[..., Result]) -> Callable:
        c = Claim(run=fn, **kw)
        if any(x.key == c.key for x in CLAIMS):
            raise ValueError(f"claim {c.key!r} registered twice")
        CLAIMS.append(c)
        return fn

    return deco


def finish(
    fig: Any,
    ax: Any,
    out: Path,
    key: str,
    title: str | None,
    caption: str,
    *,
    ours: str,
    verdict: str,
    why: str,
    data: dict | None = None,
    legend: bool = True,
) -> Result:
    """The end the claims drawn on one axes share: title the axes (``title``), add the
    legend (``legend``), write the figure as ``key``'s plot with ``caption`` under it
    (:func:`mrgym.reproduce.stats.save`), and return the :class:`Result` with that plot."""
    from mrgym.reproduce.stats import plot_file, save

    if title is not None:
        ax.set_title(title, fontsize=10)
    if legend:
        ax.legend(fontsize=8, frameon=False)
    plot = save(fig, plot_file(out, key), caption)
    return Result(ours=ours, verdict=verdict, why=why, plot=plot, data=data or {})
