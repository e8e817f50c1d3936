"""Simulator speed: simulated tasks per wall-second through ``run_sim`` (docs/model.md §8).

    python benchmarks/bench_sim.py                       # ila2400 under dl-sched
    python benchmarks/bench_sim.py --scenario ila72 --scheduler fifo --repeat 3
    python benchmarks/bench_sim.py --profile 25          # + the top 25 functions by own time

Prints tasks/s (completed task attempts per wall-second and per CPU-second), SimPy
events/s, heartbeats and scheduler decisions, the fluid model's rate updates, the per-task
counters (events, rate updates, heartbeats per completed attempt) and, with ``--profile``,
the split of own time by part (fluid model, attempts, heartbeats, SimPy, ...).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

from mrgym.runner import build_simulation

# own time by part, for the profile split: (label, substring of the code's file path)
PARTS = (
    (
        "fluid model (execution, cpu, topology)",
        ("sim/execution.py", "sim/cpu.py", "sim/topology.py"),
    ),
    ("attempts + shuffle", ("sim/attempts.py",)),
    ("heartbeats", ("sim/heartbeats.py",)),
    ("tracker + choice + hdfs", ("sim/tracker.py", "sim/choice.py", "sim/hdfs.py")),
    ("scheduler (baselines)", ("baselines/",)),
    ("SimPy", ("simpy/",)),
)


def profile_split(stats: pstats.Stats) -> list[tuple[str, float]]:
    """Each part's share of the profiled own time (the rest is builtins and others)."""
    total = 0.0
    by = dict.fromkeys([p for p, _ in PARTS] + ["other"], 0.0)
    for (path, _line, _fn), row in stats.stats.items():  # type: ignore[attr-defined]
        tt = row[2]
        total += tt
        for label, keys in PARTS:
            if any(k in path for k in keys):
                by[label] += tt
                break
        else:
            by["other"] += tt
    return [(k, v / total if total else 0.0) for k, v in by.items()]


def run_once(scenario: str, scheduler: str, seed: int) -> dict:
    t0 = time.perf_counter()
    sim = build_simulation(scenario, scheduler, seed)
    t1 = time.perf_counter()
    c1 = time.process_time()
    sim.run()
    c2 = time.process_time()
    t2 = time.perf_counter()
    events = next(sim.env._eid)  # SimPy's running event id: events scheduled so far
    tasks = sum(1 for a in sim.attempts if a.end_s is not None)
    return {
        "build_s": t1 - t0,
        "run_s": t2 - t1,
        "cpu_s": c2 - c1,
        "tasks": tasks,
        "events": events,
        "heartbeats": sim.beats.n_heartbeats,
        "decisions": sim.beats.n_decisions,
        "rate_updates": sim.engine.n_rate_updates,
        "sim_time_s": sim.env.now,
    }


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--scenario", default="ila2400")
    p.add_argument("--scheduler", default="dl-sched")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument(
        "--profile", type=int, default=0, metavar="N", help="also print the top N functions"
    )
    a = p.parse_args()
    best = None
    for i in range(a.repeat):
        r = run_once(a.scenario, a.scheduler, a.seed)
        if best is None or r["run_s"] < best["run_s"]:
            best = r
        print(f"run {i}: {r['tasks']} tasks in {r['run_s']:.2f} s (+{r['build_s']:.2f} s build)")
    r = best
    wall = r["run_s"] + r["build_s"]
    print(f"\n{a.scenario} / {a.scheduler} / seed {a.seed} (best of {a.repeat})")
    print(f"  simulated time      {r['sim_time_s']:,.0f} s")
    print(
        f"  tasks per wall-s    {r['tasks'] / wall:,.0f}   ({r['tasks']} attempts, {wall:.2f} s incl. build)"
    )
    print(f"  events per wall-s   {r['events'] / r['run_s']:,.0f}   ({r['events']:,} SimPy events)")
    print(f"  heartbeats          {r['heartbeats']:,}   decisions {r['decisions']:,}")
    print(f"  tasks per CPU-s     {r['tasks'] / r['cpu_s']:,.0f}   (run only)")
    print(f"  rate updates        {r['rate_updates']:,}")
    n = max(r["tasks"], 1)
    print(
        f"  per task            {r['events'] / n:.1f} events, {r['rate_updates'] / n:.1f} rate "
        f"updates, {r['heartbeats'] / n:.2f} heartbeats"
    )
    if a.profile:
        prof = cProfile.Profile()
        sim = build_simulation(a.scenario, a.scheduler, a.seed)
        prof.enable()
        sim.run()
        prof.disable()
        out = io.StringIO()
        stats = pstats.Stats(prof, stream=out)
        stats.sort_stats("tottime").print_stats(a.profile)
        print(out.getvalue())
        print("profile split (own time):")
        for label, share in profile_split(stats):
            print(f"  {label:40s} {100 * share:5.1f} %")


if __name__ == "__main__":
    main()
