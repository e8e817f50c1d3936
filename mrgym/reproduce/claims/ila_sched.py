"""Claims of the ILA paper about its own scheduler (§5.2): ILA, IAO and LAO against
PureFair, Delay, LATE and Capacity on ila72 (the model's accuracy, the thresholds and the
overhead are :mod:`mrgym.reproduce.claims.ila_system`).

The schedulers are reached through the registry (``ila``, ``iao``, ``lao``), so this
library module never imports ``baselines``; the ila72 runs are shared with the other ILA
claims through :func:`mrgym.reproduce.ila_runs.ila72_run`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mrgym import registry
from mrgym.config import load_scenario
from mrgym.reproduce import ila_setup
from mrgym.reproduce.claims import Result, claim
from mrgym.reproduce.claims.ila import io_job_locality
from mrgym.reproduce.ila_runs import QUICK_COMBOS, QUICK_OVERRIDES, ila72_maps, ila72_run
from mrgym.reproduce.stats import ci, fmt, pyplot, save_pyplot

OBLIVIOUS = ("fair", "delay", "late", "capacity", "lao")  # §5.2's interference-oblivious
ALL = ("ila", "iao", *OBLIVIOUS)
LABEL = {
    "ila": "ILA",
    "iao": "IAO",
    "lao": "LAO",
    "fair": "PureFair",
    "delay": "Delay",
    "late": "LATE",
    "capacity": "Capacity",
}
SEEDS_NOTE = "per-seed ratios to ILA of the same seed (common random numbers)"


def _mean_jct(sched: str, seed: int, quick: bool = False, **params) -> float:
    jobs = ila72_run(sched, seed, quick, **params).jobs
    return float(np.mean([j.jct for j in jobs if j.jct is not None]))


def _throughput(sched: str, seed: int, quick: bool = False) -> float:
    r = ila72_run(sched, seed, quick)
    return r.tasks_done / r.makespan_s * 60.0  # tasks per minute


def _bar(out: Path, key: str, title: str, ylabel: str, vals: dict[str, list[float]], ref=None):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    names = list(vals)
    xs = np.arange(len(names))
    ax.bar(xs, [ci(vals[n])[0] for n in names], yerr=[ci(vals[n])[1] for n in names], capsize=3)
    if ref is not None:
        ax.axhline(ref, color="grey", ls="--", lw=1)
    ax.set_xticks(xs, [LABEL[n] for n in names])
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    return save_pyplot(fig, out, key)


# --- Fig. 5: per-job completion time, normalized to ILA --------------------------------


def _gt2(sched: str, seeds: list[int], quick: bool = False) -> float:
    """Share of ``sched``'s successful ila72 maps slower than 2x their interference-free time."""
    return float(
        np.mean([r.duration / r.alone > 2 for sd in seeds for r in ila72_maps(sched, sd, quick)])
    )


def _fig5_tail(seeds: list[int], m: dict[str, float], quick: bool = False) -> str:
    """What was measured when ILA is not faster than every oblivious scheduler."""
    ila, fair = _gt2("ila", seeds, quick), _gt2("fair", seeds, quick)
    rej = ila72_run("ila", seeds[0], quick).rejected_share
    return (
        f" ILA's mean JCT is within {max(abs(m[s] - 1) for s in OBLIVIOUS) * 100:.0f} % "
        f"of the oblivious schedulers' here, not 1.5-6.5x below. Maps > 2x: ILA {ila * 100:.0f} "
        f"%, PureFair {fair * 100:.0f} % (paper: 60 % of the oblivious schedulers' tasks); "
        f"ILA's gate left {rej * 100:.0f} % of map requests idle (seed {seeds[0]}, "
        "ila-ablation)."
    )


@claim(
    paper="ila",
    key="ila-fig5",
    setup=ila_setup.ila_sched_setup,
    where="Fig. 5 (§5.2)",
    what="job completion time by job type, other schedulers over ILA",
    paper_value="ILA speeds jobs up 1.5-6.5x over PureFair/Delay/LATE/Capacity/LAO and "
    "1.1-2.0x over IAO",
    default_seeds=5,
)
def ila_fig5(seeds: list[int], out: Path, quick: bool = False) -> Result:
    ratio: dict[str, list[float]] = {s: [] for s in ALL if s != "ila"}
    by_type: dict[str, dict[str, list[float]]] = {s: {} for s in ALL}
    for seed in seeds:
        ila = _mean_jct("ila", seed, quick)
        for s in ALL:
            for j in ila72_run(s, seed, quick).jobs:
                if j.jct is not None:
                    by_type[s].setdefault(f"{j.profile}({j.maps})", []).append(j.jct)
            if s != "ila":
                ratio[s].append(_mean_jct(s, seed, quick) / ila)
    types = sorted(by_type["ila"], key=lambda t: int(t.split("(")[1][:-1]))
    per_type = {
        s: {t: float(np.mean(by_type[s][t]) / np.mean(by_type["ila"][t])) for t in types}
        for s in ALL
        if s != "ila"
    }
    m = {s: ci(ratio[s])[0] for s in ratio}
    faster = all(m[s] > 1.0 for s in OBLIVIOUS)
    in_band = all(1.5 <= np.median(list(per_type[s].values())) <= 6.5 for s in OBLIVIOUS)
    verdict = (
        "reproduced" if faster and in_band else ("same direction" if faster else "not reproduced")
    )
    ours = "mean JCT over ILA's: " + ", ".join(
        f"{LABEL[s]} {fmt(ratio[s], digits=2)}x" for s in ratio
    )
    why = (
        "Criterion: every interference-oblivious scheduler's mean JCT above ILA's ("
        + SEEDS_NOTE
        + ") and the median over job types of its per-type JCT ratio to ILA within 1.5-6.5x; "
        "'same direction' if only the first holds. Per-type ratio ranges: "
        + "; ".join(
            f"{LABEL[s]} {min(per_type[s].values()):.2f}-{max(per_type[s].values()):.2f}x"
            for s in per_type
        )
        + "."
    )
    if not faster:
        why += _fig5_tail(seeds, m, quick)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 3.8))
    xs = np.arange(len(types))
    w = 0.8 / len(per_type)
    for i, s in enumerate(per_type):
        ax.bar(xs + i * w - 0.4 + w / 2, [per_type[s][t] for t in types], w, label=LABEL[s])
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(xs, types, rotation=30, fontsize=7)
    ax.set_ylabel("mean JCT / ILA's")
    ax.set_title(f"ILA Fig. 5 on ila72 ({len(seeds)} seeds)", fontsize=9)
    ax.legend(fontsize=7, ncol=3)
    path = save_pyplot(fig, out, "ila-fig5")
    return Result(ours, verdict, why, path, {"ratio": ratio, "per_type": per_type})


# --- Fig. 6: throughput ----------------------------------------------------------------


@claim(
    paper="ila",
    key="ila-fig6",
    setup=ila_setup.ila_sched_setup,
    where="Fig. 6 (§5.2)",
    what="system throughput, ILA over the others",
    paper_value="up to 1.9x over the interference-oblivious schedulers, 1.3x over IAO",
    default_seeds=5,
)
def ila_fig6(seeds: list[int], out: Path, quick: bool = False) -> Result:
    thr = {s: [_throughput(s, seed, quick) for seed in seeds] for s in ALL}
    gain = {s: [a / b for a, b in zip(thr["ila"], thr[s])] for s in ALL if s != "ila"}
    m = {s: ci(gain[s])[0] for s in gain}
    best = max(m[s] for s in OBLIVIOUS)
    higher = all(m[s] > 1.0 for s in OBLIVIOUS)
    verdict = (
        "reproduced"
        if higher and 1.5 <= best <= 2.3
        else ("same direction" if higher else "not reproduced")
    )
    ours = "ILA's throughput over: " + ", ".join(
        f"{LABEL[s]} {fmt(gain[s], digits=2)}x" for s in gain
    )
    why = (
        "Throughput = successful tasks per minute from the first arrival to the last "
        "completion. Criterion: ILA above every interference-oblivious scheduler with the "
        "largest gain in 1.5-2.3x (the paper: up to 1.9x); 'same direction' if only above. "
        "Tasks per minute: " + ", ".join(f"{LABEL[s]} {fmt(thr[s], digits=1)}" for s in ALL) + "."
    )
    path = _bar(out, "ila-fig6", f"ILA Fig. 6 on ila72 ({len(seeds)} seeds)", "tasks/min", thr)
    return Result(ours, verdict, why, path, {"tasks_per_min": thr, "gain": gain})


# --- Fig. 7 with ILA: locality of I/O-bound jobs -----------------------------------------


def _local(sched: str, seed: int, quick: bool = False) -> float:
    """Fig. 7's aggregation (ila-fig7, :data:`~mrgym.reproduce.claims.ila.FIG7_READING`):
    each I/O-bound job's node+server local share, averaged over the jobs."""
    return io_job_locality(ila72_run(sched, seed, quick).maps)[0]


@claim(
    paper="ila",
    key="ila-fig7-ila",
    setup=ila_setup.ila_sched_setup,
    where="Fig. 7 (§5.2)",
    what="node+server locality of I/O-bound jobs' maps under ILA (mean over jobs)",
    paper_value="ILA ~90 %: +65 % over PureFair/LATE/Capacity/IAO, +20 % over Delay",
    default_seeds=5,
)
def ila_fig7_ila(seeds: list[int], out: Path, quick: bool = False) -> Result:
    loc = {s: [_local(s, seed, quick) for seed in seeds] for s in ALL}
    m = {s: ci(loc[s])[0] for s in loc}
    greedy = ("fair", "late", "capacity", "iao")
    near = abs(m["ila"] - 0.90) <= 0.10
    above = all(m["ila"] > m[s] for s in greedy) and m["ila"] >= m["delay"] - 0.02
    rel_greedy = min(m["ila"] / m[s] for s in greedy)
    big = rel_greedy >= 1.3 and m["ila"] / m["delay"] >= 1.1
    verdict = (
        "reproduced"
        if near and above and big
        else ("same direction" if above else "not reproduced")
    )
    ours = ", ".join(f"{LABEL[s]} {fmt(loc[s], 100)} %" for s in ALL)
    why = (
        "Criterion: maps of I/O-bound jobs with input launched node- or server-local; ILA "
        "within ±10 points of 90 %, at least 1.3x every greedy scheduler's (PureFair, LATE, "
        "Capacity, IAO) and 1.1x Delay's; 'same direction' if ILA is above every greedy one "
        f"and not below Delay. Measured: ILA/greedy ≥ {rel_greedy:.2f}x, ILA/Delay "
        f"{m['ila'] / m['delay']:.2f}x. Each job's local share counts once, as Fig. 7 "
        "draws a bar per job (ila-fig7)."
    )
    path = _bar(
        out, "ila-fig7-ila", f"ILA Fig. 7 on ila72 ({len(seeds)} seeds)", "node+server local", loc
    )
    return Result(ours, verdict, why, path, {"locality": loc})


# --- §5.2 ablation: ILA < IAO < LAO ---------------------------------------------------------


@claim(
    paper="ila",
    key="ila-ablation",
    setup=ila_setup.ila_sched_setup,
    where="§5.2 (Fig. 5, 8)",
    what="IAO/LAO ablation: mean JCT ordering ILA < IAO < LAO",
    paper_value="ILA 1.1-2.0x faster than IAO; LAO slower than IAO (interference costs "
    "more than remote reads)",
    default_seeds=5,
)
def ila_ablation(seeds: list[int], out: Path, quick: bool = False) -> Result:
    jct = {s: [_mean_jct(s, seed, quick) for seed in seeds] for s in ("ila", "iao", "lao", "fair")}
    literal = [_mean_jct("ila", sd, quick, relative=False) for sd in seeds]
    # Algorithm 2 with T = (0, 0, 0): LASM's closest map (server level included) with no
    # wait, to part what ILA's and LAO's locality waits cost from what locality gains
    no_wait = {
        s: [_mean_jct(s, sd, quick, waits_s=(0.0, 0.0, 0.0)) for sd in seeds]
        for s in ("ila", "lao")
    }
    iao = [b / a for a, b in zip(jct["ila"], jct["iao"])]
    lao = [c / b for b, c in zip(jct["iao"], jct["lao"])]
    ok1, ok2 = ci(iao)[0] > 1.0, ci(lao)[0] > 1.0
    verdict = "reproduced" if ok1 and ok2 else ("same direction" if ok2 else "not reproduced")
    rej = {s: ila72_run(s, seeds[0], quick).rejected_share for s in ("ila", "iao")}
    ours = f"IAO/ILA {fmt(iao, digits=2)}x, LAO/IAO {fmt(lao, digits=2)}x; mean JCT " + ", ".join(
        f"{LABEL[s]} {fmt(jct[s], digits=0)} s" for s in jct
    )
    why = (
        "Criterion: IAO's mean JCT over ILA's > 1 and LAO's over IAO's > 1 ("
        "per-seed ratios); 'same direction' if only LAO > IAO holds. Share of map requests "
        f"IASM left idle (seed {seeds[0]}): "
        + ", ".join(f"{LABEL[s]} {100 * v:.0f} %" for s, v in rej.items())
        + f". ILA comparing its raw prediction with H = 1 (relative=False): mean JCT "
        f"{fmt(literal, digits=0)} s (baselines/ila.py says why ILA divides by the idle "
        "prediction). Algorithms 1-3 are read as written (IASM, then LASM on the admitted "
        "job, the next job if either skips, the slot idle if none passes). With LASM's "
        f"waits at 0 (T = 0, 0, 0 s), ILA's mean JCT is {fmt(no_wait['ila'], digits=0)} s "
        f"(IAO {fmt(jct['iao'], digits=0)} s) and LAO's {fmt(no_wait['lao'], digits=0)} s "
        f"(PureFair {fmt(jct['fair'], digits=0)} s): what ILA loses to IAO is the waits, and "
        "the locality they buy gains nothing on ila72, where a remote block crosses a "
        "1 Gbit/s NIC (125 MB/s) faster than the 100 MB/s disk it is read from, which local "
        "and remote reads share alike."
    )
    path = _bar(
        out, "ila-ablation", f"ILA ablation on ila72 ({len(seeds)} seeds)", "mean JCT (s)", jct
    )
    data = {"jct": jct, "rejected_share": rej, "no_wait_jct": no_wait}
    return Result(ours, verdict, why, path, data)


# --- Fig. 8 with ILA: task slowdown CDF -----------------------------------------------------


def _fig8_ila_gaps(seeds: list[int], quick: bool) -> str:
    """Why ILA's own distribution misses the paper's: the same ILA with the static
    threshold only, and how much of its maps' slowdowns the state IASM sees explains."""
    # the same ILA with the static threshold only (§5.5's H = 1): how much of the gap
    # the dynamic threshold's admissions make
    static = [ila72_run("ila", sd, quick, dynamic=False) for sd in seeds]
    fr = {
        k: [float(np.mean(f(np.array([r.duration / r.alone for r in run.maps])))) for run in static]
        for k, f in (
            ("le1.1", lambda x: x <= 1.1),
            ("lt1.5", lambda x: x < 1.5),
            ("lt2.5", lambda x: x < 2.5),
        )
    }
    jct = [np.mean([j.jct for j in run.jobs if j.jct is not None]) for run in static]
    jct_dyn = [
        np.mean([j.jct for j in ila72_run("ila", sd, quick).jobs if j.jct is not None])
        for sd in seeds
    ]
    why = (
        " With the static threshold alone (no dynamic H_d, §5.5's H = 1) ILA's maps run "
        f"≤1.1x {fmt(fr['le1.1'], 100)} %, <1.5x {fmt(fr['lt1.5'], 100)} %, <2.5x "
        f"{fmt(fr['lt2.5'], 100)} % at a mean JCT of {fmt(jct)} s (dynamic: "
        f"{fmt(jct_dyn)} s): Algorithm 1's dynamic threshold, which raises H_d to the "
        "predicted slowdown of each task it admits once a server has had two idle slots "
        "for 20 s, admits the tasks that miss the paper's distribution."
    )
    # can the state IASM sees at launch tell which of a job's maps will be slow?
    # (within each application: which job it is, the task demand tells)
    ila_cls = registry.make("ila")
    live = [
        ila_cls.state_r2(run.observations)
        for run in (ila72_run("ila", sd, quick) for sd in seeds)
        if run.observations is not None
    ]
    kw = {"n_combos": QUICK_COMBOS} if quick else {}
    offline = ila_cls.state_r2(
        None, load_scenario("ila72", QUICK_OVERRIDES if quick else None), **kw
    )
    why += (
        " Within an application, the server's state at launch (N_info, what IASM sees) "
        f"explains R² {fmt(live, digits=2)} of the slowdowns of ILA's own maps (a "
        "leave-one-out 5-nearest-neighbour mean, ILA's online observations), against "
        f"{offline:.2f} on the offline training set's one server, where the background "
        "load is held for the probe's whole run: on the cluster a map's slowdown turns "
        "mostly on load that arrives after its launch or from other servers, which that "
        "state does not show."
    )
    return why


@claim(
    paper="ila",
    key="ila-fig8-ila",
    setup=ila_setup.ila72_setup,
    where="Fig. 8 (§5.2)",
    what="task completion time / node-local interference-free, ILA and IAO",
    paper_value="ILA: 70 % no slowdown, 90 % < 1.5x, 99 % < 2.5x; IAO: 83 % < 2x, 99 % < 10x",
    default_seeds=4,
)
def ila_fig8_ila(seeds: list[int], out: Path, quick: bool = False) -> Result:
    def frac(s, f):
        return [
            float(
                np.mean(f(np.array([r.duration / r.alone for r in ila72_run(s, sd, quick).maps])))
            )
            for sd in seeds
        ]

    ila = {
        "le1.1": frac("ila", lambda x: x <= 1.1),
        "lt1.5": frac("ila", lambda x: x < 1.5),
        "lt2.5": frac("ila", lambda x: x < 2.5),
    }
    iao = {"lt2": frac("iao", lambda x: x < 2), "lt10": frac("iao", lambda x: x < 10)}
    fair = {"le1.1": frac("fair", lambda x: x <= 1.1), "gt2": frac("fair", lambda x: x > 2)}
    ila_gt2 = frac("ila", lambda x: x > 2)
    paper = {"le1.1": 0.70, "lt1.5": 0.90, "lt2.5": 0.99}
    ok = all(abs(ci(ila[k])[0] - v) <= 0.10 for k, v in paper.items())
    better = ci(ila["le1.1"])[0] > ci(fair["le1.1"])[0] and ci(ila_gt2)[0] < ci(fair["gt2"])[0]
    verdict = "reproduced" if ok and better else ("same direction" if better else "not reproduced")
    ours = (
        f"ILA ≤1.1x {fmt(ila['le1.1'], 100)} %, <1.5x {fmt(ila['lt1.5'], 100)} %, "
        f"<2.5x {fmt(ila['lt2.5'], 100)} %; IAO <2x {fmt(iao['lt2'], 100)} %, "
        f"<10x {fmt(iao['lt10'], 100)} %; PureFair ≤1.1x {fmt(fair['le1.1'], 100)} %"
    )
    why = (
        "Criterion: ILA's fractions of maps at ≤1.1x / <1.5x / <2.5x of their node-local "
        "interference-free time within ±10 points of 70 / 90 / 99 %, and ILA above PureFair "
        "at ≤1.1x and below it at >2x; 'same direction' if only the latter. Maps only, as "
        f"the ila-fig8 row. ILA >2x {fmt(ila_gt2, 100)} % vs PureFair {fmt(fair['gt2'], 100)} %."
    )
    if not ok:
        why += _fig8_ila_gaps(seeds, quick)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for s in ("ila", "iao", "fair", "lao"):
        x = np.sort(
            np.concatenate(
                [[r.duration / r.alone for r in ila72_run(s, sd, quick).maps] for sd in seeds]
            )
        )
        ax.plot(x, np.arange(1, len(x) + 1) / len(x), label=LABEL[s])
    ax.set_xscale("log")
    ax.set_xlabel("map time / node-local interference-free time")
    ax.set_ylabel("CDF")
    ax.set_title(f"ILA Fig. 8 on ila72 ({len(seeds)} seeds)", fontsize=9)
    ax.legend(fontsize=8)
    path = save_pyplot(fig, out, "ila-fig8-ila")
    return Result(ours, verdict, why, path, {"ila": ila, "iao": iao, "fair": fair})
