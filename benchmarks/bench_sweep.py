"""Sweep throughput vs worker count, and the Ray backend's overhead against the pool.

    python benchmarks/bench_sweep.py [--config ila72] [--schedulers fifo,fair,delay,late]
                                     [--seeds 0-3] [--workers 1,2]

Times ``mrgym.evaluate`` on one grid: serially in this process (``workers=1``), in the
``spawn`` process pool for each worker count, and on a local Ray with the largest worker
count -- once including ``ray.init`` (what ``mrgym compare --backend ray`` pays) and once
on an already running Ray (the per-task overhead alone).  Every run's rows are checked
against the serial ones (``wall_s`` aside).
"""

from __future__ import annotations

import argparse
import time

import mrgym
from mrgym.seeds import parse_seeds
from mrgym.sweep import ray_session


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "wall_s"} for r in rows]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--config", default="ila72")
    p.add_argument("--schedulers", default="fifo,fair,delay,late")
    p.add_argument("--seeds", default="0-3")
    p.add_argument("--workers", default="1,2")
    a = p.parse_args()
    pols, seeds = a.schedulers.split(","), parse_seeds(a.seeds)
    counts = [int(w) for w in a.workers.split(",")]
    n = len(pols) * len(seeds)

    def timed(**kw):
        t0 = time.perf_counter()
        rows = mrgym.evaluate(pols, [a.config], seeds, **kw)
        return time.perf_counter() - t0, rows

    base_s, base = timed()
    cpu_s = sum(r["wall_s"] for r in base)
    print(f"grid: {a.config}, {len(pols)} schedulers x {len(seeds)} seeds = {n} runs")
    print(
        f"serial (in process): {base_s:6.1f} s  {n / base_s:5.2f} runs/s (sum of run walls {cpu_s:.1f} s)"
    )
    for w in counts:
        if w == 1:
            continue
        s, rows = timed(workers=w)
        assert _strip(rows) == _strip(base)
        print(
            f"process pool, {w} workers: {s:6.1f} s  {n / s:5.2f} runs/s  speed-up {base_s / s:.2f}x"
        )
    w = max(counts)
    t0 = time.perf_counter()
    with ray_session(num_cpus=w):
        init_s = time.perf_counter() - t0
        s, rows = timed(workers=w, backend="ray")
        assert _strip(rows) == _strip(base)
        s2, _ = timed(workers=w, backend="ray")
    print(f"ray, {w} workers, started by the sweep: {init_s + s:6.1f} s (ray.init {init_s:.1f} s)")
    print(f"ray, {w} workers, first sweep on it:   {s:6.1f} s  {n / s:5.2f} runs/s")
    print(f"ray, {w} workers, warm (2nd sweep):    {s2:6.1f} s  {n / s2:5.2f} runs/s")


if __name__ == "__main__":
    main()
