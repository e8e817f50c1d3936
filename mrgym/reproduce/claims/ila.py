"""Claims of the ILA paper (interference- and locality-aware scheduling) and the classic
baselines' facts, measured on the model as it is.

Every experiment runs the public API (``load_scenario``, ``run_sim``,
``runner.build_simulation``); the ila72 runs are shared between Fig. 7 and Fig. 8 through a
small per-process cache of the per-map records they need.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import mrgym
from mrgym import registry
from mrgym.reproduce import ila_setup
from mrgym.reproduce.claims import Result, claim
from mrgym.reproduce.ila_runs import ila72_maps, ila72_run, table1_scenario
from mrgym.reproduce.stats import ci, fmt, pyplot, save_pyplot

ILA_SCHEDULERS = ("fair", "delay", "late", "capacity")  # ILA §5.1: PureFair, Delay, LATE, Capacity
LABEL = {"fair": "PureFair", "delay": "Delay", "late": "LATE", "capacity": "Capacity"}


# --- ILA Fig. 8: task slowdown CDF ------------------------------------------------------

PAPER_FIG8 = {"le1.1": 0.15, "gt2": 0.60, "gt10": 0.10}


def _fig8_fractions(
    seeds: list[int], scheds: tuple[str, ...], quick: bool = False
) -> tuple[dict, dict, dict]:
    """Per scheduler of ``scheds``: the per-seed fractions of maps at ≤1.1x, >2x, >10x of
    their alone time (all maps, and >2x / >10x of the I/O-bound ones) and the pooled
    slowdowns."""
    fr: dict[str, dict[str, list[float]]] = {s: {k: [] for k in PAPER_FIG8} for s in scheds}
    pooled: dict[str, list[float]] = {s: [] for s in scheds}
    io_fr: dict[str, dict[str, list[float]]] = {s: {"gt2": [], "gt10": []} for s in scheds}
    for s in scheds:
        for seed in seeds:
            sd = np.array([r.duration / r.alone for r in ila72_maps(s, seed, quick)])
            fr[s]["le1.1"].append(float(np.mean(sd <= 1.1)))
            fr[s]["gt2"].append(float(np.mean(sd > 2)))
            fr[s]["gt10"].append(float(np.mean(sd > 10)))
            pooled[s].extend(sd.tolist())
            io = np.array([r.duration / r.alone for r in ila72_maps(s, seed, quick) if r.io_bound])
            io_fr[s]["gt2"].append(float(np.mean(io > 2)))
            io_fr[s]["gt10"].append(float(np.mean(io > 10)))
    return fr, io_fr, pooled


FIG8_TOL = {"le1.1": 0.10, "gt2": 0.15, "gt10": 0.07}
# docs/calibration.md: PureFair's fractions are the virtual-interference fit's target
# (ila-fig8-purefair, calibration); the other three are validation (ila-fig8)
FIG8_CALIBRATION = ("fair",)
FIG8_VALIDATION = ("delay", "late", "capacity")


def fig8_verdict(means: dict[str, dict[str, float]]) -> str:
    """Fig. 8's verdict on the mean fractions per scheduler (``means[s]["le1.1" | "gt2" |
    "gt10"]``): each within :data:`FIG8_TOL` of the paper's, or each within a factor 2."""
    ok = all(abs(means[s][k] - v) <= FIG8_TOL[k] for s in means for k, v in PAPER_FIG8.items())
    # same direction: a heavy tail exists but within 2x of the paper's fractions
    near = all(0.5 * v <= means[s][k] <= 2.0 * v for s in means for k, v in PAPER_FIG8.items())
    return "reproduced" if ok else ("same direction" if near else "not reproduced")


def _fig8_tail(seeds: list[int], fr: dict, quick: bool = False) -> str:
    """Why the fractions miss the paper's: each class of maps' share and slowdowns."""
    scheds = tuple(fr)
    f10 = ci([x for s in scheds for x in fr[s]["gt10"]])[0]
    f2 = ci([x for s in scheds for x in fr[s]["gt2"]])[0]
    le = ci([x for s in scheds for x in fr[s]["le1.1"]])[0]
    recs = [r for s in scheds for seed in seeds for r in ila72_maps(s, seed, quick)]
    classes = (
        (
            "the map-only generators (TeraGen, RandomWriter)",
            lambda r: not r.has_input and r.io_bound,
        ),
        ("I/O-bound maps with input", lambda r: r.has_input and r.io_bound),
        ("CPU-bound maps", lambda r: not r.io_bound),
    )
    over = "PureFair" if scheds == FIG8_CALIBRATION else f"the {len(scheds)} schedulers"
    parts = []
    for name, sel in classes:
        sd = np.array([r.duration / r.alone for r in recs if sel(r)])
        if sd.size:
            parts.append(
                f"{name} ({sd.size / len(recs) * 100:.0f} % of maps) run a median "
                f"{np.median(sd):.2f}x, {np.mean(sd <= 1.1) * 100:.0f} % ≤1.1x, "
                f"{np.mean(sd > 2) * 100:.0f} % >2x, {np.mean(sd > 10) * 100:.0f} % >10x"
            )
    return (
        f" Measured over {over}: {le * 100:.0f} % ≤1.1x, {f2 * 100:.0f} % >2x, "
        f"{f10 * 100:.0f} % >10x (paper 15/60/10). By class: " + "; ".join(parts) + "."
    )


def _fig8_plot(seeds: list[int], pooled: dict, out: Path, key: str) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for s in pooled:
        x = np.sort(pooled[s])
        ax.plot(x, np.arange(1, x.size + 1) / x.size, label=f"{LABEL[s]} (ours)")
    ax.plot(
        [1.1, 2, 10], [0.15, 0.40, 0.90], "k*", ms=12, label="paper (15 % ≤1x, 60 % >2x, 10 % >10x)"
    )
    for v in (1.1, 2, 10):
        ax.axvline(v, color="grey", lw=0.6, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("map completion time / node-local interference-free time")
    ax.set_ylabel("CDF of tasks")
    ax.set_title(f"ILA Fig. 8 on ila72: task slowdown ({len(seeds)} seeds, maps)")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    return save_pyplot(fig, out, key)


FIG8_WHY = (
    "Criterion: per scheduler, fractions of successful maps at ≤1.1x / >2x / >10x of their "
    "node-local interference-free time (analytic: the profile, the attempt's noise, the "
    "host's disk, CPU and virtualization factors and an idle node's empty write-back "
    "cache; equal to a one-map simulation) within ±10 / ±15 / ±7 points of 15 / 60 / "
    "10 %; 'same direction' if all within a factor 2. Maps only: the paper counts 2 440 "
    "tasks, fewer than Table 4's 2 690 maps, so its population is not all maps, and a "
    "reduce has no well-defined alone time here."
)


def _fig8(
    seeds: list[int], out: Path, key: str, scheds: tuple[str, ...], quick: bool = False
) -> Result:
    """Fig. 8's criterion (:func:`fig8_verdict`) on the schedulers ``scheds``."""
    fr, io_fr, pooled = _fig8_fractions(seeds, scheds, quick)
    verdict = fig8_verdict({s: {k: ci(v)[0] for k, v in fr[s].items()} for s in fr})
    ours = "; ".join(
        f"{LABEL[s]} ≤1.1x {fmt(fr[s]['le1.1'], 100)} %, >2x {fmt(fr[s]['gt2'], 100)} %, "
        f">10x {fmt(fr[s]['gt10'], 100)} %"
        for s in scheds
    )
    why = FIG8_WHY + (_fig8_tail(seeds, fr, quick) if verdict != "reproduced" else "")
    path = _fig8_plot(seeds, pooled, out, key)
    return Result(ours, verdict, why, path, {"all_maps": fr, "io_bound_maps": io_fr})


@claim(
    paper="ila",
    key="ila-fig8-purefair",
    setup=ila_setup.ila72_setup,
    where="Fig. 8 (§5.2)",
    what="task completion time / node-local interference-free, PureFair (calibration target)",
    paper_value="PureFair: ~15 % of tasks without slowdown, up to ~60 % > 2x, ~10 % > 10x",
    default_seeds=4,
)
def ila_fig8_purefair(seeds: list[int], out: Path, quick: bool = False) -> Result:
    return _fig8(seeds, out, "ila-fig8-purefair", FIG8_CALIBRATION, quick)


@claim(
    paper="ila",
    key="ila-fig8",
    setup=ila_setup.ila72_setup,
    where="Fig. 8 (§5.2)",
    what="task completion time / node-local interference-free, Delay, LATE and Capacity",
    paper_value="Delay/LATE/Capacity: ~15 % of tasks without slowdown, up to ~60 % > 2x, "
    "~10 % > 10x",
    default_seeds=4,
)
def ila_fig8(seeds: list[int], out: Path, quick: bool = False) -> Result:
    return _fig8(seeds, out, "ila-fig8", FIG8_VALIDATION, quick)


# --- ILA Fig. 7: locality of I/O-bound jobs by scheduler --------------------------------

PAPER_FIG7 = {"fair": 0.55, "late": 0.55, "capacity": 0.55, "delay": 0.75}
# Fig. 7 shows one bar per job and scheduler, and §5.2 reads the I/O-bound group's number as
# those bars' average: "Figure 7 shows the percentage of tasks in the jobs with local data
# access ... Jobs are demonstrated in two groups", "for the small job TeraSort(2), the
# schedulers which are unaware of the server locality could only achieve less than 35 %
# local access", "for I/O-bound jobs, ILA brought the average local data access up to
# 90 %". So each job's local share counts once (a job-weighted mean), not each task.
FIG7_READING = (
    "Aggregation: per job, then the mean over the I/O-bound jobs, as Fig. 7 draws a bar per "
    'job and §5.2 averages them ("the percentage of tasks in the jobs with local data '
    'access ... Jobs are demonstrated in two groups"; "for the small job TeraSort(2) ... '
    'less than 35 % local access"; "ILA brought the average local data access up to '
    '90 %").'
)


def io_job_locality(maps: list) -> tuple[float, float]:
    """(per-job mean, per-task pooled) node+server local share of the maps of I/O-bound
    jobs with input (TeraGen/RWrite have none and are not in Fig. 7)."""
    rs = [r for r in maps if r.io_bound and r.has_input]
    jobs: dict[int, list[bool]] = {}
    for r in rs:
        jobs.setdefault(r.job, []).append(r.locality in ("node", "server"))
    per_job = float(np.mean([np.mean(v) for v in jobs.values()]))
    return per_job, float(np.mean([r.locality in ("node", "server") for r in rs]))


@claim(
    paper="ila",
    key="ila-fig7",
    setup=ila_setup.ila72_setup,
    where="Fig. 7 (§5.2)",
    what="node+server locality of I/O-bound jobs' maps by scheduler (mean over jobs)",
    paper_value="PureFair/LATE/Capacity ~55 %, Delay ~75 % (ILA 90 %: +65 % / +20 %)",
    default_seeds=4,
)
def ila_fig7(seeds: list[int], out: Path, quick: bool = False) -> Result:
    loc: dict[str, list[float]] = {s: [] for s in PAPER_FIG7}
    pooled: dict[str, list[float]] = {s: [] for s in PAPER_FIG7}
    for s in PAPER_FIG7:
        for seed in seeds:
            job_mean, task_mean = io_job_locality(ila72_maps(s, seed, quick))
            loc[s].append(job_mean)
            pooled[s].append(task_mean)
    m = {s: ci(loc[s])[0] for s in loc}
    greedy = ("fair", "late", "capacity")
    order = all(m["delay"] > m[s] for s in greedy)
    within = all(abs(m[s] - PAPER_FIG7[s]) <= 0.15 for s in PAPER_FIG7)
    verdict = (
        "reproduced" if order and within else ("same direction" if order else "not reproduced")
    )
    ours = ", ".join(f"{LABEL[s]} {fmt(loc[s], 100)} %" for s in PAPER_FIG7)
    why = (
        "Criterion: maps of I/O-bound jobs with input (TeraGen/RWrite excluded, as in the "
        "paper) launched node- or server-local; Delay above each greedy scheduler, and every "
        f"scheduler within ±15 points of the paper. {FIG7_READING} Pooled over tasks "
        "instead, where the large I/O jobs (WordCount 250 maps, Grep 2 x 120) weigh most: "
        + ", ".join(f"{LABEL[s]} {ci(pooled[s])[0] * 100:.0f} %" for s in PAPER_FIG7)
        + "."
    )
    if not within:
        off = max(abs(m[s] - PAPER_FIG7[s]) for s in PAPER_FIG7)
        why += f" Magnitudes off by up to {off * 100:.0f} points."
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.8))
    xs = np.arange(len(PAPER_FIG7))
    means = [m[s] * 100 for s in PAPER_FIG7]
    errs = [ci(loc[s])[1] * 100 for s in PAPER_FIG7]
    ax.bar(xs - 0.2, means, 0.4, yerr=errs, capsize=3, label="ours (mean ± 95 % CI)")
    ax.bar(xs + 0.2, [PAPER_FIG7[s] * 100 for s in PAPER_FIG7], 0.4, label="paper", color="grey")
    ax.set_xticks(xs, [LABEL[s] for s in PAPER_FIG7])
    ax.set_ylabel("node + server local maps (%)")
    ax.set_ylim(0, 105)
    ax.set_title(f"ILA Fig. 7 on ila72: I/O-bound jobs ({len(seeds)} seeds)")
    ax.legend(fontsize=8, loc="lower right")
    path = save_pyplot(fig, out, "ila-fig7")
    return Result(ours, verdict, why, path, {"locality_per_job": loc, "locality_pooled": pooled})


# --- ILA Table 1: virtual vs physical cluster under delay scheduling --------------------


def _table1_plot(res: dict[str, dict[str, list[float]]], n_seeds: int, out: Path) -> Path:
    """Table 1's two panels: node locality and the TeraSort JCT, ours against the paper's."""
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.6))
    xs = np.arange(2)
    ours_node = [ci(res[k]["node"])[0] * 100 for k in ("physical", "virtual")]
    err_node = [ci(res[k]["node"])[1] * 100 for k in ("physical", "virtual")]
    a1.bar(xs - 0.2, ours_node, 0.4, yerr=err_node, capsize=3, label="ours")
    a1.bar(xs + 0.2, [98.4, 72.3], 0.4, color="grey", label="paper")
    a1.set_xticks(xs, ["physical", "virtual"])
    a1.set_ylabel("node-local maps (%)")
    a1.set_ylim(0, 105)
    a1.legend(fontsize=8, loc="lower left")
    ours_jct = [ci(res[k]["jct"])[0] for k in ("physical", "virtual")]
    err_jct = [ci(res[k]["jct"])[1] for k in ("physical", "virtual")]
    a2.bar(xs - 0.2, ours_jct, 0.4, yerr=err_jct, capsize=3, label="ours")
    a2.bar(xs + 0.2, [170, 342], 0.4, color="grey", label="paper")
    a2.set_xticks(xs, ["physical", "virtual"])
    a2.set_ylabel("TeraSort JCT (s)")
    a2.legend(fontsize=8, loc="upper left")
    fig.suptitle(f"ILA Table 1: 120-map TeraSort, delay scheduling 5 s/5 s ({n_seeds} seeds)")
    return save_pyplot(fig, out, "ila-table1")


@claim(
    paper="ila",
    key="ila-table1",
    setup=ila_setup.table1_setup,
    where="Table 1 (§2.2)",
    what="delay scheduling (5 s node / 5 s rack waits): virtual vs physical cluster",
    paper_value="node locality 98.4 % physical -> 72.3 % virtual (+2 % server); "
    "JCT 170 s -> 342 s (2.0x)",
    default_seeds=5,
)
def ila_table1(seeds: list[int], out: Path) -> Result:
    res: dict[str, dict[str, list[float]]] = {}
    greedy_node: list[float] = []
    for name, virtual in (("physical", False), ("virtual", True)):
        sc = mrgym.load_scenario(table1_scenario(virtual))
        d = res[name] = {"node": [], "server": [], "rack": [], "off_rack": [], "jct": []}
        for seed in seeds:
            r = mrgym.run_sim(sc, registry.make("delay", node_wait_s=5.0, rack_wait_s=5.0), seed)
            for k in ("node", "server", "rack", "off_rack"):
                d[k].append(r.metrics["map_locality"][k])
            d["jct"].append(r.metrics["mean_jct_s"])
        if virtual:
            # the same cluster with no wait at all: how local a free slot's best map is
            # whatever the delay policy does
            greedy = [
                mrgym.run_sim(sc, registry.make("delay", node_wait_s=0.0, rack_wait_s=0.0), seed)
                for seed in seeds
            ]
            greedy_node = [g.metrics["map_locality"]["node"] for g in greedy]
    ratio = [v / p for v, p in zip(res["virtual"]["jct"], res["physical"]["jct"])]
    drop = [p - v for p, v in zip(res["physical"]["node"], res["virtual"]["node"])]
    md, mr = ci(drop)[0], ci(ratio)[0]
    ok = abs(md - 0.261) <= 0.10 and 1.5 <= mr <= 2.5
    same = md >= 0.05 and mr > 1.0
    verdict = "reproduced" if ok else ("same direction" if same else "not reproduced")
    ours = (
        f"node locality physical {fmt(res['physical']['node'], 100, 1)} % -> virtual "
        f"{fmt(res['virtual']['node'], 100, 1)} % (server {fmt(res['virtual']['server'], 100, 1)} %); "
        f"JCT {fmt(res['physical']['jct'])} s -> {fmt(res['virtual']['jct'])} s "
        f"(ratio {fmt(ratio, 1, 2)}x)"
    )
    why = (
        "Criterion: node-locality drop physical -> virtual within ±10 points of the paper's "
        "26.1 and JCT ratio in [1.5, 2.5]; 'same direction' if the drop is ≥ 5 points and the "
        "virtual job is slower. Setup (each value's source in the setup table): §2.2's VMs "
        "(3 vCPUs, 3 map + 1 reduce slots) on §5.1's servers, delay scheduling with 5 s / "
        "5 s waits (§4.2), Hadoop 0.20.205's defaults (§5.1): 3 s heartbeats, no "
        "out-of-band heartbeat, speculation on, no topology script (replicas and task choice "
        "ignore the racks). Off-rack share of the virtual cluster's maps: "
        f"{ci(res['virtual']['off_rack'])[0] * 100:.1f} % (paper 7.2 %)."
    )
    if not ok:
        why += (
            f" Measured: drop {md * 100:.1f} points, JCT ratio {mr:.3f}x "
            f"({'within' if 1.5 <= mr <= 2.5 else 'outside'} the paper's band)."
        )
        if abs(md - 0.261) > 0.10:
            spec = table1_scenario(True)
            (job,) = spec["workload"]["jobs"]
            (group,) = spec["cluster"]["hosts"]
            workers = group["count"] * group["vms_per_host"]
            blocks = f"{job['maps']} blocks x {spec['hdfs']['replication']} replicas on {workers}"
            why += (
                f" Delay scheduling keeps {ci(res['virtual']['node'])[0] * 100:.1f} % of the "
                "virtual cluster's maps node-local: a 5 s wait nearly always finds a local "
                "slot. With no wait at all (greedy) it is "
                f"{ci(greedy_node)[0] * 100:.1f} %: {blocks} "
                "workers leave a local block for most free slots until the job's last "
                "wave, whatever the delay policy; the paper's 72.3 % needs slots freed far "
                "more unevenly than the model's interference frees them."
            )
    path = _table1_plot(res, len(seeds), out)
    data = {**res, "jct_ratio": ratio, "greedy_virtual_node": greedy_node}
    return Result(ours, verdict, why, path, data)


# --- classic baselines on ila72 ---------------------------------------------------------


# lsap Fig. 8's rand-sched against dl-sched is claim lsap-fig8, on lsap's own cluster and
# input-sink job (§IV.D-E), not on ILA's cluster and mix
CLASSIC_ALL = ("fifo", "fair", "delay", "late", "capacity")


def _classic_runs(seeds: list[int], quick: bool = False) -> tuple[dict, dict, dict]:
    """Per policy of :data:`CLASSIC_ALL`, per seed: mean JCT, small-job mean JCT and
    node+server local share of maps on ila72."""
    jct: dict[str, list[float]] = {s: [] for s in CLASSIC_ALL}
    small: dict[str, list[float]] = {s: [] for s in CLASSIC_ALL}
    node: dict[str, list[float]] = {s: [] for s in CLASSIC_ALL}
    for seed in seeds:
        for s in CLASSIC_ALL:
            # cached: ILA's own claims run Fair, Delay, LATE and Capacity on the same seeds
            m = ila72_run(s, seed, quick).metrics
            jct[s].append(m["mean_jct_s"])
            small[s].append(m["mean_jct_by_class_s"]["small"])
            node[s].append(m["map_locality"]["node"] + m["map_locality"]["server"])
    return jct, small, node


def classic_checks(mean: dict[str, dict[str, float]]) -> dict[str, bool]:
    """The orderings the papers state, on the means (``mean["jct" | "small" | "loc"][policy]``)."""
    return {
        "delay more local than fair": mean["loc"]["delay"] > mean["loc"]["fair"],
        "FIFO small-job JCT > 1.5x Fair": mean["small"]["fifo"] > 1.5 * mean["small"]["fair"],
        "fair/delay/late/capacity mean JCT within ±25 % of Fair": all(
            abs(mean["jct"][s] / mean["jct"]["fair"] - 1) <= 0.25 for s in ILA_SCHEDULERS
        ),
    }


def checks_verdict(checks: dict[str, bool]) -> str:
    """All checks: reproduced; all but one: same direction."""
    n_ok = sum(checks.values())
    if n_ok == len(checks):
        return "reproduced"
    return "same direction" if n_ok >= len(checks) - 1 else "not reproduced"


def _classic_plot(seeds: list[int], jct: dict, small: dict, node: dict, out: Path) -> Path:
    plt = pyplot()
    fig, axs = plt.subplots(1, 3, figsize=(12, 3.8))
    labels = list(CLASSIC_ALL)
    for ax, (d, ttl, sc) in zip(
        axs,
        (
            (node, "node+server local maps (%)", 100),
            (jct, "mean JCT (s)", 1),
            (small, "small-job mean JCT (s)", 1),
        ),
    ):
        ax.bar(
            range(len(CLASSIC_ALL)),
            [ci(d[s])[0] * sc for s in CLASSIC_ALL],
            yerr=[ci(d[s])[1] * sc for s in CLASSIC_ALL],
            capsize=2,
        )
        ax.set_xticks(range(len(CLASSIC_ALL)), labels, rotation=45, ha="right", fontsize=8)
        ax.set_title(ttl, fontsize=10)
    fig.suptitle(f"Classic baselines on ila72 ({len(seeds)} seeds, mean ± 95 % CI)")
    return save_pyplot(fig, out, "ila-classic")


@claim(
    paper="ila",
    key="ila-classic",
    setup=ila_setup.ila72_setup,
    where="§5.2 Fig. 5-7; delay scheduling [26]",
    what="classic baselines on ila72: Delay > Fair locality, FIFO blocks small jobs, "
    "interference-oblivious schedulers perform alike",
    paper_value="Delay 75 % vs PureFair 55 % local (Fig. 7); oblivious schedulers 'had similar "
    "performance' (Fig. 5-6)",
    default_seeds=3,
)
def ila_classic(seeds: list[int], out: Path, quick: bool = False) -> Result:
    jct, small, node = _classic_runs(seeds, quick)
    mean = {
        k: {s: ci(v[s])[0] for s in v} for k, v in (("jct", jct), ("small", small), ("loc", node))
    }
    checks = classic_checks(mean)
    verdict = checks_verdict(checks)
    fifo_small = [f / g for f, g in zip(small["fifo"], small["fair"])]
    vs_fair = {s: [a / b for a, b in zip(jct[s], jct["fair"])] for s in ILA_SCHEDULERS[1:]}
    ours = (
        f"local (node+server) Delay {fmt(node['delay'], 100)} % vs Fair {fmt(node['fair'], 100)} %; "
        f"small-job JCT FIFO/Fair {fmt(fifo_small, 1, 2)}x; mean JCT vs Fair (per-seed ratio) "
        + ", ".join(f"{LABEL[s]} {fmt(vs_fair[s], 1, 2)}x" for s in ILA_SCHEDULERS[1:])
    )
    why = (
        "Criteria (all must hold for 'reproduced', all but one for 'same direction'): "
        + "; ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in checks.items())
    )
    why += (
        ". Per-seed ratios to Fair of the same seed (common random numbers). Directions "
        "only: the papers give these as orderings (ILA Fig. 5-7); magnitudes of Fig. 7 are "
        "the ila-fig7 row, and lsap Fig. 8's rand-sched (an input-sink job on lsap's own "
        "cluster) is the lsap-fig8 row."
    )
    path = _classic_plot(seeds, jct, small, node, out)
    data = {"jct": jct, "small_jct": small, "local": node, **{"checks": checks}}
    return Result(ours, verdict, why, path, data)
