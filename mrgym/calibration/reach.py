"""Can any parameters of stage C reach ILA's own Fig. 8?  A Latin-hypercube sweep of stage
C's box (:data:`mrgym.calibration.fit.STAGES`' bounds, what the sources allow) under both
readings of ILA §5.1's "connected by a 1Gbps Ethernet": one 1 Gbit/s uplink out of each
rack (``ila72``'s) or a fabric that does not limit it (10 Gbit/s).

Each point is measured on ``ila72`` as the fit measures it (:mod:`mrgym.calibration.probes`),
on fixed seeds:

- Fig. 8's fractions under PureFair and under ILA, and whether each is within its claim's
  criterion (:data:`mrgym.calibration.targets.ILA_FIG8`, ``ILA_FIG8_ILA``);
- PureFair's mean JCT over ILA's;
- how much of ILA's own maps' slowdowns the server's state at launch explains within an
  application (``IlaScheduler.state_r2``, what IASM could know).

``python -m mrgym.calibration.reach --points 200 --out reach.jsonl`` runs it (32
minutes on 2 cores) and prints :func:`summary`; docs/calibration.md gives the result.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from scipy.stats import qmc

from mrgym.calibration import targets as T
from mrgym.calibration.fit import STAGES
from mrgym.calibration.probes import FIG8_FRACTIONS, map_slowdowns, overrides

#: the rack uplink under the two readings of §5.1, Mbit/s (alternating over the points)
UPLINKS = (1000, 10000)


def points(n: int, seed: int = 0) -> list[dict]:
    """``n`` Latin-hypercube points of stage C's box, each with one of :data:`UPLINKS`."""
    params = STAGES["C"].params
    u = qmc.LatinHypercube(d=len(params), seed=seed).random(n)
    out = []
    for i, row in enumerate(u):
        p = {q.name: float(q.lo + x * (q.hi - q.lo)) for q, x in zip(params, row)}
        p["cluster.rack_uplink_mbps"] = UPLINKS[i % len(UPLINKS)]
        out.append(p)
    return out


def measure(task: tuple[dict, tuple[int, ...], dict | None]) -> dict:
    """One point: ``(params, seeds, extra scenario overrides)`` -> its row (seed means)."""
    from mrgym import registry
    from mrgym.config import load_scenario
    from mrgym.runner import build_simulation

    params, seeds, extra = task
    sc = load_scenario("ila72", {**overrides(params), **(extra or {})})
    row: dict = {"params": params}
    for name in ("fair", "ila"):
        fr: dict[str, list[float]] = {k: [] for k in FIG8_FRACTIONS}
        jct, r2 = [], []
        for seed in seeds:
            sched = registry.make(name)
            sim = build_simulation(sc, sched, seed)
            sim.run()
            sd = map_slowdowns(sim)
            for k, test in FIG8_FRACTIONS.items():
                fr[k].append(float(np.mean(test(sd))))
            jct.append(
                np.mean([j.finish_s - j.arrived_s for j in sim.jobs if j.finish_s is not None])
            )
            if name == "ila":
                r2.append(sched.state_r2(sched.observations()))
        row[name] = {k: float(np.mean(v)) for k, v in fr.items()}
        row[f"{name}_jct_s"] = float(np.mean(jct))
    row["live_state_r2"] = float(np.nanmean(r2))
    row["fair_ok"] = within(row["fair"], T.ILA_FIG8)
    row["ila_ok"] = within(row["ila"], T.ILA_FIG8_ILA)
    return row


def within(fractions: dict[str, float], targets) -> bool:
    """Every target's fraction within its tolerance (keys end in the fraction's name)."""
    return all(abs(t.residual(fractions[t.key.rsplit("-", 1)[1]])) <= 1.0 for t in targets)


def summary(rows: list[dict]) -> dict:
    """How many points meet each distribution, and how far ILA's own gets at best."""
    ila = {k: [r["ila"][k] for r in rows] for k in ("le1.1", "lt1.5", "lt2.5")}
    ratio = [r["fair_jct_s"] / r["ila_jct_s"] for r in rows]
    return {
        "points": len(rows),
        "purefair_within": sum(r["fair_ok"] for r in rows),
        "ila_within": sum(r["ila_ok"] for r in rows),
        "both_within": sum(r["fair_ok"] and r["ila_ok"] for r in rows),
        "ila_max": {k: max(v) for k, v in ila.items()},
        "live_state_r2_max": max(r["live_state_r2"] for r in rows),
        "live_state_r2_median": float(np.median([r["live_state_r2"] for r in rows])),
        "purefair_over_ila_median": float(np.median(ratio)),
    }


def main(argv: list[str] | None = None) -> None:
    from tqdm import tqdm

    from mrgym.sweep import default_workers, run_grid

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=200, help="Latin-hypercube points")
    ap.add_argument("--seeds", type=int, default=2, help="seeds 0..N-1 per point")
    ap.add_argument("--workers", type=int, default=default_workers())
    ap.add_argument("--out", type=Path, help="append each point's row here (JSON lines)")
    args = ap.parse_args(argv)
    if args.points < 1 or args.seeds < 1:
        ap.error(f"--points {args.points} --seeds {args.seeds}: expected at least 1 each")
    seeds = tuple(range(args.seeds))
    tasks = [(p, seeds, None) for p in points(args.points)]
    rows = []
    with tqdm(total=len(tasks), desc="points") as bar:
        for row in run_grid(tasks, args.workers, fn=measure):
            rows.append(row)
            bar.update()
            if args.out:
                with args.out.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")
    print(json.dumps(summary(rows), indent=1))


if __name__ == "__main__":
    main()
