"""``mrgym reproduce``: every number the papers report that the simulator should show, its
experiment, and one report with a verdict per claim.

- :mod:`mrgym.reproduce.claims` — the registry (:class:`Claim`, :class:`Result`, ``@claim``).
- claim modules (``effects``, and one per paper as they land) register experiments when
  imported; :func:`mrgym.reproduce.report.load_claims` imports every one present.
- :mod:`mrgym.reproduce.report` — runs claims over seeds, writes ``REPRODUCTION.md``,
  the plots and ``results.json``.
- :mod:`mrgym.reproduce.probes` / :mod:`mrgym.reproduce.stats` — the small experiments and
  the statistics (mean ± 95 % t-interval) the claims share.

This package imports no claim module by itself, so that importing the registry from a
claim module cannot recurse.
"""

from mrgym.reproduce.claims import CLAIMS, VERDICTS, Claim, Result, claim

__all__ = ["CLAIMS", "VERDICTS", "Claim", "Result", "claim"]
