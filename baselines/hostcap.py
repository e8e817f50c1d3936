"""``hostcap``: a uniformly random legal launch, but never past a cap on the tasks that the
asking VM's host runs.

A simple policy in the agent's own action space (launch a job's task on the asking slot,
or decline it), added to test what the trained ``ila72`` agents learned.  They decline
most of the slots they are asked about (docs/learning.md), and one reading is that they
simply keep co-located VMs from interfering, which a fixed cap per host also does.  So the
cap is the simplest policy that waits for that reason, and it is a baseline the agents
must beat (the protocol compares them with the strongest baseline in their action space).
It is this project's policy, not a paper's: ILA's Algorithm 1 and HybridMR's I/O gate
decline slots by a model of interference; this declines by a count alone.

* On a slot of kind k (map or reduce) of VM v on host h: let S be the slots of kind k of
  all of h's VMs and R the tasks of kind k (attempts, speculative ones included) running
  on them.  If R >= max(1, floor(frac x S)), decline; else launch a task of k for a job
  drawn uniformly among those that can launch one on v (``random``).  A host that runs
  nothing never declines, so the cluster is never idle while work waits.
* ``frac``: None (the default) takes the value tuned for the scenario being run, alone
  (key ``"<scenario>"``) or, in a composition ``<gater>-gate+hostcap``, under that gater
  (key ``"<scenario>@<gater>"``), from ``baselines/data/hostcap_frac.json``; where none
  was tuned, 1 (no cap: ``random`` itself).  ``tuned_for`` names another scenario whose
  value to take (``agents.analysis.generalize`` runs SWIM windows on ila72's cluster with
  ila72's).  One fraction sets both caps, so on small hosts the grid's values give fewer
  distinct caps (2 map slots: 1 or 2).  :func:`tune_frac` picks it by mean JCT on the
  validation seeds 2000-2009, :data:`SAMPLES` policy seeds each, over :data:`FRAC_GRID`;
  ``python -m baselines.hostcap tune --scenario ila72 --gater hybridmr --write`` stores it
  (each sample's policy seed as ``mrgym benchmark`` draws it).
  The test seeds are never used.
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

from baselines.simple import VALIDATION_SEEDS, RandomScheduler, check_tuned_for
from mrgym import registry
from mrgym.benchmark.protocol import TEST_SEEDS, policy_seed
from mrgym.benchmark.sampling import with_policy_seed
from mrgym.runner import run_sim
from mrgym.seeds import parse_seeds
from mrgym.sim.scheduler import DECLINE, MAP, Decision, DecisionContext

#: where :func:`tune_frac`'s values are kept, per scenario (and gater)
FRAC_FILE = Path(__file__).resolve().parent / "data" / "hostcap_frac.json"
#: the fractions a tuning tries: on ila72's hosts (12 map and 6 reduce slots) caps of
#: 6, 7, 9, 10 and 12 maps and 3, 3, 4, 5 and 6 reduces
FRAC_GRID = (0.5, 0.625, 0.75, 0.875, 1.0)
#: policy seeds per validation seed in a tuning (the policy draws random numbers)
SAMPLES = 2


def host_cap(frac: float, slots: int) -> int:
    """The most tasks of one kind a host with ``slots`` slots of that kind may run."""
    return max(1, math.floor(frac * slots + 1e-9))


def check_frac(frac: Any, key: str = "hostcap.frac") -> float | None:
    """``frac`` as a float (None stays None); a ``ValueError`` naming ``key`` otherwise."""
    if frac is None:
        return None
    if isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0 < frac <= 1:
        raise ValueError(f"{key}: expected a number in (0, 1] or None, got {frac!r}")
    return float(frac)


class HostCapScheduler(RandomScheduler):
    """``random``, declining a slot whose host already runs its cap of that kind of task."""

    name = "hostcap"
    #: compose() names the gater, whose own tuned value this then looks up
    tuned_per_gater = True

    def __init__(
        self, frac: float | None = None, gater: str | None = None, tuned_for: str | None = None
    ):
        super().__init__()
        self.frac = check_frac(frac)
        self.gater = gater  # compose() names the gater: the tuned value may depend on it
        # whose tuned value a run takes (None: the running scenario's); a transfer run (a
        # SWIM window on ila72's cluster, agents/generalize.py) keeps the value of the
        # scenario the agents were trained on, as they keep what they learned there
        self.tuned_for = check_tuned_for("hostcap", tuned_for)
        self._frac = self.frac  # this run's value (None: looked up at the first slot)

    def reset(self, seed: int | None) -> None:
        super().reset(seed)
        self._frac = self.frac

    def gate(self, ctx: DecisionContext) -> Decision | None:
        """DECLINE at the host's cap, None below it.  In ``<gater>-gate+hostcap`` the
        composition's gate asks this after the gater's, so that around an agent
        (``env.hooks: hybridmr-gate+hostcap`` with ``hooks_gate``) the cap binds the
        agent as well: it then decides only the slots below the cap."""
        if self._frac is None:
            self._frac = tuned_frac(self.tuned_for or ctx.view.scenario.name, self.gater)
        if self._frac < 1.0:
            kind = ctx.slot_kind
            vms = ctx.vm.host.vms
            slots = sum(v.map_slots if kind == MAP else v.reduce_slots for v in vms)
            running = sum(1 for v in vms for a in v.running if a.task.kind == kind)
            if running >= host_cap(self._frac, slots):
                return DECLINE
        return None

    def decide(self, ctx: DecisionContext) -> Decision:
        d = self.gate(ctx)
        return d if d is not None else super().decide(ctx)

    def decide_past_gate(self, ctx: DecisionContext) -> Decision:
        # the cap was asked (gate): the order below it decides
        return super().decide(ctx)


# -- the tuned fraction -------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _frac_table() -> dict[str, float]:
    if not FRAC_FILE.exists():
        return {}
    return {k: float(v) for k, v in json.loads(FRAC_FILE.read_text())["frac"].items()}


def table_key(scenario: str, gater: str | None) -> str:
    return scenario if gater is None else f"{scenario}@{gater}"


def tuned_frac(scenario: str, gater: str | None = None) -> float:
    """The fraction tuned for ``scenario`` under ``gater`` (alone: None); 1, no cap, where
    none was.  A value tuned alone is not used under a gate, nor one tuned under a gate
    alone: a gate declines slots of its own, so the best cap differs."""
    return _frac_table().get(table_key(scenario, gater), 1.0)


def _policy(frac: float, gater: str | None):
    if gater is None:
        return HostCapScheduler(frac)
    return registry.make(f"{gater}-gate+hostcap", order_params={"frac": frac})


def _run_mean_jct(scenario: Any, frac: float, gater: str | None, seed: int, sample: int):
    """(mean JCT, every job completed) of one run: episode seed ``seed``, the policy's
    choices drawn from sample ``sample``'s policy seed, as ``mrgym benchmark`` draws them."""
    policy = with_policy_seed(_policy(frac, gater), policy_seed(seed, sample))
    m = run_sim(scenario, policy, seed).metrics
    return float(m["mean_jct_s"]), m["jobs_completed"] == m["jobs_submitted"]


def frac_sweep(
    scenario: str,
    gater: str | None = None,
    seeds: Iterable[int] = VALIDATION_SEEDS,
    grid: Sequence[float] = FRAC_GRID,
    samples: int = SAMPLES,
    processes: int = 1,
) -> dict[float, float]:
    """Mean JCT over ``seeds`` x ``samples`` for each fraction of ``grid`` (inf where some
    run left a job unfinished)."""
    seeds, grid = list(seeds), [check_frac(f) for f in grid]
    if set(seeds) & set(TEST_SEEDS):
        raise ValueError(
            f"seeds: the test seeds {TEST_SEEDS[0]}-{TEST_SEEDS[-1]} choose nothing; tune on "
            "the validation seeds (default 2000-2009)"
        )
    tasks = [(scenario, f, gater, s, k) for f in grid for s in seeds for k in range(samples)]
    if processes > 1:
        with ProcessPoolExecutor(processes) as pool:
            runs = list(pool.map(_run_mean_jct, *zip(*tasks)))
    else:
        runs = [_run_mean_jct(*t) for t in tasks]
    n = len(seeds) * samples
    out: dict[float, float] = {}
    for i, f in enumerate(grid):
        mine = runs[i * n : (i + 1) * n]
        out[f] = float(np.mean([j for j, _ in mine])) if all(ok for _, ok in mine) else math.inf
    return out


def best_frac(sweep: dict[float, float]) -> float:
    """The fraction with the lowest mean JCT in ``sweep``, the largest of equals (the least
    capping)."""
    return min(sorted(sweep, reverse=True), key=sweep.__getitem__)


def tune_frac(scenario: str, gater: str | None = None, **kw: Any) -> float:
    """The fraction of the grid with the lowest mean JCT on the validation seeds (the
    largest of equals: the least capping); never the test seeds."""
    return best_frac(frac_sweep(scenario, gater, **kw))


def write_frac(key: str, sweep: dict[float, float], seeds: Sequence[int], samples: int) -> None:
    """Store ``key``'s tuned fraction with the sweep behind it, keeping the other keys."""
    data = json.loads(FRAC_FILE.read_text()) if FRAC_FILE.exists() else {}
    frac, sweeps = data.get("frac", {}), data.get("sweeps", {})
    frac[key] = best_frac(sweep)
    sweeps[key] = {
        "seeds": list(seeds),
        "samples": samples,
        # mean JCT (s) per fraction; null: some run left a job unfinished
        "mean_jct_s": {f"{f:g}": None if math.isinf(j) else round(j, 3) for f, j in sweep.items()},
    }
    data.update(
        command="python -m baselines.hostcap tune --scenario S [--gater G] --write",
        frac=dict(sorted(frac.items())),
        sweeps=dict(sorted(sweeps.items())),
    )
    FRAC_FILE.write_text(json.dumps(data, indent=2) + "\n")
    _frac_table.cache_clear()


def main(argv: list[str] | None = None) -> int:
    """``python -m baselines.hostcap tune --scenario S [--gater G] [--write]``."""
    p = argparse.ArgumentParser(prog="python -m baselines.hostcap")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("tune", help="tune hostcap's fraction on the validation seeds")
    t.add_argument("--scenario", required=True)
    t.add_argument("--gater", default=None, choices=registry.GATERS)
    t.add_argument("--seeds", default=f"{VALIDATION_SEEDS[0]}-{VALIDATION_SEEDS[-1]}")
    t.add_argument("--grid", default=",".join(f"{f:g}" for f in FRAC_GRID))
    t.add_argument("--samples", type=int, default=SAMPLES)
    t.add_argument("--processes", type=int, default=1)
    t.add_argument("--write", action="store_true", help=f"store the value in {FRAC_FILE.name}")
    args = p.parse_args(argv)
    seeds = parse_seeds(args.seeds)
    grid = [float(f) for f in args.grid.split(",")]
    sweep = frac_sweep(args.scenario, args.gater, seeds, grid, args.samples, args.processes)
    key = table_key(args.scenario, args.gater)
    best = best_frac(sweep)
    shown = ", ".join(f"{f:g}: {j:.1f}" for f, j in sweep.items())
    print(f"{key}: frac = {best:g}  (mean JCT s by frac: {shown})", flush=True)
    if args.write:
        write_frac(key, sweep, seeds, args.samples)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
