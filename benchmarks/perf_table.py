"""The performance page's table: measure, then write it into ``docs/performance.md``.

    python benchmarks/perf_table.py             # measure and rewrite the table
    python benchmarks/perf_table.py --print     # measure and print it only
    python benchmarks/perf_table.py --quick     # fewer steps (a smoke run; noisier)

The table sits between two marker comments in ``docs/performance.md``; everything else on
that page is prose.  Rates are CPU time where the measurement allows it (other load on a
shared machine moves wall time far more than CPU time), best of the rounds.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import sys
import time
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "performance.md"
START, END = "<!-- perf-table:start -->", "<!-- perf-table:end -->"


def _sim_rows(rounds: int) -> list[tuple[str, str, str]]:
    """``run_sim`` under dl-sched, seed 0: tasks per CPU-second of the run (build excluded)."""
    from mrgym.bench import bench_sim

    rows = []
    for config in ("ila72", "ila2400"):
        best = max(
            (bench_sim(config, "dl-sched", 0) for _ in range(rounds)),
            key=lambda r: r["tasks_per_cpu_s"],
        )
        rows.append(
            (
                f"`run_sim` on `{config}` (dl-sched, seed 0)",
                f"{best['tasks_per_cpu_s']:,.0f} tasks per CPU-second",
                f"{best['tasks']:,} tasks in {best['cpu_s']:.2f} CPU-s",
            )
        )
    return rows


def _cpu_rate(env, steps: int, masked: bool, seed: int = 0) -> float:
    """Steps per CPU-second of random (legal, if ``masked``) actions, resets included."""
    import numpy as np

    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    c0 = time.process_time()
    for n in range(steps):
        if masked:
            a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        else:
            a = int(rng.integers(env.action_space.n))
        obs, r, term, trunc, info = env.step(a)
        if term or trunc:
            obs, info = env.reset(seed=seed + n + 1)
    return steps / (time.process_time() - c0)


def _env_rows(steps: int, rounds: int) -> list[tuple[str, str, str]]:
    """``MRCluster-v1`` on ila72, random legal actions, against raw CartPole-v1 (no
    wrappers), in CPU time: ``mrgym bench`` times wall-clock, which a busy machine skews."""
    import gymnasium as gym

    import mrgym  # noqa: F401  (registers MRCluster-v1)
    from mrgym.bench import SETTINGS

    envs = {
        k: gym.make("MRCluster-v1", config="ila72", **kw).unwrapped for k, kw in SETTINGS.items()
    }
    cart = gym.make("CartPole-v1").unwrapped
    best = dict.fromkeys([*envs, "cartpole"], 0.0)
    for r in range(rounds):  # interleaved, so a burst of load hits every entry alike
        for k, env in envs.items():
            best[k] = max(best[k], _cpu_rate(env, steps, masked=True, seed=r))
        best["cartpole"] = max(best["cartpole"], _cpu_rate(cart, 5 * steps, masked=False, seed=r))
    ratio = {k: best[k] / best["cartpole"] for k in envs}
    return [
        (
            "`MRCluster-v1` on `ila72`, default settings",
            f"{best['default']:,.0f} steps per CPU-second",
            f"{ratio['default']:.3f} x CartPole-v1 (every step launches a task)",
        ),
        (
            "`MRCluster-v1` on `ila72`, every decision a step",
            f"{best['every-decision']:,.0f} steps per CPU-second",
            f"{ratio['every-decision']:.3f} x CartPole-v1 (arrival order, speculation, "
            "declines legal)",
        ),
        ("CartPole-v1, raw", f"{best['cartpole']:,.0f} steps per CPU-second", "the reference"),
    ]


def _machine() -> str:
    cores = os.cpu_count() or 0
    return (
        f"Measured on {time.strftime('%Y-%m-%d', time.gmtime())} with "
        f"`python benchmarks/perf_table.py` on a shared {cores}-core {platform.machine()} "
        f"Linux machine, CPython {platform.python_version()} (best of the rounds)."
    )


def table(steps: int, rounds: int) -> str:
    """The rows and the line that says where they were measured."""
    rows = _env_rows(steps, rounds) + _sim_rows(rounds)
    lines = ["| what | rate | note |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines + ["", _machine()])


def write(text: str, page: Path = PAGE) -> None:
    """Replace what lies between the markers; the rest of the page is left as it is."""
    src = page.read_text(encoding="utf-8")
    pat = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)
    if not pat.search(src):
        raise ValueError(f"{page}: the markers {START} ... {END} are missing")
    page.write_text(pat.sub(lambda _: f"{START}\n{text}\n{END}", src), encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--print", action="store_true", help="print the table, write nothing")
    ap.add_argument("--quick", action="store_true", help="2 000 steps, 1 round")
    a = ap.parse_args(argv)
    steps, rounds = (2000, 1) if a.quick else (20000, 3)
    text = table(steps, rounds)
    if a.print:
        print(text)
    else:
        write(text)
        print(f"wrote the table into {PAGE}", file=sys.stderr)


if __name__ == "__main__":
    main()
