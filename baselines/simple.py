"""Simple job orders that act in the agent's own action space, and their compositions with
a gating scheduler.

Every decision here is "launch a task of the slot's kind for job J" (``Decision(MAP, J)`` or
``Decision(REDUCE, J)``, no task index): the simulator then picks the task as it does for
the environment's action (``view.best_map``: the best locality first), so each policy is
a choice the environment's action space can make (given enough job slots: the environment
shows the first K = 8 jobs that can launch, in its own queue order).  Reduce slots use the
same order over the jobs with a ready pending reduce.  None of them speculates (Hadoop's
speculation off, as in the agent's recipe), and none declines a slot while some job can
launch a task of its kind on the asking VM.  Ties keep the order of ``ctx.jobs`` (arrival).

* ``random`` — a uniformly random job among those that can launch a task of the slot's
  kind on this VM.  Its numpy Generator is seeded by ``reset(seed)`` alone, so a seed
  gives the same run.  The environment's "random legal action" without decline.
* ``sjf`` — smallest job first: the fewest tasks in all (maps + reduces), known at
  submission from the job's splits and its configured reduces.
* ``srpt`` — shortest remaining processing first: the fewest remaining tasks (the job's
  tasks not finished: pending + running), as the environment's ``queue_order: remaining``.
  Remaining tasks, not remaining input MB: a master knows each split's size, but a map's
  work is not proportional to it across applications (ila72's KMeans and Bayes maps do a
  block's CPU work on 1 MB of input), and adding MB to reduces would need a conversion the
  master does not have.
* ``wfair`` — weighted fair sharing with a size exponent: Decima's "tuned weighted fair"
  heuristic (Mao et al., SIGCOMM 2019, §7), which gives each job a share of the
  executors proportional to (its work)^alpha.  Here a job's weight is
  ``job.weight x max(1, remaining tasks)^alpha`` and, as Hadoop's FairScheduler sorts its
  jobs, the job with the fewest running tasks of the slot's kind per unit weight (the one
  furthest below its share) goes first.  alpha = 0 is PureFair (``fair`` without
  speculation), alpha = 1 weights by remaining work, alpha < 0 favours the jobs nearly
  done (SRPT-like).
  Deviation: Decima weighs a job's total work; here its remaining work (what the master
  knows of it now: its finished tasks).  ``alpha``: None (the default) takes the value
  tuned for the scenario being run (its ``name``) from ``baselines/data/wfair_alpha.json``,
  else :data:`DEFAULT_ALPHA` = 1 (``tuned_for``: another scenario's value, as ``hostcap``'s);
  :func:`tune_alpha` picks it by mean JCT on the
  validation seeds 2000-2009 over the grid (-1, -0.5, 0, 0.5, 1, 2), and
  ``python -m baselines.simple tune-alpha --write`` re-tunes every scenario of
  :data:`TUNED_SCENARIOS` and rewrites the file (Decima, too, picks alpha by a sweep on
  its own workloads).

Compositions, ``<gater>-gate+<order>`` (:class:`GatedScheduler`, made by
``mrgym.registry.make``): the gater's ``reset``, ``place_job``, ``control`` and ``gate`` run
as in the gater alone, and a slot the gate leaves (``gate`` returns None) is decided by
the order.  Gaters (``mrgym.registry.GATERS``): ``hybridmr`` (phase I placement, phase II
control and its gate: SLA pressure, paused VMs, the I/O gate, Algorithm 3's relaunches)
and ``ila`` (Algorithm 1, IASM: no map where the interference model admits no job; where
it admits one, the order may pick another job, so ``ila-gate+fair`` is not ``iao``).
Orders (``mrgym.registry.ORDERS``): the four above, ``fair`` (PureFair, here without
Hadoop's speculation), so ``hybridmr-gate+fair`` is ``hybridmr`` itself, and ``hostcap``
(``baselines/hostcap.py``: ``random`` under a cap per host, whose ``gate`` the
composition asks after the gater's).
``make(name, gater_params={...}, order_params={...})`` passes parameters to either part.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from mrgym import registry
from mrgym.benchmark.protocol import VALIDATION_SEEDS as PROTOCOL_VALIDATION
from mrgym.runner import run_sim
from mrgym.seeds import parse_seeds
from mrgym.sim.scheduler import DECLINE, MAP, Decision, DecisionContext, Scheduler

#: wfair's exponent where no tuned value is stored for the scenario (alpha = 1: shares
#: proportional to the remaining work).
DEFAULT_ALPHA = 1.0
#: where :func:`tune_alpha`'s per-scenario values are kept (``tune-alpha --write``)
ALPHA_FILE = Path(__file__).resolve().parent / "data" / "wfair_alpha.json"
#: the first ten of the benchmark's validation seeds (mrgym.benchmark.protocol): never
#: the test seeds
VALIDATION_SEEDS = PROTOCOL_VALIDATION[:10]
ALPHA_GRID = (-1.0, -0.5, 0.0, 0.5, 1.0, 2.0)
#: the scenarios ``tune-alpha`` re-tunes by default: the bundled ones the comparisons use
TUNED_SCENARIOS = ("ila72", "hybrid48", "hybrid48-peak", "pna60", "lee-gpu")
#: parameters an order takes by default inside a composition: no Hadoop speculation
ORDER_DEFAULTS: dict[str, dict[str, Any]] = {"fair": {"speculation": False}}


def total_tasks(job) -> int:
    """Maps + reduces of the job (its size, known at submission)."""
    return len(job.maps) + len(job.reduces)


def remaining_tasks(job) -> int:
    """The job's tasks not yet finished (pending + running)."""
    return len(job.maps) - job.maps_done + len(job.reduces) - job.reduces_done


def first_launch(ctx: DecisionContext, jobs: Iterable) -> Decision:
    """A task of the slot's kind for the first of ``jobs`` that can launch one on the
    asking VM (the task left to the simulator, as the action does), else DECLINE."""
    kind = ctx.slot_kind
    for job in jobs:
        if ctx.can_launch(job, kind):
            return Decision(kind, job.id)
    return DECLINE


class OrderScheduler(Scheduler):
    """A fixed order over the active jobs; the slot goes to the first that can launch."""

    speculates = False

    def order(self, ctx: DecisionContext) -> list:  # pragma: no cover - abstract
        raise NotImplementedError

    def decide(self, ctx: DecisionContext) -> Decision:
        return first_launch(ctx, self.order(ctx))


class RandomScheduler(Scheduler):
    """A uniformly random legal launch (never a decline while a launch exists)."""

    name = "random"
    speculates = False
    #: draws random numbers (reset's seed): ``mrgym benchmark`` samples it K times per seed
    stochastic = True

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)  # replaced at reset: the run's seed decides

    def reset(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def decide(self, ctx: DecisionContext) -> Decision:
        kind = ctx.slot_kind
        legal = [job for job in ctx.jobs if ctx.can_launch(job, kind)]
        if not legal:
            return DECLINE
        return Decision(kind, legal[int(self.rng.integers(len(legal)))].id)


class SjfScheduler(OrderScheduler):
    """Smallest job (fewest tasks in all) first."""

    name = "sjf"

    def order(self, ctx: DecisionContext) -> list:
        return sorted(ctx.jobs, key=total_tasks)


class SrptScheduler(OrderScheduler):
    """Fewest remaining (pending + running) tasks first."""

    name = "srpt"

    def order(self, ctx: DecisionContext) -> list:
        return sorted(ctx.jobs, key=remaining_tasks)


def check_tuned_for(owner: str, tuned_for: Any) -> str | None:
    """A baseline's ``tuned_for``: None or the name of the scenario whose tuned value it
    takes in place of the running scenario's (agents/generalize.py)."""
    if tuned_for is not None and (not isinstance(tuned_for, str) or not tuned_for):
        raise ValueError(f"{owner}.tuned_for: expected a scenario name, got {tuned_for!r}")
    return tuned_for


class WeightedFairScheduler(OrderScheduler):
    """Decima's tuned weighted fair: weight x remaining^alpha, furthest below share first."""

    name = "wfair"

    def __init__(self, alpha: float | None = None, tuned_for: str | None = None):
        if alpha is not None and (isinstance(alpha, bool) or not math.isfinite(alpha)):
            raise ValueError(f"wfair.alpha: expected a finite number or None, got {alpha!r}")
        self.alpha = None if alpha is None else float(alpha)
        # whose tuned value a run takes (None: the running scenario's), as hostcap's
        self.tuned_for = check_tuned_for("wfair", tuned_for)
        self._alpha = self.alpha  # this run's value (None: looked up at the first slot)

    def reset(self, seed: int | None) -> None:
        self._alpha = self.alpha

    def order(self, ctx: DecisionContext) -> list:
        if self._alpha is None:
            self._alpha = tuned_alpha(self.tuned_for or ctx.view.scenario.name)
        a = self._alpha
        running = "running_maps" if ctx.slot_kind == MAP else "running_reduces"
        # running / share, share ∝ weight x work^alpha (the cluster's slot count and the
        # sum of the weights scale every job alike and drop out of the order); alpha = 0
        # gives fair_order's key exactly
        return sorted(
            ctx.jobs,
            key=lambda j: getattr(j, running) / (j.weight * max(1, remaining_tasks(j)) ** a),
        )


# -- compositions ---------------------------------------------------------------------------
class GatedScheduler(Scheduler):
    """``<gater>-gate+<order>``: the gater's hooks and gate, the order's choice elsewhere."""

    def __init__(self, gater: Scheduler, order: Scheduler, name: str | None = None):
        self.gater = gater
        self.order = order
        self.name = name or f"{gater.name}-gate+{order.name}"
        self.speculates = gater.speculates or order.speculates
        # random if either part draws random numbers (``random`` as the order)
        self.stochastic = getattr(gater, "stochastic", False) or getattr(order, "stochastic", False)
        self.control_period_s = gater.control_period_s
        self.n_gated = 0  # slots the gate declined
        self._gated = False  # the last decision was the gate's (pick_task asks the gater)

    def reset(self, seed: int | None) -> None:
        self.gater.reset(seed)
        self.order.reset(seed)
        self.n_gated = 0
        self._gated = False

    def place_job(self, job, view) -> frozenset[str] | None:
        return self.gater.place_job(job, view)

    def control(self, view) -> list:
        return self.gater.control(view)

    def gate(self, ctx: DecisionContext) -> Decision | None:
        d = self.gater.gate(ctx)
        if d is None:  # an order may gate too (hostcap's cap): around an agent it binds it
            d = self.order.gate(ctx)
        if d is not None and d.declines:
            self.n_gated += 1
        self._gated = d is not None
        return d

    def decide(self, ctx: DecisionContext) -> Decision:
        d = self.gate(ctx)
        return d if d is not None else self.order.decide(ctx)

    def decide_past_gate(self, ctx: DecisionContext) -> Decision:
        # gate() asked the gater and then the order's own gate (hostcap's cap)
        return self.order.decide_past_gate(ctx)

    def pick_task(self, ctx: DecisionContext, job, kind: str) -> int | None:
        # the order launches, unless the gate just launched (HybridMR's relaunch of a task)
        part = self.gater if self._gated else self.order
        return part.pick_task(ctx, job, kind)


def compose(
    gater: str,
    order: str,
    gater_params: dict[str, Any] | None = None,
    order_params: dict[str, Any] | None = None,
) -> GatedScheduler:
    """The composition ``<gater>-gate+<order>`` (``mrgym.registry.make`` parses the name
    and calls this); ``order_params`` go over :data:`ORDER_DEFAULTS`."""
    valid = f"gaters {list(registry.GATERS)}, orders {list(registry.ORDERS)}"
    if gater not in registry.GATERS:
        raise ValueError(f"unknown gater {gater!r}; expected one of {valid}")
    if order not in registry.ORDERS:
        raise ValueError(f"unknown order {order!r}; expected one of {valid}")
    g = registry.make(gater, **(gater_params or {}))
    o = registry.make(order, **{**ORDER_DEFAULTS.get(order, {}), **(order_params or {})})
    if getattr(o, "tuned_per_gater", False):  # hostcap: its tuned value depends on the gater
        o.gater = gater
    return GatedScheduler(g, o, f"{gater}-gate+{order}")


# -- wfair's exponent ------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _alpha_table() -> dict[str, float]:
    if not ALPHA_FILE.exists():
        return {}
    return {k: float(v) for k, v in json.loads(ALPHA_FILE.read_text())["alpha"].items()}


def tuned_alpha(scenario: str) -> float:
    """wfair's alpha for the scenario named ``scenario`` (:data:`DEFAULT_ALPHA` if none
    was tuned for it)."""
    return _alpha_table().get(scenario, DEFAULT_ALPHA)


def _run_mean_jct(scenario: Any, alpha: float, seed: int) -> tuple[float, bool]:
    """(mean JCT, every job completed) of one wfair run (a process pool's task)."""
    m = run_sim(scenario, WeightedFairScheduler(alpha), seed).metrics
    return float(m["mean_jct_s"]), m["jobs_completed"] == m["jobs_submitted"]


def alpha_sweep(
    scenario: Any,
    seeds: Iterable[int] = VALIDATION_SEEDS,
    grid: Sequence[float] = ALPHA_GRID,
    processes: int = 1,
) -> dict[float, float]:
    """Mean JCT over ``seeds`` for each alpha of ``grid`` (inf where some run left a job
    unfinished: its mean JCT would leave that job out).  ``scenario``: whatever
    ``run_sim`` takes (a bundled name, a YAML path, a dict, a Scenario)."""
    seeds, grid = list(seeds), [float(a) for a in grid]
    tasks = [(scenario, a, s) for a in grid for s in seeds]
    if processes > 1:
        with ProcessPoolExecutor(processes) as pool:
            runs = list(pool.map(_run_mean_jct, *zip(*tasks)))
    else:
        runs = [_run_mean_jct(*t) for t in tasks]
    out: dict[float, float] = {}
    for i, a in enumerate(grid):
        mine = runs[i * len(seeds) : (i + 1) * len(seeds)]
        out[a] = float(np.mean([j for j, _ in mine])) if all(ok for _, ok in mine) else math.inf
    return out


def tune_alpha(
    scenario: Any,
    seeds: Iterable[int] = VALIDATION_SEEDS,
    grid: Sequence[float] = ALPHA_GRID,
    processes: int = 1,
) -> float:
    """The alpha of ``grid`` with the lowest mean JCT over the validation ``seeds`` (the
    first of equals); never the test seeds."""
    sweep = alpha_sweep(scenario, seeds, grid, processes)
    return min(sweep, key=sweep.__getitem__)


def write_alpha(results: dict[str, dict[float, float]], seeds: Sequence[int]) -> None:
    """Store each scenario's tuned alpha, and the sweep and seeds behind it, in
    :data:`ALPHA_FILE`, keeping the other scenarios' entries."""
    data = json.loads(ALPHA_FILE.read_text()) if ALPHA_FILE.exists() else {}
    alpha, sweeps = data.get("alpha", {}), data.get("sweeps", {})
    for sc, sweep in results.items():
        alpha[sc] = min(sweep, key=sweep.__getitem__)
        sweeps[sc] = {
            "seeds": list(seeds),
            # mean JCT (s) per alpha; null: some run left a job unfinished
            "mean_jct_s": {
                f"{a:g}": None if math.isinf(j) else round(j, 3) for a, j in sweep.items()
            },
        }
    data.update(
        command="python -m baselines.simple tune-alpha --write",
        alpha=dict(sorted(alpha.items())),
        sweeps=dict(sorted(sweeps.items())),
    )
    ALPHA_FILE.write_text(json.dumps(data, indent=2) + "\n")
    _alpha_table.cache_clear()


def main(argv: list[str] | None = None) -> int:
    """``python -m baselines.simple tune-alpha [--scenarios a,b] [--processes N] [--write]``."""
    p = argparse.ArgumentParser(prog="python -m baselines.simple")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("tune-alpha", help="tune wfair's alpha on the validation seeds")
    t.add_argument("--scenarios", default=",".join(TUNED_SCENARIOS))
    t.add_argument("--seeds", default=f"{VALIDATION_SEEDS[0]}-{VALIDATION_SEEDS[-1]}")
    t.add_argument("--grid", default=",".join(str(a) for a in ALPHA_GRID))
    t.add_argument("--processes", type=int, default=1)
    t.add_argument("--write", action="store_true", help=f"store the values in {ALPHA_FILE.name}")
    args = p.parse_args(argv)
    seeds = parse_seeds(args.seeds)
    grid = [float(a) for a in args.grid.split(",")]
    results = {}
    for sc in (s.strip() for s in args.scenarios.split(",") if s.strip()):
        results[sc] = alpha_sweep(sc, seeds, grid, args.processes)
        sweep = ", ".join(f"{a:g}: {j:.1f}" for a, j in results[sc].items())
        best = min(results[sc], key=results[sc].__getitem__)
        print(f"{sc}: alpha = {best:g}  (mean JCT s by alpha: {sweep})", flush=True)
    if args.write:
        write_alpha(results, seeds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
