"""TARA prediction speed (docs/model.md §8): one prediction of Sort 160 GB on the 80 VMs of
``tara80`` must take under 0.1 s (the thesis' C++ engine: 0.96 s, σ 0.019, §3.3.4.1).

    python benchmarks/bench_tara.py                  # median of 20 per placement
    python benchmarks/bench_tara.py -n 50 --batch 300

Times ``predict_jct(model, placement)`` (the scenario already read: the thesis times the
simulator, not the input gathering) for the four heuristic placements and random ones,
prints the median and max per prediction, the exact-stepping (``quantum=0``) time beside
it, and a batched prediction of ``--batch`` random candidates (the GA's way).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import numpy as np

from baselines.tara import placement
from baselines.tara_predict import model_for, predict_batch, predict_jct


def _time(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="tara80")
    ap.add_argument("-n", type=int, default=20, help="predictions per placement (median)")
    ap.add_argument("--batch", type=int, default=300, help="random candidates in one batch")
    a = ap.parse_args(argv)
    m = model_for(a.scenario)
    exact = dataclasses.replace(m, quantum=0.0)
    cases = {p: placement(a.scenario, p) for p in ("rr-r", "rr-s", "h-1", "h-2")}
    rng = np.random.default_rng(0)
    for k in range(3):
        cases[f"random{k}"] = [int(h) for h in rng.choice(m.pool_hosts, len(cases["rr-r"]), False)]
    all_t = []
    print(f"{'placement':10s} {'JCT (s)':>8s} {'median ms':>10s} {'max ms':>8s} {'exact ms':>9s}")
    for name, hosts in cases.items():
        ts = _time(lambda h=hosts: predict_jct(m, h), a.n)
        te = _time(lambda h=hosts: predict_jct(exact, h), max(3, a.n // 4))
        all_t += ts
        print(
            f"{name:10s} {predict_jct(m, hosts):8.0f} {1e3 * statistics.median(ts):10.1f} "
            f"{1e3 * max(ts):8.1f} {1e3 * statistics.median(te):9.1f}"
        )
    print(
        f"one prediction: median {1e3 * statistics.median(all_t):.1f} ms, "
        f"max {1e3 * max(all_t):.1f} ms (budget 100 ms; thesis C++ 960 ms)"
    )
    hosts = np.stack([rng.choice(m.pool_hosts, 80, False) for _ in range(a.batch)])
    t0 = time.perf_counter()
    predict_batch(m, hosts)
    dt = time.perf_counter() - t0
    print(f"batch of {a.batch} random candidates: {dt:.2f} s, {1e3 * dt / a.batch:.1f} ms each")


if __name__ == "__main__":
    main()
