"""Instruction counts of the model's two cost probes, for model changes (issue "Fidelity II").

    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python benchmarks/bench_cost.py sim [--set key=value ...]
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python benchmarks/bench_cost.py env [--set key=value ...]
    python benchmarks/bench_cost.py --report [--set ...]   # runs both under callgrind itself

``sim`` is ``run_sim`` on ``ila2400`` under dl-sched (seed 0); ``env`` is 4 000 steps of
``MRCluster-v0`` on ``ila72`` with the default settings and a seeded random legal policy.
``--part build`` stops after the imports and the build, so that ``run - build`` is the
simulation's own count.  ``--set`` overrides an ``execution:`` key (a model parameter), so
each mechanism's cost is measured by turning it on alone.  Instruction counts, unlike
seconds, do not depend on the machine's load (docs/performance.md).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import numpy as np


def _overrides(sets: list[str]) -> dict:
    import yaml

    execution = {}
    for s in sets:
        key, sep, value = s.partition("=")
        if not sep:
            raise SystemExit(f"--set {s!r}: expected key=value")
        execution[key] = yaml.safe_load(value)
    return {"execution": execution} if execution else {}


def run_sim_probe(overrides: dict, build_only: bool) -> None:
    from mrgym.config import load_scenario
    from mrgym.runner import build_simulation

    sim = build_simulation(load_scenario("ila2400", overrides), "dl-sched", 0)
    if not build_only:
        sim.run()


def run_env_probe(overrides: dict, build_only: bool, steps: int = 4000) -> None:
    import gymnasium as gym

    import mrgym  # noqa: F401  (registers MRCluster-v0)

    env = gym.make("MRCluster-v0", config="ila72", overrides=overrides or None)
    rng = np.random.default_rng(0)
    _obs, info = env.reset(seed=0)
    if build_only:
        return
    for n in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        _obs, _r, term, trunc, info = env.step(int(legal[rng.integers(len(legal))]))
        if term or trunc:
            _obs, info = env.reset(seed=n + 1)


def callgrind(probe: str, part: str, sets: list[str]) -> int:
    """Instructions executed by one probe under callgrind."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    cmd += [sys.executable, __file__, probe, "--part", part]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr
    m = re.search(r"Collected : (\d+)", out)
    if m is None:
        raise SystemExit(f"no instruction count in callgrind's output:\n{out[-2000:]}")
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("probe", nargs="?", choices=("sim", "env"))
    ap.add_argument("--part", choices=("run", "build"), default="run")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--report", action="store_true", help="run both probes under callgrind")
    a = ap.parse_args()
    if a.report:
        for probe in ("sim", "env"):
            total = callgrind(probe, "run", a.set)
            base = callgrind(probe, "build", a.set)
            print(f"{probe}: {total - base:,} instructions (run {total:,} - build {base:,})")
        return
    if a.probe is None:
        ap.error("name a probe (sim or env) or give --report")
    overrides = _overrides(a.set)
    build_only = a.part == "build"
    if a.probe == "sim":
        run_sim_probe(overrides, build_only)
    else:
        run_env_probe(overrides, build_only)


if __name__ == "__main__":
    main()
