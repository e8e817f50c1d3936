"""Pick a training run's model for a benchmark track on the validation seeds.

    python -m agents.analysis.pick_track --track fairness RUN [RUN ...]

A run's in-training evaluation picks ``best_model.zip`` by mean JCT; a track ranks by its
own metric (:mod:`mrgym.benchmark.tracks`), so its pick is made again here.  For each run
folder, every checkpoint (``checkpoints/*.zip``) and the final ``model.zip`` play the
validation seeds of the run's own evaluation (``eval.seeds``, the first of the split)
through the benchmark's runner, one sampled episode per seed as the training's evaluation
plays them, cut at its ``eval.max_steps``.  The candidate with the lowest mean of the track's metric, among those whose
episodes all ran whole, is copied to ``RUN/best_TRACK.zip``; every candidate's value is in
``RUN/pick_TRACK.json``.  The test seeds are never played.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from agents.train import read_saved_config, saved_steps


def candidates(run: Path) -> dict[str, Path]:
    """The run's models a pick chooses from, by name (``@STEPS``), in step order."""
    zips = sorted((run / "checkpoints").glob("*.zip"), key=saved_steps)
    if (run / "model.zip").exists():
        zips.append(run / "model.zip")
    out: dict[str, Path] = {}
    for z in zips:
        out.setdefault(f"{run.name}@{saved_steps(z)}", z)  # model.zip may repeat the last
    if not out:
        raise ValueError(f"{run}: no checkpoints/*.zip nor model.zip to pick from")
    return out


def validation_limit(run: Path) -> int:
    """How many validation seeds the run's own evaluation played (its ``eval.seeds`` must
    be the first validation seeds, 2000 onwards, as every bundled recipe's are)."""
    from mrgym.benchmark.protocol import split_seeds

    seeds = list(read_saved_config(run / "config.yaml").eval.seeds)
    valid = list(split_seeds("validation"))
    if seeds != valid[: len(seeds)]:
        raise ValueError(
            f"{run}: eval.seeds {seeds} are not the first validation seeds "
            f"({valid[0]}-{valid[-1]}); pick_track plays a prefix of the validation split"
        )
    return len(seeds)


def pick(run: Path, track: str, workers: int = 1) -> dict:
    """Play ``run``'s candidates on the validation seeds and copy the best for ``track`` to
    ``RUN/best_TRACK.zip``; returns what ``RUN/pick_TRACK.json`` holds."""
    from agents.model_policy import ModelSpec
    from agents.train import ModelFactory
    from mrgym.benchmark.protocol import split_seeds
    from mrgym.benchmark.run import Entrant, run_benchmark
    from mrgym.benchmark.stats import complete, mean_of
    from mrgym.benchmark.tracks import get_track
    from mrgym.config import load_scenario

    metric = get_track(track).metric
    cands = candidates(run)
    seeds = list(split_seeds("validation"))[: validation_limit(run)]
    entrants = []
    for name, path in cands.items():
        f = ModelFactory(path, name=name)
        cap = f.policy.eval_max_steps  # the run's own evaluation cap (eval.max_steps)
        spec = ModelSpec(str(path.resolve()), name, cap)
        stochastic = f.policy.decode == "sample"  # as `mrgym benchmark --models` reads it
        entrants.append(Entrant(name, spec, "model", stochastic, "", str(path)))
    scenario = load_scenario(read_saved_config(run / "config.yaml").env.scenario)
    results = run_benchmark(
        entrants, scenario, seeds, 1, progress=True, sweep=(workers, "process", None)
    )
    values = {r.name: mean_of(r.per_seed.get(metric, [])) if complete(r) else None for r in results}
    ok = {k: v for k, v in values.items() if v is not None}
    if not ok:
        raise ValueError(f"{run}: no candidate ran every validation episode whole")
    best = min(ok, key=lambda k: (ok[k], k))  # lowest mean, then the name
    shutil.copyfile(cands[best], run / f"best_{track}.zip")
    doc = {"track": track, "metric": metric, "seeds": seeds, "best": best, "values": values}
    (run / f"pick_{track}.json").write_text(json.dumps(doc, indent=1) + "\n")
    return doc


def main(argv: list[str] | None = None) -> int:
    from mrgym.benchmark.tracks import TRACKS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--track", required=True, choices=list(TRACKS))
    ap.add_argument("--workers", type=int, default=1, help="benchmark workers (default 1)")
    ap.add_argument("runs", nargs="+", type=Path, help="training run folders")
    args = ap.parse_args(argv)
    for run in args.runs:
        doc = pick(run, args.track, args.workers)
        print(f"{run}: {doc['best']} ({doc['metric']} {doc['values'][doc['best']]:.4g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
