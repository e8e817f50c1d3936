"""``mrgym reproduce --workers N [--backend ray]``: the claims run in parallel, one claim
group per worker, and the report is the one a serial run writes.

Unit of work: a *claim group*, the claims of one module, run in registration order by one
worker process.  Claim modules cache their shared simulations per process (``@cache`` in
``pna``, ``lee_cloud``, ``lee_predict``, ``lee_progress``, ``lee_tara``; ILA's shared
ila72 runs in :mod:`mrgym.reproduce.ila_runs`), so the claims sharing a cache stay in
one worker and nothing is computed twice: ``ila`` and ``ila_sched`` both read
``ila_runs`` and form one group (:data:`SHARED_CACHE`).  The cached values are
deterministic functions of the seeds, so which process computes them does not change a
number.

Each group runs in a temporary folder of its worker and sends back its figures as bytes,
which this process writes into ``out``: a worker on another machine of a Ray
cluster has no access to ``out``.  The outcomes are put back in the serial (report)
order, so ``report.md`` and ``results.json`` differ from a serial run's only in
their wall-clock fields (the date, the seconds per claim and in all, and the ILA §5.6
claim's measured decision time).
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from mrgym.reproduce.claims import Claim, Result

# claim modules that share one module's per-process cache: one group
SHARED_CACHE = {
    "mrgym.reproduce.claims.ila": "mrgym.reproduce.ila_runs",
    "mrgym.reproduce.claims.ila_sched": "mrgym.reproduce.ila_runs",
}


def claim_groups(claims: list[Claim]) -> list[list[Claim]]:
    """The claims by cache family (module, :data:`SHARED_CACHE`), in first-seen order,
    each group in the claims' order."""
    groups: dict[str, list[Claim]] = {}
    for c in claims:
        mod = c.run.__module__
        groups.setdefault(SHARED_CACHE.get(mod, mod), []).append(c)
    return list(groups.values())


@dataclass(frozen=True)
class GroupTask:
    index: int
    keys: tuple[str, ...]
    seeds: tuple[tuple[int, ...], ...]  # per claim: from the report's grid, not the worker
    quick: bool = False  # the claims' smaller sizes (Claim.execute)


@dataclass(frozen=True)
class GroupResult:
    index: int
    done: tuple[tuple[str, Result, float, bool], ...]  # key, result, wall_s, failed
    files: dict[str, bytes]  # NAME -> bytes (the figures, beside the report)


def run_group(task: GroupTask) -> GroupResult:
    """Worker function (module level: ``spawn`` and Ray import it by name)."""
    from mrgym.reproduce.running import load_claims, run_claim

    claims = {c.key: c for c in load_claims()}
    done = []
    with tempfile.TemporaryDirectory(prefix="mrgym-claims-") as tmp:
        out = Path(tmp)
        for key, seeds in zip(task.keys, task.seeds, strict=True):
            o = run_claim(claims[key], list(seeds), out, task.quick)
            r = o.result
            if r.plot is not None:  # relative to the report folder, rebased by the caller
                r = replace(r, plot=Path(Path(r.plot).name))
            done.append((key, r, o.wall_s, o.failed))
        files = {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}
    return GroupResult(task.index, tuple(done), files)


def run_claims_parallel(
    claims: list[Claim],
    n_seeds: int | None,
    out: Path,
    workers: int,
    backend: str = "process",
    address: str | None = None,
    progress: bool | str = False,
    quick: bool = False,
) -> list:
    """Outcomes of ``claims`` in their order, computed by ``workers`` parallel groups."""
    from mrgym.reproduce.running import Outcome
    from mrgym.runner import progress_mode
    from mrgym.sweep import run_grid

    mode = progress_mode(progress)
    out.mkdir(parents=True, exist_ok=True)
    seeds = {c.key: tuple(range(n_seeds or c.default_seeds)) for c in claims}
    tasks = [
        GroupTask(i, tuple(c.key for c in g), tuple(seeds[c.key] for c in g), quick)
        for i, g in enumerate(claim_groups(claims))
    ]
    by_key = {c.key: c for c in claims}
    got: dict[str, Outcome] = {}
    bar = None
    if mode == "bar":
        from tqdm import tqdm

        bar = tqdm(total=len(claims), unit="claim", desc="reproduce")
    results = run_grid(tasks, workers, backend, address, fn=run_group)
    try:
        for res in results:
            for name, data in res.files.items():
                (out / name).write_bytes(data)
            for key, r, wall, failed in res.done:
                if r.plot is not None:
                    r = replace(r, plot=out / r.plot)
                got[key] = Outcome(by_key[key], r, list(seeds[key]), wall, failed)
                if bar is not None:
                    bar.set_postfix_str(key)
                    bar.update(1)
                elif mode == "lines":
                    print(
                        f"[{len(got)}/{len(claims)}] {key}: {r.verdict} ({wall:.1f} s)",
                        file=sys.stderr,
                        flush=True,
                    )
    finally:
        results.close()
        if bar is not None:
            bar.close()
    return [got[c.key] for c in claims]
