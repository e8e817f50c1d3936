"""Pick a training run's model for a benchmark track on the validation seeds.

    python -m agents.analysis.pick_track --track fairness RUN [RUN ...]

A run's in-training evaluation picks ``best_model.zip`` by mean JCT; a track ranks by its
own metric (:mod:`mrgym.benchmark.tracks`), so its pick is made again here.  For each run
folder, every checkpoint (``checkpoints/*.zip``) and the final ``model.zip`` play the
validation seeds of the run's own evaluation (``eval.seeds``, the first of the split)
through the benchmark's runner, one sampled episode per seed as the training's evaluation
plays them, cut at its ``eval.max_steps``.  ``--seeds N`` plays the first N validation
seeds instead (up to the whole split) and ``--samples K`` K sampled episodes of each, as
the test benchmark plays them: a pick on more episodes is less at the mercy of one
unlucky sample.  The candidate with the lowest mean of the track's metric, among those whose
episodes all ran whole, is copied to ``RUN/best_TRACK.zip``; every candidate's value is in
``RUN/pick_TRACK.json``.  The test seeds are never played.

``--top K`` picks in two stages, for runs with many checkpoints: every candidate first plays
the run's own evaluation seeds once each (the default pick), and only the K best of them
play ``--seeds`` x ``--samples``; the pick is the best of the second stage, and the first
stage's values are kept in the json's ``first``::

    python -m agents.analysis.pick_track --track jct --top 4 --seeds 20 --samples 3 RUN
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import zipfile
from pathlib import Path

from agents.train import read_saved_config, saved_steps


def _weights(z: Path) -> bytes:
    """An SB3 .zip's policy weights (the optimizer's state aside)."""
    with zipfile.ZipFile(z) as f:
        return f.read("policy.pth")


def candidates(run: Path) -> dict[str, Path]:
    """The run's models a pick chooses from, by name (``@STEPS``), in step order.  The final
    ``model.zip`` is left out where it repeats the last checkpoint: the same steps, or the
    same weights (a run that stops short of its next update saves them again)."""
    zips = sorted((run / "checkpoints").glob("*.zip"), key=saved_steps)
    out: dict[str, Path] = {}
    for z in zips:
        out.setdefault(f"{run.name}@{saved_steps(z)}", z)
    final = run / "model.zip"
    if final.exists():
        last = next(reversed(out.values()), None)
        if last is None or _weights(last) != _weights(final):
            out.setdefault(f"{run.name}@{saved_steps(final)}", final)
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


def _play(
    run: Path, cands: dict[str, Path], metric: str, seeds: list[int], samples: int, workers: int
) -> tuple[dict[str, float | None], int, dict[str, list]]:
    """Each candidate's mean ``metric`` over ``seeds`` x ``samples`` episodes (None where an
    episode was cut), the episodes a seed that were played (argmax: one), and each
    candidate's per-seed values, in the order of ``seeds`` (None as for its mean), for a
    paired comparison with a baseline's."""
    from agents.model_policy import ModelSpec
    from agents.train import ModelFactory
    from mrgym.benchmark.run import Entrant, run_benchmark
    from mrgym.benchmark.stats import complete, mean_of
    from mrgym.config import load_scenario

    entrants = []
    for name, path in cands.items():
        f = ModelFactory(path, name=name)
        cap = f.policy.eval_max_steps  # the run's own evaluation cap (eval.max_steps)
        spec = ModelSpec(str(path.resolve()), name, cap)
        stochastic = f.policy.decode == "sample"  # as `mrgym benchmark --models` reads it
        entrants.append(Entrant(name, spec, "model", stochastic, "", str(path)))
    scenario = load_scenario(read_saved_config(run / "config.yaml").env.scenario)
    results = run_benchmark(
        entrants, scenario, seeds, samples, progress=True, sweep=(workers, "process", None)
    )
    values = {r.name: mean_of(r.per_seed.get(metric, [])) if complete(r) else None for r in results}
    per_seed = {r.name: list(r.per_seed.get(metric, [])) if complete(r) else None for r in results}
    return values, max(r.samples for r in results), per_seed


def _ranked(run: Path, values: dict[str, float | None]) -> list[str]:
    """The candidates whose episodes all ran whole, best first (lowest mean, then name)."""
    ok = sorted((v, k) for k, v in values.items() if v is not None)
    if not ok:
        raise ValueError(f"{run}: no candidate ran every validation episode whole")
    return [k for _, k in ok]


def pick(
    run: Path,
    track: str,
    workers: int = 1,
    n_seeds: int | None = None,
    samples: int = 1,
    top: int | None = None,
) -> dict:
    """Play ``run``'s candidates on the validation seeds (the first ``n_seeds``; None: as
    many as the run's own evaluation played), ``samples`` episodes of each, and copy the best
    for ``track`` to ``RUN/best_TRACK.zip``; returns what ``RUN/pick_TRACK.json`` holds.
    With ``top``, only the ``top`` best on the run's own evaluation seeds (one episode
    each) play the second stage."""
    from mrgym.benchmark.protocol import split_seeds
    from mrgym.benchmark.tracks import get_track

    metric = get_track(track).metric
    valid = list(split_seeds("validation"))
    # the run's own evaluation seeds: the default pick's, and a two-stage pick's first stage
    own = validation_limit(run) if n_seeds is None or top is not None else 0
    if n_seeds is None:
        n_seeds = own
    if not 1 <= n_seeds <= len(valid):
        raise ValueError(f"seeds: expected 1 to {len(valid)} validation seeds, got {n_seeds}")
    if samples < 1:
        raise ValueError(f"samples: expected at least 1 episode per seed, got {samples}")
    if top is not None and top < 1:
        raise ValueError(f"top: expected at least 1 candidate for the second stage, got {top}")
    if top is not None and n_seeds <= own and samples == 1:
        raise ValueError(
            f"top: the second stage would replay the first ({own} seeds, one episode each); "
            "give more --seeds or --samples"
        )
    cands = candidates(run)
    first = None
    if top is not None:
        values, played, per_seed = _play(run, cands, metric, valid[:own], 1, workers)
        first = {"seeds": valid[:own], "samples": played, "values": values, "per_seed": per_seed}
        cands = {k: cands[k] for k in _ranked(run, values)[:top]}
    values, played, per_seed = _play(run, cands, metric, valid[:n_seeds], samples, workers)
    best = _ranked(run, values)[0]
    shutil.copyfile(cands[best], run / f"best_{track}.zip")
    doc = {
        "track": track,
        "metric": metric,
        "seeds": valid[:n_seeds],
        "samples": played,  # episodes a seed (argmax: one)
        "best": best,
        "values": values,
        "per_seed": per_seed,  # in the order of "seeds"
    }
    if first is not None:
        doc["first"] = first
    (run / f"pick_{track}.json").write_text(json.dumps(doc, indent=1) + "\n")
    return doc


def main(argv: list[str] | None = None) -> int:
    from mrgym.benchmark.tracks import TRACKS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--track", required=True, choices=list(TRACKS))
    ap.add_argument("--workers", type=int, default=1, help="benchmark workers (default 1)")
    ap.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="the first N validation seeds (default: as many as the run's eval.seeds)",
    )
    ap.add_argument("--samples", type=int, default=1, help="sampled episodes per seed (default 1)")
    ap.add_argument(
        "--top",
        type=int,
        default=None,
        help="two stages: only the K best on the run's own evaluation seeds play the second",
    )
    ap.add_argument("runs", nargs="+", type=Path, help="training run folders")
    args = ap.parse_args(argv)
    for run in args.runs:
        doc = pick(run, args.track, args.workers, args.seeds, args.samples, args.top)
        if "first" in doc:
            kept = ", ".join(f"{k} {doc['first']['values'][k]:.4g}" for k in doc["values"])
            print(f"{run}: first stage kept {kept}")
        print(f"{run}: {doc['best']} ({doc['metric']} {doc['values'][doc['best']]:.4g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
