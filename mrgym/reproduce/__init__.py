"""``mrgym reproduce``: every number the papers report that the simulator should show, its
experiment, and one report with a verdict per claim.

- :mod:`mrgym.reproduce.claims` — the registry (:class:`Claim`, :class:`Result`, ``@claim``,
  :func:`~mrgym.reproduce.claims.finish`) and, in its modules (``effects``, then one or
  more per paper), the experiments, registered when imported;
  :func:`mrgym.reproduce.report.load_claims` imports every one.
- :mod:`mrgym.reproduce.report` — runs claims over seeds and writes ``report.md``, the
  plots and ``results.json`` into one folder: a new ``runs/reproduce-YYYYmmdd-HHMMSS/``,
  or with ``--update`` the committed ``docs/reproduction/``.
- :mod:`mrgym.reproduce.probes` / :mod:`mrgym.reproduce.stats` — the small experiments and
  the statistics (mean ± 95 % t-interval) the claims share; :mod:`mrgym.reproduce.ila_runs`
  the ila72 runs ILA's claims share; :mod:`mrgym.reproduce.parallel` ``--workers``.

This package imports no claim module by itself, so that importing the registry from a
claim module cannot recurse.
"""

from mrgym.reproduce.claims import CLAIMS, VERDICTS, Claim, Result, claim

__all__ = ["CLAIMS", "VERDICTS", "Claim", "Result", "claim"]
