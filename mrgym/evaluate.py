"""One harness for every policy: policies x scenarios x seeds -> a tidy table, plots.

``evaluate(["fifo", "delay"], ["ila72"], range(5))`` returns one row (a flat dict) per
policy x scenario x seed with every metric of :func:`mrgym.metrics.episode_metrics`.
Baselines run through ``run_sim`` (the fast path; identical metrics to the Gymnasium loop
for the policies the action space expresses, see docs/baselines.md); a policy given as a
callable ``make_policy(env) -> object with predict(obs, info)`` runs through
``run_episode``.

One run's row (:func:`run_row`, :func:`flatten`) is made in :mod:`mrgym.rows`, the grid
runs through :mod:`mrgym.sweep`, the numbers over seeds (:func:`summarize`,
:func:`markdown_table`, :func:`write_csv`) are in :mod:`mrgym.summary` and the figures
(:func:`plot`) in :mod:`mrgym.plots`; all are importable from here as well.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

from mrgym.plots import (  # noqa: F401 - re-exported
    DPI,
    LINESTYLES,
    LOCALITY_COLORS,
    plot,
    policy_colors,
    wrap_label,
)
from mrgym.rows import flatten, run_row  # noqa: F401 - re-exported
from mrgym.runner import Progress, progress_mode
from mrgym.summary import (  # noqa: F401 - re-exported
    SPREADS,
    SUMMARY,
    format_seeds,
    job_jcts,
    markdown_table,
    spread_note,
    summarize,
    write_csv,
)
from mrgym.sweep import Task, pace, run_grid


class EvaluationInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`evaluate`.  Still a ``KeyboardInterrupt`` (a caller that does
    not know it stops as before), carrying the rows of the runs that finished so that
    minutes of finished work are not thrown away."""

    def __init__(self, rows: list[dict[str, Any]], total: int):
        super().__init__(f"interrupted after {len(rows)} of {total} runs")
        self.rows = rows
        self.total = total


def evaluate(
    policies: Iterable,
    scenarios: Iterable,
    seeds: Iterable[int],
    progress: Progress = False,
    env_kwargs: dict | None = None,
    keep_logs: bool = False,
    workers: int = 1,
    backend: str = "process",
    address: str | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every policy on every scenario and seed; one flat row per run.

    ``progress``: ``True`` shows a bar on a terminal (elapsed time and ETA) and one
    stderr line per finished run otherwise (``[3/14] fair ila72 seed 2: 1.2 s (4 s
    elapsed, ~15 s left)``); ``"bar"``/``"lines"`` force one.
    ``workers``/``backend``/``address``: run the grid in parallel (:mod:`mrgym.sweep`: a
    ``spawn`` process pool, or Ray); the rows come back in the serial order whatever order
    the runs finish in, so the table is the same (``wall_s`` aside).  ``on_row(row)`` is
    called on each row as it arrives (finish order), e.g. to stream it to a file.
    Ctrl-C raises :class:`EvaluationInterrupted` with the finished rows (grid order)."""
    policies, scenarios, seeds = list(policies), list(scenarios), list(seeds)
    runs = [(p, s, seed) for s in scenarios for p in policies for seed in seeds]
    tasks = [
        Task(i, p, s, seed, env_kwargs or {}, keep_logs) for i, (p, s, seed) in enumerate(runs)
    ]
    serial = backend == "process" and workers == 1
    mode = progress_mode(progress)
    bar = None
    if mode == "bar":
        from tqdm import tqdm

        bar = tqdm(total=len(runs), unit="run", desc="evaluate")
    got: dict[int, dict[str, Any]] = {}
    results = run_grid(tasks, workers, backend, address)
    try:
        start = t0 = time.perf_counter()
        for n, (i, row) in enumerate(results, 1):
            got[i] = row
            if on_row is not None:
                on_row(row)
            name, sc_name, seed = row["policy"], row["scenario"], row["seed"]
            if bar is not None:
                bar.set_postfix_str(f"{name} {sc_name} seed {seed}")
                bar.update(1)
            elif mode == "lines":
                # serial: the time since the last run ended (the run and its row); in
                # parallel the runs overlap, so the run's own wall time
                now = time.perf_counter()
                took = now - t0 if serial else row["wall_s"]
                print(
                    f"[{n}/{len(runs)}] {name} {sc_name} seed {seed}: {took:.1f} s "
                    f"({pace(n, len(runs), now - start)})",
                    file=sys.stderr,
                    flush=True,
                )
            t0 = time.perf_counter()
    except KeyboardInterrupt:
        raise EvaluationInterrupted([got[i] for i in sorted(got)], len(runs)) from None
    finally:
        results.close()  # a parallel run: cancel what has not started
        if bar is not None:
            bar.close()
    return [got[i] for i in sorted(got)]
