"""Claims of the ILA paper about ILA as a system: the interference model's
accuracy (§5.4, Table 5 / Fig. 11), ILA's own decision time at scale (§5.6) and the
dynamic vs static thresholds (§5.5, Fig. 12).  Schedulers are reached through the
registry, as in :mod:`mrgym.reproduce.claims.ila_sched`."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from mrgym import registry
from mrgym.config import load_scenario
from mrgym.reproduce import ila_setup
from mrgym.reproduce.claims import Result, claim
from mrgym.reproduce.ila_runs import QUICK_COMBOS as QUICK_TRAINING_COMBOS
from mrgym.reproduce.stats import ci, fmt, pyplot, save_pyplot
from mrgym.runner import build_simulation

# --- Table 5 / Fig. 11: the interference model's accuracy ------------------------------------


@claim(
    paper="ila",
    key="ila-table5",
    setup=ila_setup.ila_sched_setup,
    where="Table 5, Fig. 11 (§5.4)",
    what="interference model accuracy: R² and prediction error, exponential vs linear and "
    "quadratic",
    paper_value="R² exponential 0.887 (I/O 0.895, CPU 0.879), linear 0.672, quadratic 0.714; "
    "error 12 %, 10-15 % below linear/quadratic",
    default_seeds=3,
)
def ila_table5(seeds: list[int], out: Path, quick: bool = False) -> Result:
    sched = registry.make("ila")
    # quick: the training set of the quick ILA runs (QUICK_COMBOS; one process builds it once)
    kw = QUICK_COMBOS if quick else {}
    runs = [sched.model_accuracy("ila72", 0.3, seed, **kw) for seed in seeds]
    names = ("exponential", "exponential-sse", "linear", "quadratic")
    r2 = {n: [r[n]["r2"] for r in runs] for n in names}
    err = {n: [r[n]["error"] for r in runs] for n in names}
    e = ci(r2["exponential"])[0]
    beats = all(e > ci(r2[n])[0] for n in ("linear", "quadratic"))
    verdict = (
        "reproduced" if beats and e >= 0.8 else ("same direction" if beats else "not reproduced")
    )
    ours = "; ".join(
        f"{n} R² {fmt(r2[n], digits=2)}, error {fmt(err[n], 100, digits=0)} %" for n in names
    )
    by = runs[0]["exponential"]
    why = (
        "Held-out 30 % of the simulator-built training set (baselines.ila_training: each "
        "Table 3 application on one VM of a 6-VM server against CPU/read/write generators "
        f"and random Table 3 mixes; {runs[0]['rows']} rows, a new split per seed). Criterion: "
        "exponential R² ≥ 0.8 and above linear and quadratic; 'same direction' if only above. "
        f"Exponential by class (seed {seeds[0]}): I/O R² {by['r2_io']:.2f}, CPU "
        f"{by['r2_cpu']:.2f}. The "
        "default fit minimizes squared errors of log S (raw SSE, the paper's, is the "
        "'exponential-sse' row: it bends to the heavy tail)."
    )
    if verdict != "reproduced":
        top = [r["ceiling"]["r2"] for r in runs]
        ctl = [r["ceiling"]["control"] for r in runs]
        fit = [r["exponential"]["r2_fit"] for r in runs]
        one = [r["cpu_sum"] for r in runs]
        why += (
            " Why not: the exponential underfits. On its own training rows it explains R² "
            f"{fmt(fit, digits=2)}, no more than held out, and a one-input exponential in "
            f"the background's CPU use (c_u + c_a) explains R² {fmt(one, digits=2)} held "
            "out, as much as the eleven inputs: the model's S is mostly the credit "
            "scheduler's over-commit cliff past the 10 cores (credit_overcommit, stage C), "
            "whose height also varies with which applications are co-hosted, which one "
            "additive exponent per equation cannot follow. A leave-one-out 5-nearest-"
            f"neighbour mean over the same profile's rows gives R² {fmt(top, digits=2)}, "
            f"but only {fmt(ctl, digits=2)} when S is an exact function of the features "
            "(the exponential's own fit): in 11 dimensions it is too weak to bound what "
            "the features explain."
        )
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.4))
    xs = np.arange(len(names))
    ax.bar(xs - 0.2, [ci(r2[n])[0] for n in names], 0.4, label="R² (ours)")
    ax.bar(xs + 0.2, [ci(err[n])[0] for n in names], 0.4, label="error (ours)")
    ax.scatter([0, 2, 3], [0.887, 0.672, 0.714], color="k", marker="_", s=300, label="paper R²")
    ax.set_xticks(xs, names, fontsize=8)
    ax.set_title(f"ILA Table 5 / Fig. 11 ({len(seeds)} splits)", fontsize=9)
    ax.legend(fontsize=7)
    path = save_pyplot(fig, out, "ila-table5")
    return Result(ours, verdict, why, path, {"r2": r2, "error": err, "runs": runs})


# --- §5.6: overhead and scalability ---------------------------------------------------------


# quick sizes (a smoke run, not the claims' numbers): ILA trained on 8 background
# combinations instead of 60, and a twentieth of ila2400's workload (~4.5 CPU-s, at a tenth
# ~6; the 2 400 VMs and ILA's online refits either way)
QUICK_COMBOS = {"n_combos": QUICK_TRAINING_COMBOS}  # the quick ila72 runs' (ila_runs)
SCALABILITY_QUICK = {
    "workload.n_jobs": 5,
    "workload.scale_maps_to": 750,
    "workload.total_reduces": 250,
}


@claim(
    paper="ila",
    key="ila-scalability",
    setup=ila_setup.ila_sched_setup,
    where="§5.6",
    what="ILA's own decision time on 2 400 VMs (ila2400)",
    paper_value="ILA correctly schedules 720 tasks per second (15 000 maps, 5 000 reduces, "
    "2 400 VMs)",
    default_seeds=1,
)
def ila_scalability(seeds: list[int], out: Path, quick: bool = False) -> Result:
    # quick: the same 2 400 VMs with a twentieth of the jobs, maps and reduces (a smoke run)
    sc = load_scenario("ila2400", SCALABILITY_QUICK) if quick else "ila2400"
    rates, per_beat, walls, refit, n_refit, offline = [], [], [], [], [], []
    for seed in seeds:
        sched = registry.make("ila", **(QUICK_COMBOS if quick else {}))
        sim = build_simulation(sc, sched, seed)
        t0 = time.perf_counter()
        sim.run()
        walls.append(time.perf_counter() - t0)
        launched = sum(1 for a in sim.attempts)
        decide = sched.decide_s - sched.refit_s - sched.offline_s
        rates.append(launched / decide)
        per_beat.append(decide / max(1, sim.beats.n_heartbeats) * 1e3)
        refit.append(sched.refit_s / max(1, sched.n_refits))
        n_refit.append(sched.n_refits)
        offline.append(sched.offline_s)
    ok = min(rates) >= 720.0 and max(refit) < 2.0
    verdict = "reproduced" if ok else "not reproduced"
    ours = (
        f"{fmt(rates, digits=0)} tasks per second of ILA's own decision time; "
        f"{fmt(per_beat, digits=3)} ms per heartbeat; {fmt(refit, digits=2)} s per online "
        "refit"
    )
    why = (
        "Criterion: tasks launched per second of time spent inside ILA's decide() (model "
        "predictions, gate, LASM; the online refits and the offline model's training at the "
        f"first request, {fmt(offline, digits=1)} s, counted apart) ≥ 720 on ila2400 (400 "
        "servers x 6 VMs), and each refit under the paper's 2 s ('The time for modeling "
        "process is less than 2 seconds'). Measured in CPython on this machine, as the "
        "thread's CPU time; the "
        f"simulation's own time is excluded (whole runs took "
        f"{', '.join(f'{w:.0f}' for w in walls)} s, {', '.join(map(str, n_refit))} refits "
        "over up to 20 000 observations)."
    )
    data = {"tasks_per_s": rates, "ms_per_heartbeat": per_beat, "s_per_refit": refit}
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.bar(["ILA (ours)"], [ci(rates)[0]], yerr=[ci(rates)[1]], capsize=3)
    ax.axhline(720, color="grey", ls="--", lw=1, label="paper: 720 tasks/s")
    ax.set_ylabel("tasks per second of decision time")
    ax.set_title(f"ILA §5.6 on ila2400 ({len(seeds)} seed(s))", fontsize=9)
    ax.legend(fontsize=8)
    path = save_pyplot(fig, out, "ila-scalability")
    return Result(ours, verdict, why, path, data)


# --- §5.5 Fig. 12: dynamic vs static thresholds ---------------------------------------------

# the three workloads of §5.5: ila72's mix, and pure CPU / pure I/O job lists of the same
# cluster (Table 3 applications, 6 jobs 20 s apart; sizes chosen, the paper gives none)
_PURE = {
    "cpu": ["matrix", "kmeans", "piest", "bayes", "canopy", "matrix"],
    "io": ["terasort", "grep", "wordcount", "terasort", "grep", "wordcount"],
}
FIG12_POLICIES = {
    "dynamic": ("ila", {}),
    "H=1": ("ila", {"H": 1.0, "dynamic": False}),
    "H=2": ("ila", {"H": 2.0, "dynamic": False}),
    "H=4": ("ila", {"H": 4.0, "dynamic": False}),
    "H=8": ("ila", {"H": 8.0, "dynamic": False}),
    "none": ("lao", {}),  # no threshold: the interference-oblivious policy
}


FIG12_MAPS = 120  # maps per job of the pure CPU / I/O workloads
# quick sizes (a smoke run, not the claim's numbers): ila72 cut to 8 jobs, 20-map jobs
FIG12_QUICK = {"jobs": 8, "maps": 20}


def _fig12_scenario(workload: str, quick: bool = False):
    if workload == "mix":
        return (
            load_scenario("ila72", {"workload.n_jobs": FIG12_QUICK["jobs"]}) if quick else "ila72"
        )
    maps = FIG12_QUICK["maps"] if quick else FIG12_MAPS
    jobs = [
        {"profile": p, "maps": maps, "submit_s": 20.0 * i} for i, p in enumerate(_PURE[workload])
    ]
    return load_scenario(
        "ila72", {"name": f"ila72-{workload}", "workload": {"kind": "jobs", "jobs": jobs}}
    )


@claim(
    paper="ila",
    key="ila-fig12",
    setup=ila_setup.ila_sched_setup,
    where="Fig. 12 (§5.5)",
    what="throughput of the dynamic threshold vs static thresholds H = 1..8 and none",
    paper_value="the dynamic threshold always gives the highest throughput (mixed, CPU, I/O "
    "workloads), 40-100 % above static ones; no threshold is always worst",
    default_seeds=3,
)
def ila_fig12(seeds: list[int], out: Path, quick: bool = False) -> Result:
    thr: dict[str, dict[str, list[float]]] = {}
    extra = QUICK_COMBOS if quick else {}
    for w in ("mix", "cpu", "io"):
        sc = _fig12_scenario(w, quick)
        thr[w] = {}
        for label, (name, kw) in FIG12_POLICIES.items():
            vals = []
            for seed in seeds:
                sim = build_simulation(sc, registry.make(name, **kw, **extra), seed)
                sim.run()
                ends = [j.finish_s for j in sim.jobs if j.finish_s is not None]
                span = max(ends) - min(j.arrived_s for j in sim.jobs)
                done = sum(1 for a in sim.attempts if a.outcome == "success")
                vals.append(done / span * 60.0)
            thr[w][label] = vals
    best = {w: max(thr[w], key=lambda k: ci(thr[w][k])[0]) for w in thr}
    dyn_best = all(best[w] == "dynamic" for w in thr)
    none_worst = all(ci(thr[w]["none"])[0] <= min(ci(v)[0] for v in thr[w].values()) for w in thr)
    dyn_over_none = all(ci(thr[w]["dynamic"])[0] > ci(thr[w]["none"])[0] for w in thr)
    verdict = (
        "reproduced"
        if dyn_best and none_worst
        else ("same direction" if dyn_over_none else "not reproduced")
    )
    ours = (
        "; ".join(
            f"{w}: " + ", ".join(f"{k} {ci(v)[0]:.0f}" for k, v in thr[w].items()) for w in thr
        )
        + " tasks/min"
    )
    why = (
        "Throughput = successful tasks per minute, first arrival to last completion; mix = "
        f"ila72, cpu / io = 6 jobs of {FIG12_QUICK['maps'] if quick else FIG12_MAPS} maps of Table 3 CPU / I/O applications 20 s apart "
        "on the same cluster. Criterion: the dynamic threshold highest and no threshold "
        "(LAO) lowest on all three; 'same direction' if dynamic beats no threshold on all. "
        f"Highest: {', '.join(f'{w} {b}' for w, b in best.items())}."
    )
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    xs = np.arange(len(FIG12_POLICIES))
    for i, w in enumerate(thr):
        ax.bar(xs + (i - 1) * 0.27, [ci(thr[w][k])[0] for k in FIG12_POLICIES], 0.27, label=w)
    ax.set_xticks(xs, list(FIG12_POLICIES))
    ax.set_ylabel("tasks/min")
    ax.set_title(f"ILA Fig. 12 ({len(seeds)} seeds)", fontsize=9)
    ax.legend(fontsize=8)
    path = save_pyplot(fig, out, "ila-fig12")
    return Result(ours, verdict, why, path, {"tasks_per_min": thr})
