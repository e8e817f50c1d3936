"""Run the benchmark grid: every policy on every seed of a split (K samples per seed for
a stochastic policy), in parallel through :func:`mrgym.sweep.run_grid`, each policy's
result handed on as soon as its last episode is in."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mrgym import registry
from mrgym.benchmark.protocol import METRIC_KEYS
from mrgym.benchmark.results import PolicyResult
from mrgym.benchmark.sampling import SampleResult, SampleTask, run_sample, sample_tasks
from mrgym.benchmark.stats import mean_of
from mrgym.runner import Progress, progress_mode
from mrgym.sweep import pace, run_grid


@dataclass(frozen=True)
class Entrant:
    """One policy of a run: a registered baseline (``policy`` is its name) or a saved
    model (``policy`` a picklable factory such as ``agents.model_policy.ModelSpec``)."""

    name: str
    policy: Any
    kind: str  # "baseline" or "model"
    stochastic: bool
    command: str  # a command line that reproduces its row alone
    source: str | None = None  # a model's path, as given


def is_stochastic(name: str) -> bool:
    """Whether the registered scheduler ``name`` draws random numbers: its class says so
    with ``stochastic = True``.  An unknown name fails here, before any run."""
    return bool(getattr(registry.make(name), "stochastic", False))


@dataclass
class _Pending:
    """The episodes of one policy that have come back so far."""

    entrant: Entrant
    tasks: list[SampleTask]
    got: dict[int, SampleResult]


def run_benchmark(
    entrants: Sequence[Entrant],
    scenario: Any,
    seeds: Sequence[int],
    samples: int,
    on_policy: Callable[[PolicyResult | None, Entrant, str | None], None] | None = None,
    progress: Progress = False,
    sweep: tuple[int, str, str | None] = (1, "process", None),
) -> list[PolicyResult]:
    """Run ``entrants`` on ``scenario`` over ``seeds``; one :class:`PolicyResult` each, in
    their order.  ``on_policy(result, entrant, error)`` is called when a policy's last
    episode is in (``result`` None and ``error`` set when one of its episodes failed), so
    that the caller can save it at once.  ``sweep``: ``(workers, backend, address)``.
    Ctrl-C raises ``KeyboardInterrupt``; what ``on_policy`` saved stays saved."""
    pending: list[_Pending] = []
    tasks: list[SampleTask] = []
    for i, e in enumerate(entrants):
        mine = sample_tasks(
            i, e.policy, scenario, seeds, samples if e.stochastic else None, len(tasks)
        )
        tasks += mine
        pending.append(_Pending(e, mine, {}))
    owner = {t.index: t.entrant for t in tasks}
    done: dict[int, PolicyResult] = {}
    bar = _Bar(len(tasks), progress)
    # Handed out sample-major within a policy (every seed's sample 0, then sample 1, ...):
    # workers that start together then play different seeds, so each seed's reference JCTs
    # (mrgym.reference, ~5-10 CPU-s a seed on ila72) are simulated once and read from the disk
    # cache after; seed-major, two workers would start the same seed's samples together and
    # both simulate them.  Results are placed by index, so the order changes no number.
    # The serial path runs models with one torch thread, as a pool worker does (sweep).
    order = sorted(tasks, key=lambda t: (t.entrant, t.sample))
    results = run_grid(order, *sweep, fn=run_sample)
    try:
        for res in results:
            p = pending[owner[res.index]]
            p.got[res.index] = res
            bar.update(p.entrant.name, tasks[res.index].seed, res.wall_s)
            if len(p.got) < len(p.tasks):
                continue
            result, error = _collect(p, list(seeds))
            if result is not None:
                done[owner[res.index]] = result
            if on_policy is not None:
                on_policy(result, p.entrant, error)
    finally:
        results.close()  # an error or Ctrl-C: cancel what has not started
        bar.close()
    return [done[i] for i in sorted(done)]


def _collect(p: _Pending, seeds: list[int]) -> tuple[PolicyResult | None, str | None]:
    """A policy's result from its episodes (grid order), or the first error among them."""
    runs = [p.got[t.index] for t in p.tasks]
    for t, r in zip(p.tasks, runs):
        if r.error is not None:
            return None, f"seed {t.seed} sample {t.sample}: {r.error}"
    k = len(runs) // len(seeds)
    # per seed, its K samples' values (the grid, not the run order, is seed-major)
    per_sample = {
        key: [[runs[i * k + j].values[key] for j in range(k)] for i in range(len(seeds))]
        for key in METRIC_KEYS
    }
    e = p.entrant
    return PolicyResult(
        name=e.name,
        kind=e.kind,
        stochastic=e.stochastic,
        samples=k,
        seeds=seeds,
        per_seed={key: [mean_of(v) for v in per_sample[key]] for key in METRIC_KEYS},
        command=e.command,
        per_sample=per_sample if e.stochastic else None,
        source=e.source,
        wall_s=sum(r.wall_s for r in runs),
    ), None


class _Bar:
    """Progress on stderr: a tqdm bar on a terminal, one line per episode otherwise."""

    def __init__(self, total: int, progress: Progress):
        self.mode = progress_mode(progress)
        self.total, self.n = total, 0
        self.t0 = time.perf_counter()
        self.bar = None
        if self.mode == "bar":
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="episode", desc="benchmark")

    def update(self, name: str, seed: int, wall_s: float) -> None:
        self.n += 1
        if self.bar is not None:
            self.bar.set_postfix_str(f"{name} seed {seed}")
            self.bar.update(1)
        elif self.mode == "lines":
            elapsed = time.perf_counter() - self.t0
            print(
                f"[{self.n}/{self.total}] {name} seed {seed}: {wall_s:.1f} s "
                f"({pace(self.n, self.total, elapsed)})",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
