"""The staged calibration fit (issue 34, "calibrate, then validate"; docs/calibration.md).

Three stages, run in order, each fitting a few ``ModelParams`` fields on its targets
(:mod:`mrgym.calibration.targets`) with the earlier stages' results fixed:

- **A, native variability**: ``noise_sigma``, ``noise_tail_p``, ``noise_tail_alpha`` (with
  ``noise_phases="all"``) on the Rumen trace's map-duration dispersion and Lee §5.2's
  log-normal shape, on a native cluster (:func:`mrgym.calibration.probes.native_dispersion`);
- **B, virtualization overheads**: ``virt_cpu_overhead``, ``virt_io_overhead`` on HybridMR
  Fig. 1(a)'s bands;
- **C, virtual interference**: ``credit_overcommit``, ``membw_alpha``,
  ``credit_coupling``, ``dom0_core_s_per_mb``, ``disk_thrash`` and the ILA mix's
  ``workload.generator_mb`` on ILA Fig. 8's two distributions, PureFair's and ILA's own,
  with penalties that keep ILA Fig. 1-3 within their criteria.

Each objective is the sum of squared residuals (``(measured - target) / tolerance``, so 1 =
the edge of the claim's criterion) and penalties on fixed seeds: the same seeds for every
trial (common random numbers), so it is a deterministic function of the parameters.
Stage C's Fig. 8 residuals count only past their criteria (:func:`band`), PureFair's
weighted as constraints: its six targets cannot all be met (ILA's own distribution by no
parameter values, docs/calibration.md), and within a claim's band no value is better than
another, so the fit looks, among the parameter sets that meet PureFair's, for the one
nearest ILA's.  A simulation is piecewise smooth in its parameters at
best (events reorder), so the optimizer is derivative-free: scipy's bounded Nelder-Mead
on the parameters scaled to [0, 1], from the start values with a simplex of ±0.2 of each
range (stage C: from the best of the start values and a fixed 16-point Latin hypercube),
stopped after a fixed number of evaluations. A parameter (or a fixed setting) that ``ModelParams`` does not have
is skipped with a message, so the fit runs with the mechanisms that exist.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize
from scipy.stats import qmc

from mrgym.calibration import probes
from mrgym.calibration import targets as T
from mrgym.sim.params import ModelParams

Residuals = Callable[[dict, list[int], bool], dict[str, float]]
# stage C's ILA Fig. 1-3 penalties are constraints: a step outside a criterion costs this
# many times a step of the Fig. 8 targets
CONSTRAINT_WEIGHT = 10.0


@dataclass(frozen=True)
class Param:
    name: str
    lo: float
    hi: float
    start: float

    def scale(self, x: float) -> float:
        return (x - self.lo) / (self.hi - self.lo)

    def unscale(self, u: float) -> float:
        return self.lo + float(np.clip(u, 0.0, 1.0)) * (self.hi - self.lo)


@dataclass(frozen=True)
class Stage:
    name: str
    title: str
    params: tuple[Param, ...]
    residuals: Residuals  # (params, seeds, quick) -> {target or penalty: residual}
    targets: tuple[str, ...]  # what the residuals are, for the record
    fixed: dict = field(default_factory=dict)  # settings the stage needs (noise_phases)
    seeds: tuple[int, ...] = (0, 1)
    quick_seeds: tuple[int, ...] = (0,)
    budget: int = 40  # objective evaluations, the pre-search's included
    quick_budget: int = 4
    # Latin-hypercube points tried before Nelder-Mead, which starts from the best of them
    # and the start values: a local search from one start explores little of a 6-D box
    presearch: int = 0


def _stage_a(params: dict, seeds: list[int], quick: bool) -> dict[str, float]:
    d = probes.native_dispersion(params, seeds)
    p90, p99 = T.RUMEN
    return {
        p90.key: p90.residual(d["p90/p50"]),
        p99.key: p99.residual(d["p99/p50"]),
        # a shape: only a normal fitting better than the log-normal costs anything
        T.LEE_LOGNORMAL.key: max(0.0, T.LEE_LOGNORMAL.residual(d["normal-minus-lognormal"])),
    }


def _stage_b(params: dict, seeds: list[int], quick: bool) -> dict[str, float]:
    apps = T.HYBRIDMR_IO + T.HYBRIDMR_CPU
    over = probes.virt_overheads(params, seeds, apps)
    by_key = {t.key: t for t in T.HYBRIDMR}
    return {f"hybridmr-fig1a-{a}": by_key[f"hybridmr-fig1a-{a}"].residual(over[a]) for a in apps}


def band(r: float) -> float:
    """A residual as a claim's criterion reads it: 0 within its tolerance (|r| <= 1), the
    distance past it outside (a criterion is a band around the paper's number, not a
    point: inside, no value is better than another)."""
    return float(np.sign(r) * max(0.0, abs(r) - 1.0))


def _stage_c(params: dict, seeds: list[int], quick: bool) -> dict[str, float]:
    res = {}
    # PureFair's distribution weighs as a constraint (CONSTRAINT_WEIGHT), ILA's as a
    # target: no evaluated parameter values bring ILA's near its criterion while
    # PureFair's holds (docs/calibration.md), and a plain sum would trade PureFair's,
    # which can be met, for small moves of ILA's
    for sched, targets, w in (
        ("fair", T.ILA_FIG8, CONSTRAINT_WEIGHT),
        ("ila", T.ILA_FIG8_ILA, 1.0),
    ):
        fr = probes.fig8(params, seeds, sched)
        res |= {t.key: w * band(t.residual(fr[t.key.rsplit("-", 1)[1]])) for t in targets}
    # Fig. 1-3 are constraints, not targets to trade against Fig. 8: each penalty weighs
    # CONSTRAINT_WEIGHT tolerances per tolerance outside its criterion
    pen = probes.fig123_penalties(params, seeds[0])
    return {**res, **{k: CONSTRAINT_WEIGHT * v for k, v in pen.items()}}


STAGES: dict[str, Stage] = {
    "A": Stage(
        "A",
        "native variability",
        (
            Param("noise_sigma", 0.0, 1.0, 0.25),
            Param("noise_tail_p", 0.0, 0.2, 0.02),
            Param("noise_tail_alpha", 1.1, 5.0, 2.5),
        ),
        _stage_a,
        tuple(t.key for t in (*T.RUMEN, T.LEE_LOGNORMAL)),
        fixed={"noise_phases": "all"},
        budget=40,
    ),
    "B": Stage(
        "B",
        "virtualization overheads",
        (Param("virt_cpu_overhead", 0.0, 0.3, 0.04), Param("virt_io_overhead", 0.0, 0.6, 0.2)),
        _stage_b,
        tuple(t.key for t in T.HYBRIDMR),
        seeds=(0, 1, 2),
        budget=30,
    ),
    "C": Stage(
        "C",
        "virtual interference",
        # Bounds are what the sources allow, not what a target would like: Dom0 costs at
        # most 0.02 core-s per MB (a choice: one Dom0 core then serves 50 MB/s, half a
        # disk's sequential rate); a disk's aggregate rate falls to its floor within 1 to
        # 50 extra streams (disk_thrash up to 1), or never (0: a fair-share disk, which
        # Fig. 2's traffic constraint allows); TeraGen's and RandomWriter's maps write
        # 16 MB to 2 blocks each (ILA gives no size).  No slow VMs: ILA's cluster is
        # private, so no neighbour outside the scenario makes a VM slow (docs/model.md).
        # No source bounds the CPU mechanisms' strengths: ILA's Fig. 1 does, as the
        # constraints below (flat to 8 cores, then growing), so their ranges are wide
        # (overcommit 16: 20 % more runnable vCPUs than cores runs a phase 4.2x its fair
        # share; membw 8).  Narrower ranges (8 and 2) cut off the region where Fig. 2's
        # co-hosted traffic rises (docs/calibration.md).
        (
            Param("credit_overcommit", 0.0, 16.0, 2.0),
            Param("membw_alpha", 0.0, 8.0, 1.0),
            Param("credit_coupling", 0.0, 2.0, 0.5),
            Param("dom0_core_s_per_mb", 0.001, 0.02, 0.01),
            Param("disk_thrash", 0.0, 1.0, 0.15),
            Param("workload.generator_mb", 16.0, 256.0, 128.0),
        ),
        _stage_c,
        tuple(t.key for t in (*T.ILA_FIG8, *T.ILA_FIG8_ILA)) + ("ila-fig1/2/3 penalties",),
        # a choice: Dom0 on one core of its own (Xen's dom0_max_vcpus); membw_capacity:
        # the cpu module's proposed 0.8 pressure units per core (alpha scales with it)
        fixed={"dom0_cores": 1, "membw_capacity": 0.8},
        budget=80,
        presearch=16,
    ),
}
# the stages' parameters: ModelParams fields, and the scenario keys a stage declares as
# inputs of its fit (ILA names no output size for its generators)
MODEL_FIELDS = {f.name for f in dataclasses.fields(ModelParams)} | {"workload.generator_mb"}


def present(stage: Stage, say: Callable[[str], None]) -> tuple[list[Param], dict, list[str]]:
    """The stage's parameters and fixed settings that ``ModelParams`` has, and the names it
    skips (each said once through ``say``)."""
    params = [p for p in stage.params if p.name in MODEL_FIELDS]
    fixed = {k: v for k, v in stage.fixed.items() if k in MODEL_FIELDS}
    skipped = [p.name for p in stage.params if p.name not in MODEL_FIELDS]
    skipped += [k for k in stage.fixed if k not in MODEL_FIELDS]
    for name in skipped:
        say(
            f"stage {stage.name}: {name} is not a ModelParams field (mechanism not merged): skipped"
        )
    return params, fixed, skipped


class Objective:
    """A stage's objective on scaled parameters: sum of squared residuals, each distinct
    point evaluated once (the count is the evaluation budget's)."""

    def __init__(self, stage: Stage, params: list[Param], base: dict, seeds: list[int], quick):
        self.stage, self.params, self.base = stage, params, base
        self.seeds, self.quick = seeds, quick
        self.seen: dict[tuple, tuple[float, dict]] = {}
        self.wall_s = 0.0

    def values(self, u: np.ndarray) -> dict:
        return {**self.base, **{p.name: p.unscale(x) for p, x in zip(self.params, u)}}

    def residuals(self, u: np.ndarray) -> tuple[float, dict]:
        key = tuple(round(float(x), 12) for x in np.clip(u, 0.0, 1.0))
        if key not in self.seen:
            t0 = time.perf_counter()
            r = self.stage.residuals(self.values(np.array(key)), self.seeds, self.quick)
            self.wall_s += time.perf_counter() - t0
            self.seen[key] = (float(sum(v * v for v in r.values())), r)
        return self.seen[key]

    def __call__(self, u: np.ndarray) -> float:
        return self.residuals(u)[0]


def _simplex(u0: np.ndarray) -> np.ndarray:
    """x0, then x0 moved 0.2 of the range along each axis (inwards at a bound)."""
    pts = [u0]
    for i in range(u0.size):
        v = u0.copy()
        v[i] = v[i] + 0.2 if v[i] + 0.2 <= 1.0 else v[i] - 0.2
        pts.append(v)
    return np.array(pts)


def fit_stage(stage: Stage, base: dict, quick: bool, say: Callable[[str], None]) -> dict:
    """Fit one stage with ``base`` (every other stage's current values) fixed, starting
    from the stage's own values in ``base`` where it has them; the stage's record."""
    params, fixed, skipped = present(stage, say)
    seeds = list(stage.quick_seeds if quick else stage.seeds)
    budget = stage.quick_budget if quick else stage.budget
    obj = Objective(stage, params, {**base, **fixed}, seeds, quick)
    u0 = np.array([p.scale(base.get(p.name, p.start)) for p in params])
    f0, r0 = obj.residuals(u0)
    message = "no parameter present: residuals at the defaults only"
    u = u0
    if params:
        pre = min(stage.presearch, budget - 1) if not quick else 0
        start = u0
        if pre > 0:
            # a fixed Latin hypercube (seeded: the fit stays deterministic); NM starts at
            # the best point seen, the start values included
            pts = qmc.LatinHypercube(d=len(params), seed=0).random(pre)
            start = min([u0, *pts], key=lambda v: obj(np.asarray(v)))
        res = minimize(
            obj,
            start,
            method="Nelder-Mead",
            bounds=[(0.0, 1.0)] * len(params),
            options={
                "maxfev": budget - pre,
                "initial_simplex": _simplex(start),
                "xatol": 1e-3,
                "fatol": 1e-4,
            },
        )
        u, message = res.x, str(res.message)
    f1, r1 = obj.residuals(u)
    if f0 < f1:  # the start was better than anything the budget found
        u, f1, r1 = u0, f0, r0
    best = min(obj.seen.items(), key=lambda kv: kv[1][0]) if obj.seen else None
    if best is not None and best[1][0] < f1:  # a pre-search point beat the local search
        u, (f1, r1) = np.array(best[0]), best[1]
    final = {p.name: obj.values(u)[p.name] for p in params}
    n = len(obj.seen)
    say(f"stage {stage.name}: {n} evaluations, objective {f0:.4g} -> {f1:.4g}, {final}")
    return {
        "stage": stage.name,
        "title": stage.title,
        "targets": list(stage.targets),
        "params": [dataclasses.asdict(p) for p in params],
        "skipped": skipped,
        "fixed": {**base, **fixed},
        "seeds": seeds,
        "optimizer": "scipy.optimize.minimize(method='Nelder-Mead', bounds=[0, 1] scaled)",
        "budget": budget,
        "evaluations": n,
        "s_per_evaluation": obj.wall_s / max(1, n),
        "message": message,
        "objective_start": f0,
        "objective_final": f1,
        "start_residuals": r0,
        "final_params": final,
        "residuals": r1,
        # every point the search evaluated: where no parameter values meet a target, this
        # is the measurement that says so
        "evaluated": [
            {"params": {p.name: p.unscale(x) for p, x in zip(params, k)}, "residuals": r}
            for k, (_, r) in obj.seen.items()
        ],
    }


def calibrate(
    stages: list[str],
    quick: bool = False,
    say: Callable[[str], None] = print,
    passes: int | None = None,
) -> dict:
    """Fit ``stages`` in order, ``passes`` times over (default: 2, a quick run 1); the JSON
    record.

    The stages are not independent (stage B's virtual cluster also feels stage C's
    interference), so the fit is block coordinate descent: every parameter starts at its
    stage's start value (never at the current ``ModelParams`` default, so the fit does not
    depend on an earlier fit), each stage is fitted with all the others' current values
    fixed, and a later pass starts each stage from the previous pass's result."""
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise ValueError(f"--stage {unknown[0]}: expected one of {', '.join(STAGES)} or all")
    if passes is None:
        passes = 1 if quick else 2
    if passes < 1:
        raise ValueError(f"--passes: expected an integer >= 1, got {passes}")
    fitted: dict = {}
    for name in stages:
        params, fixed, _ = present(STAGES[name], lambda m: None)
        fitted.update({p.name: p.start for p in params})
        fitted.update(fixed)
    records = []
    for k in range(passes):
        for name in stages:
            rec = fit_stage(STAGES[name], dict(fitted), quick, say)
            rec["pass"] = k + 1
            fitted.update(rec["final_params"])
            records.append(rec)
    return {"quick": quick, "passes": passes, "stages": records, "fitted": fitted}
