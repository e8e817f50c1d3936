"""The fluid model's share of a run's CPU time, for an Amdahl bound on a compiled core.

    python benchmarks/compiled/fluid_share.py                # ila2400 / dl-sched
    python benchmarks/compiled/fluid_share.py --scenario ila72 --rounds 3

Every way into the fluid model from outside it (``FluidEngine``'s public methods, the
completion callback ``_fire`` and ``CpuPool``'s entry points) is wrapped with a CPU-time
clock and a depth counter, so the time inside it -- its own code, the heapq and dict
builtins it calls and the SimPy events it creates or succeeds -- is counted once.  The
wrappers' own cost is measured on an empty call and subtracted.  With ``f`` that share
of a pure-Python run, a core ``k`` times faster gives ``1 / ((1 - f) + f / k)`` overall,
at most ``1 / (1 - f)`` however fast it is (Amdahl); and a measured overall speed-up ``S``
of a compiled copy means its fluid model ran ``k = f / (1 / S - (1 - f))`` times faster.
"""

from __future__ import annotations

import argparse
import statistics
import time

from mrgym.runner import build_simulation
from mrgym.sim import cpu, execution

ENGINE = ("flow", "compute", "cancel", "suspend", "resume", "extend", "shrink", "kick", "_fire")
POOL = ("add_io_stream", "recompute", "account")


class Clock:
    """Inclusive CPU time of the outermost wrapped calls."""

    def __init__(self) -> None:
        self.depth = 0
        self.total = 0.0
        self.calls = 0

    def wrap(self, fn):
        clock = time.process_time

        def inner(*args, **kw):
            if self.depth:
                return fn(*args, **kw)
            self.calls += 1
            self.depth = 1
            t0 = clock()
            try:
                return fn(*args, **kw)
            finally:
                self.total += clock() - t0
                self.depth = 0

        return inner


def overhead_per_call(n: int = 200_000) -> float:
    """CPU seconds one outermost wrapped call adds (two clock reads and the wrapper)."""
    c = Clock()
    f = c.wrap(lambda: None)
    t0 = time.process_time()
    for _ in range(n):
        f()
    with_wrap = time.process_time() - t0
    g = lambda: None  # noqa: E731
    t0 = time.process_time()
    for _ in range(n):
        g()
    return max(0.0, (with_wrap - (time.process_time() - t0)) / n)


def measure(scenario: str, scheduler: str, seed: int) -> tuple[float, float, int]:
    """(fluid CPU-s, run CPU-s, outermost calls) of one instrumented run."""
    clock = Clock()
    saved = []
    for cls, names in ((execution.FluidEngine, ENGINE), (cpu.CpuPool, POOL)):
        for name in names:
            saved.append((cls, name, getattr(cls, name)))
            setattr(cls, name, clock.wrap(getattr(cls, name)))
    try:
        sim = build_simulation(scenario, scheduler, seed)
        t0 = time.process_time()
        sim.run()
        run = time.process_time() - t0
    finally:
        for cls, name, fn in saved:
            setattr(cls, name, fn)
    return clock.total, run, clock.calls


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--scenario", default="ila2400")
    p.add_argument("--scheduler", default="dl-sched")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    ov = overhead_per_call()
    shares = []
    for r in range(a.rounds):
        fluid, run, calls = measure(a.scenario, a.scheduler, a.seed)
        # the wrappers' cost sits inside run (all of it) and inside fluid (half: the clock
        # read after t0 and the bookkeeping before the second read)
        run_c = run - calls * ov
        fluid_c = fluid - calls * ov / 2
        shares.append(fluid_c / run_c)
        print(
            f"round {r}: run {run_c:.2f} CPU-s (wrappers {calls * ov:.2f} s removed), "
            f"fluid model {fluid_c:.2f} s = {100 * fluid_c / run_c:.1f} %  ({calls:,} entries)"
        )
    f = statistics.median(shares)
    print(f"\nfluid model share f = {100 * f:.1f} % (median)")
    print(f"  Amdahl ceiling with a free fluid model: x{1 / (1 - f):.2f}")
    for k in (2, 5, 10, 50):
        print(f"  fluid model x{k:<3d} faster -> x{1 / ((1 - f) + f / k):.2f} overall")


if __name__ == "__main__":
    main()
