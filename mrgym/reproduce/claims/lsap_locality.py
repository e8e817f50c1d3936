"""Claims of the lsap paper's §IV.C (Fig. 6): how the goodness of data locality (§III.A: the
share of map tasks that run node-local) varies with the number of tasks, slots per node,
replication factor, number of nodes and ratio of idle slots (Table III).

The model is the paper's (§III.B): replicas on C distinct uniformly random nodes, IS = N·S·I
idle slots uniformly random among all N·S slots, I constant in time ("dynamic
equilibrium").  When T > IS the tasks run in waves (§IV.C: "tasks need to be scheduled in
multiple waves ... for each wave the scheduler can cherry-pick from remaining tasks"): each
wave draws IS fresh random idle slots for the tasks left; the data placement stays.  Per wave:

* **dl-sched** in the paper's snapshot order (as ``lsap.snapshot_trial``): the idle slots in
  random (heartbeat) order each take the first unscheduled task with a replica on their
  node (Hadoop's task-list order); leftover slots then take leftover tasks non-locally.
* **lsap-sched**: the wave's 0/1 LSAP optimum = a maximum-cardinality matching of idle slots
  to local tasks (Hopcroft-Karp: far cheaper than ``linear_sum_assignment`` on 200 x 8192
  matrices; tests/test_lsap_locality.py checks that they agree).

Fig. 6 does not name its scheduler; §III.B makes dl-sched "the target of our analysis", so
the verdicts judge dl-sched.  Simulator lines (Figs. 6(c), (f)): ``run_sim`` with
``registry.make("dl-sched" / "lsap-sched")`` on 1/10 of Table III (N = 100, T = 30: IS/T as
the paper's), from ``lsap-snapshot``: a background job holds N·S - IS slots, then the study
job arrives; only points with T ≤ IS (left-over tasks would wait for the background to end
and find an empty cluster).  They show how Hadoop's heartbeats place tasks (``SIM_WHY``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

import mrgym
from mrgym import registry
from mrgym.reproduce.claims import Result, claim
from mrgym.reproduce.claims.lsap import snapshot_setup
from mrgym.reproduce.stats import ci, fmt, pyplot, save_pyplot

TABLE3 = {"n": 1000, "s": 2, "t": 300, "idle": 0.1, "c": 3}  # Table III's default values
SNAPS = 16  # random placements per seed and point (the paper does not say how many it ran)
TASKS = tuple(2**k for k in range(14))  # Fig. 6(a)/(b): 2^0 .. 2^13
SLOTS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32)  # Fig. 6(c): [1, 32] step 1
REPL = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20)  # Fig. 6(d): [1, 20] step 1
NODES = (300, 500, 700, 900, 1100, 1300, 1400, 1500, 1600, 1700, 2000, 2500, 3000, 4000, 5000)
IDLE = (0.01, 0.03, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.8, 1.0)
SIM_SCALE = 10  # the simulator lines run Table III's N and T divided by this
SIM_SLOTS = (3, 4, 5, 8, 10, 16)  # S with IS = 10·S ≥ T = 30 at N = 100, I = 0.1
SIM_IDLE = (0.15, 0.2, 0.3, 0.4, 0.6, 0.8)  # I with IS = 200·I ≥ T = 30 at N = 100, S = 2


# -- the model -------------------------------------------------------------------------------
def replicas(rng: np.random.Generator, n: int, c: int, t: int) -> np.ndarray:
    """T x C replica nodes, C distinct per task (rows with a repeat are redrawn: vectorised
    sampling without replacement, as HDFS never puts two replicas on one node)."""
    reps = rng.integers(n, size=(t, c))
    while True:
        s = np.sort(reps, axis=1)
        bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1)) if c > 1 else []
        if not len(bad):
            return reps
        reps[bad] = rng.integers(n, size=(len(bad), c))


def wave(rows: np.ndarray, cols: np.ndarray, idle_n: int, t: int, greedy: bool) -> np.ndarray:
    """Tasks made local in one wave: ``(rows[k], cols[k])`` are the (idle slot, unscheduled
    task) pairs that are collocated, rows in heartbeat order and, within a row, tasks in list
    order.  greedy: dl-sched's pass (each slot its first free local task); else a maximum
    matching (the LSAP optimum for 0/1 costs).  Returns the local tasks' indices."""
    if greedy:
        taken: set[int] = set()
        last = -1
        for r, j in zip(rows.tolist(), cols.tolist()):
            if r != last and j not in taken:  # the slot's first free local task
                taken.add(j)
                last = r
        return np.fromiter(taken, dtype=int, count=len(taken))
    g = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(idle_n, t))
    m = maximum_bipartite_matching(g, perm_type="column")
    return m[m >= 0]


def goodness(rng: np.random.Generator, n: int, s: int, idle: float, t: int, c: int):
    """(dl-sched, lsap-sched) goodness of data locality of one random placement, in waves of
    IS = round(N·S·I) fresh random idle slots until all T tasks ran."""
    idle_n = max(1, round(n * s * idle))
    reps = replicas(rng, n, c, t)
    flat = reps.ravel()
    order = np.argsort(flat, kind="stable")  # tasks by node, list order within a node
    node_task = order // c
    ptr = np.searchsorted(flat[order], np.arange(n + 1))
    out = []
    for greedy in (True, False):
        left = np.ones(t, dtype=bool)
        local = 0
        while left.any():
            nodes = rng.choice(n * s, idle_n, replace=False) // s  # random order too
            lo, ln = ptr[nodes], ptr[nodes + 1] - ptr[nodes]
            start = np.repeat(np.cumsum(ln) - ln, ln)
            cand = node_task[np.repeat(lo, ln) + np.arange(ln.sum()) - start]
            row = np.repeat(np.arange(idle_n), ln)
            keep = left[cand]
            done = wave(row[keep], cand[keep], idle_n, t, greedy)
            local += len(done)
            left[done] = False
            left[np.flatnonzero(left)[: idle_n - len(done)]] = False  # non-local fill
        out.append(local / t)
    return out


def sweep(seeds: list[int], xs, params: Callable[[object], dict], salt: int):
    """Per x: lists over seeds of the mean dl-sched and lsap-sched goodness.  Few-task points
    get more placements (one task is local or not: its mean needs many draws)."""
    dl, opt = ({x: [] for x in xs} for _ in range(2))
    for seed in seeds:
        rng = np.random.default_rng([seed, 6, salt])
        for x in xs:
            p = {**TABLE3, **params(x)}
            k = SNAPS * max(1, min(32, 256 // p["t"]))
            a = np.array([goodness(rng, **p) for _ in range(k)])
            dl[x].append(float(a[:, 0].mean()))
            opt[x].append(float(a[:, 1].mean()))
    return dl, opt


def sim_goodness(seeds: list[int], xs, params: Callable[[object], dict]):
    """Simulator line: per x and scheduler, node-local share of the study job's maps."""
    _, _, _, base = snapshot_setup()
    job = next(j["name"] for j in base["workload"]["jobs"] if j["name"] != "background")
    out: dict[str, dict] = {"dl-sched": {x: [] for x in xs}, "lsap-sched": {x: [] for x in xs}}
    for x in xs:
        p = {**TABLE3, "n": TABLE3["n"] // SIM_SCALE, "t": TABLE3["t"] // SIM_SCALE, **params(x)}
        d = copy.deepcopy(base)
        hosts = d["cluster"]["hosts"] = d["cluster"]["hosts"][:1]  # lsap-snapshot has one
        hosts[0]["count"], hosts[0]["vm"]["map_slots"] = p["n"], p["s"]
        d["hdfs"]["replication"] = p["c"]
        idle_n = round(p["n"] * p["s"] * p["idle"])
        for j in d["workload"]["jobs"]:
            j["maps"] = p["n"] * p["s"] - idle_n if j["name"] == "background" else p["t"]
        for seed in seeds:
            for name, line in out.items():
                r = mrgym.run_sim(mrgym.load_scenario(d), registry.make(name), seed)
                jid = next(i for i, nm, *_ in r.jobs if nm == job)
                maps = [t for t in r.task_log if t.job == jid and t.kind == "map"]
                ok = [t.locality == "node" for t in maps if t.outcome == "success"]
                line[x].append(float(np.mean(ok)))
    return out


# -- shared reporting ------------------------------------------------------------------------
def _m(d: dict, xs) -> np.ndarray:
    return np.array([ci(d[x])[0] for x in xs])


def _series(xs, d: dict) -> str:
    return "/".join(f"{v * 100:.0f}" for v in _m(d, xs))


def _verdict(met: bool, direction: bool) -> str:
    return "reproduced" if met else ("same direction" if direction else "not reproduced")


def _rises(v: np.ndarray, tol: float = 0.02) -> bool:
    """Non-decreasing within ``tol`` (sampling noise) from point to point."""
    return bool(all(b >= a - tol for a, b in zip(v, v[1:])))


def _lines(xs, dl: dict, opt: dict, sim: dict | None = None, sim_xs=()) -> list:
    """(xs, values, style, label) of the model's two lines and the simulator's two."""
    out = [
        (list(xs), dl, "b-s", "dl-sched (paper's snapshot order)"),
        (list(xs), opt, "k--o", "lsap-sched (optimum)"),
    ]
    if sim:
        n, t = TABLE3["n"] // SIM_SCALE, TABLE3["t"] // SIM_SCALE
        out.append((list(sim_xs), sim["dl-sched"], "r-^", f"simulator dl-sched (N={n}, T={t})"))
        out.append((list(sim_xs), sim["lsap-sched"], "m:v", "simulator lsap-sched"))
    return out


def _plot(out: Path, key: str, title: str, panels: list, paper: list) -> Path:
    """One row of panels (xlabel, log x?, lines); ``paper``: the paper's numbers (x, y %,
    label) marked on the first panel."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.8), squeeze=False)
    for ax, (xlabel, logx, lines) in zip(axes[0], panels):
        for xs, d, style, label in lines:
            m = np.array([ci(d[x]) for x in xs]) * 100
            ax.errorbar(xs, m[:, 0], yerr=m[:, 1], fmt=style, capsize=2, ms=4, label=label)
        ax.set(xlabel=xlabel, ylabel="goodness of data locality (%)", ylim=(0, 102))
        ax.set_xscale("log" if logx else "linear")
        ax.grid(alpha=0.3)
    for i, (x, y, label) in enumerate(paper):  # y None: the paper gives only the x
        lab = label if i == 0 else None
        if y is None:
            axes[0][0].axvline(x, color="k", ls=":", label=lab)
        else:
            axes[0][0].plot([x], [y], "k*", ms=11, label=lab)
    axes[0][0].legend(fontsize=7, loc="best")
    fig.suptitle(title, fontsize=10)
    return save_pyplot(fig, out, key)


def _model() -> str:
    return (
        "Model (§III.B): replicas on C distinct random nodes, IS = N·S·I random idle slots, "
        "waves of fresh idle slots while T > IS; Table III defaults N = 1000, S = 2, T = 300, "
        f"I = 0.1, C = 3; {SNAPS} placements per seed and point (more for T ≤ 128)."
    )


# why the simulator lines stay low (measured: tasks per idle node, lsap-sched's counters)
SIM_WHY = (
    "The simulator lines stay low: (1) a heartbeat fills every free slot of its node, so "
    "the background job leaves IS/S whole nodes idle, not IS random slots; (2) with T < IS "
    "the first idle nodes to heartbeat take all T tasks, each filling its free slots — "
    "dl-sched by design, and lsap-sched too, as its fallback is work-conserving (a slot its "
    "plan left empty takes a reserved task when every pending map is reserved, "
    "baselines/lsap.py), undoing the plan's choice of slots; only at IS = T (every slot "
    "planned) does lsap-sched keep its lead. Cherry-picking slots, Fig. 6's mechanism at "
    "IS > T, needs a scheduler that leaves slots idle. "
)


@claim(
    paper="lsap",
    key="lsap-fig6abh",
    where="Fig. 6(a), (b), (h) (§IV.C)",
    what="goodness of data locality vs number of tasks T = 2^0..2^13 (Table III: IS = 200); "
    "(h) is (b) against IS/T",
    paper_value="falls as T grows, worst at T = 2^7 = 128, then rises quickly with shrinking "
    "increments; > 90 % at T = 40·IS, ~50 % at IS = 200·T",
    default_seeds=3,
)
def lsap_fig6abh(seeds: list[int], out: Path) -> Result:
    dl, opt = sweep(seeds, TASKS, lambda t: {"t": t}, 1)
    v = _m(dl, TASKS)
    k = int(np.argmin(v))
    idle_n = round(TABLE3["n"] * TABLE3["s"] * TABLE3["idle"])
    dip = v[0] > v[k] + 0.01 and v[-1] > v[k] + 0.3
    shrinking = bool((np.diff(np.diff(v[-4:])) < 0).all())  # gains per doubling, T ≥ 1024
    nums = v[-1] >= 0.87 and abs(v[0] - 0.5) <= 0.1
    full = dip and TASKS[k] == 128 and shrinking and nums
    verdict = _verdict(full, dip and 64 <= TASKS[k] <= 256)
    ours = (
        f"dl-sched {_series(TASKS, dl)} % (T = 2^0..2^13): worst {fmt(dl[TASKS[k]], 100, 1)} % "
        f"at T = {TASKS[k]} (IS/T = {idle_n / TASKS[k]:.2f}), {fmt(dl[8192], 100, 1)} % at "
        f"T = 8192 = {8192 / idle_n:.0f}·IS, {fmt(dl[1], 100, 1)} % at T = 1 (IS = "
        f"{idle_n}·T); lsap-sched {_series(TASKS, opt)} %"
    )
    why = (
        "Criterion: dl-sched's curve dips (T = 1 above the minimum by > 1 point, T = 8192 "
        "above it by > 30), its minimum is at T = 128, the gains per doubling shrink over T = "
        "1024..8192, ≥ 87 % at T = 8192 ≈ 41·IS (paper: > 90 % at 40·IS; 3 points of "
        "sampling tolerance) and 40-60 % at T = 1 (IS = 200·T; paper: ~50 %); 'same "
        "direction' for the dip with its minimum at T = 64..256. The dip is shallow: at T ≤ "
        "IS the scheduler cherry-picks slots and only tasks competing for the same idle node "
        "lose locality, so it bottoms out near T = IS = 200; T = 128 (IS/T = 1.56) below 256 "
        "(0.78) is the paper's asymmetry (faster regain once T > IS). " + _model()
    )
    ratio = [idle_n / t for t in TASKS]
    hdl, hopt = ({r: d[t] for r, t in zip(ratio, TASKS)} for d in (dl, opt))
    path = _plot(
        out,
        "lsap-fig6abh",
        f"lsap Fig. 6(a, b, h): locality vs number of tasks ({len(seeds)} seeds)",
        [
            ("tasks T (IS = 200)", True, _lines(TASKS, dl, opt)),
            ("idle slots / tasks, Fig. 6(h)", True, _lines(ratio, hdl, hopt)),
        ],
        [(8192, 90, "paper: > 90 % at T = 40·IS, ~50 % at IS = 200·T"), (1, 50, "")],
    )
    return Result(ours, verdict, why, path, {"T": list(TASKS), "dl-sched": dl, "lsap-sched": opt})


@claim(
    paper="lsap",
    key="lsap-fig6c",
    where="Fig. 6(c) (§IV.C)",
    what="goodness of data locality vs map slots per node S = 1..32 (Table III; I = 0.1 "
    "fixed, so IS = 100·S)",
    paper_value="improves drastically from small S; 50 %, 80 %, 90 % at S = 5, 8, 10",
    default_seeds=3,
)
def lsap_fig6c(seeds: list[int], out: Path) -> Result:
    dl, opt = sweep(seeds, SLOTS, lambda s: {"s": s}, 3)
    sim = sim_goodness(seeds, SIM_SLOTS, lambda s: {"s": s})
    v = _m(dl, SLOTS)
    paper = {5: 0.5, 8: 0.8, 10: 0.9}
    rise = v[-1] > v[0] + 0.3 and _rises(v[SLOTS.index(3) :])
    near = all(abs(v[SLOTS.index(s)] - p) <= 0.1 for s, p in paper.items())
    verdict = _verdict(rise and near, rise)
    ours = (
        "dl-sched "
        + ", ".join(f"{fmt(dl[s], 100, 1)} %" for s in paper)
        + " at S = 5, 8, 10 (lsap-sched "
        + ", ".join(f"{fmt(opt[s], 100, 1)} %" for s in paper)
        + f"); S = 1..32: {_series(SLOTS, dl)} %; simulator (S = {SIM_SLOTS[0]}.."
        f"{SIM_SLOTS[-1]}): dl-sched {_series(SIM_SLOTS, sim['dl-sched'])} %, lsap-sched "
        f"{_series(SIM_SLOTS, sim['lsap-sched'])} %"
    )
    why = (
        "Criterion: dl-sched's goodness rises by > 30 points from S = 1 to 32, never falling "
        "by > 2 points beyond S = 3 (S < 3 is the multi-wave side, IS < T), and lies within "
        "10 points of 50/80/90 % at S = 5/8/10; 'same direction' when only the rise holds. "
        "S = 8 and 10 match; at S = 5 (IS = 500 > T = 300) 1 - 0.9^5 = 41 % of the nodes "
        "hold an idle slot and 1 - 0.59^3 = 79 % of the tasks a replica on one, so the model "
        "gives ~70 %, not 50 % (the paper does not give the detail of its simulation that "
        "would lower it). The simulator even falls as S grows: IS/S = 10 idle nodes for any "
        "S, and at S = 16 two of them take all 30 tasks. " + SIM_WHY + _model()
    )
    path = _plot(
        out,
        "lsap-fig6c",
        f"lsap Fig. 6(c): locality vs slots per node ({len(seeds)} seeds)",
        [("map slots per node S (I = 0.1)", False, _lines(SLOTS, dl, opt, sim, SIM_SLOTS))],
        [(s, p * 100, "paper: 50/80/90 % at S = 5/8/10") for s, p in paper.items()],
    )
    data = {"S": list(SLOTS), "dl-sched": dl, "lsap-sched": opt, "sim": sim}
    return Result(ours, verdict, why, path, data)


@claim(
    paper="lsap",
    key="lsap-fig6d",
    where="Fig. 6(d) (§IV.C)",
    what="goodness of data locality vs replication factor C = 1..20 (Table III)",
    paper_value="rises with C, not linearly: the gain per extra replica shrinks, marginal at "
    "large C",
    default_seeds=3,
)
def lsap_fig6d(seeds: list[int], out: Path) -> Result:
    dl, opt = sweep(seeds, REPL, lambda c: {"c": c}, 4)
    v = _m(dl, REPL)
    at = dict(zip(REPL, v))
    slope = [(at[b] - at[a]) / (b - a) * 100 for a, b in ((1, 5), (5, 10), (10, 20))]
    rise = _rises(v, 0.01) and v[-1] > v[0] + 0.3
    concave = slope[0] > slope[1] > slope[2]
    verdict = _verdict(rise and concave, rise)
    ours = (
        f"dl-sched {_series(REPL, dl)} % (C = {'/'.join(map(str, REPL))}); gain per replica "
        + "/".join(f"{x:.1f}" for x in slope)
        + f" points over C = 1-5/5-10/10-20; lsap-sched {_series(REPL, opt)} %"
    )
    why = (
        "Criterion: dl-sched's goodness never falls by > 1 point as C grows, gains > 30 "
        "points over C = 1..20, and its gain per extra replica shrinks from C = 1-5 to 5-10 "
        "to 10-20 (the paper's non-linear, diminishing benefit; it gives no numbers); 'same "
        "direction' when it only rises. lsap-sched pulls away from dl-sched at large C: the "
        "more replicas, the more a task-by-task pass blocks a better assignment (Fig. 4(b)). "
        + _model()
    )
    path = _plot(
        out,
        "lsap-fig6d",
        f"lsap Fig. 6(d): locality vs replication factor ({len(seeds)} seeds)",
        [("replication factor C", False, _lines(REPL, dl, opt))],
        [],
    )
    return Result(ours, verdict, why, path, {"C": list(REPL), "dl-sched": dl, "lsap-sched": opt})


@claim(
    paper="lsap",
    key="lsap-fig6eg",
    where="Fig. 6(e), (g) (§IV.C)",
    what="goodness of data locality vs number of nodes N = 300..5000 (Table III: T = 300, "
    "IS = 0.2·N); (g) is (e) against IS/T",
    paper_value="falls as nodes are added, lowest around N = 1500 (IS = T), rises beyond",
    default_seeds=3,
)
def lsap_fig6eg(seeds: list[int], out: Path) -> Result:
    dl, opt = sweep(seeds, NODES, lambda n: {"n": n}, 5)
    v = _m(dl, NODES)
    k = int(np.argmin(v))
    ratio = [n * TABLE3["s"] * TABLE3["idle"] / TABLE3["t"] for n in NODES]
    falls = v[0] > v[k] + 0.05 and _rises(v[k::-1])  # read from the minimum back to N = 300
    rises = v[-1] > v[k] + 0.03 and _rises(v[k:])
    verdict = _verdict(falls and rises and 1300 <= NODES[k] <= 1700, falls and rises)
    ours = (
        f"dl-sched {_series(NODES, dl)} % (N = {NODES[0]}..{NODES[-1]}): lowest "
        f"{fmt(dl[NODES[k]], 100, 1)} % at N = {NODES[k]} (IS/T = {ratio[k]:.2f}); "
        f"lsap-sched {_series(NODES, opt)} %, lowest at N = "
        f"{NODES[int(np.argmin(_m(opt, NODES)))]}"
    )
    why = (
        "Criterion: dl-sched's goodness falls (> 5 points, never rising by > 2) to a minimum "
        "at N = 1300..1700 (IS/T = 0.87..1.13: the paper's 'around 1500' and Fig. 6(g)'s "
        "worst at IS = T), then rises (> 3 points by N = 5000, never falling by > 2); 'same "
        "direction' for the fall and rise with the minimum elsewhere. The regain beyond the "
        "minimum is slow, as in the paper: more nodes add idle slots but also spread the 300 "
        "tasks' input over more nodes. " + _model()
    )
    hdl, hopt = ({r: d[n] for r, n in zip(ratio, NODES)} for d in (dl, opt))
    path = _plot(
        out,
        "lsap-fig6eg",
        f"lsap Fig. 6(e, g): locality vs number of nodes ({len(seeds)} seeds)",
        [
            ("nodes N (T = 300, S = 2, I = 0.1)", False, _lines(NODES, dl, opt)),
            ("idle slots / tasks, Fig. 6(g)", False, _lines(ratio, hdl, hopt)),
        ],
        [(1500, None, "paper: lowest around N = 1500")],
    )
    return Result(ours, verdict, why, path, {"N": list(NODES), "dl-sched": dl, "lsap-sched": opt})


@claim(
    paper="lsap",
    key="lsap-fig6f",
    where="Fig. 6(f) (§IV.C)",
    what="goodness of data locality vs ratio of idle slots I = 0.01..1 (Table III)",
    paper_value="over 90 % at I ≈ 0.4 (60 % utilisation); ~30 % when most slots are busy",
    default_seeds=3,
)
def lsap_fig6f(seeds: list[int], out: Path) -> Result:
    dl, opt = sweep(seeds, IDLE, lambda i: {"idle": i}, 6)
    sim = sim_goodness(seeds, SIM_IDLE, lambda i: {"idle": i})
    v = _m(dl, IDLE)
    rise = _rises(v) and v[-1] > v[0] + 0.3
    near = v[IDLE.index(0.4)] >= 0.87 and abs(v[0] - 0.3) <= 0.1
    verdict = _verdict(rise and near, rise)
    ours = (
        f"dl-sched {fmt(dl[0.4], 100, 1)} % at I = 0.4 (lsap-sched {fmt(opt[0.4], 100, 1)} %), "
        f"{fmt(dl[IDLE[0]], 100, 1)} % at I = {IDLE[0]}; I = {IDLE[0]}..{IDLE[-1]}: "
        f"{_series(IDLE, dl)} %; simulator (I = {SIM_IDLE[0]}..{SIM_IDLE[-1]}): dl-sched "
        f"{_series(SIM_IDLE, sim['dl-sched'])} %, lsap-sched "
        f"{_series(SIM_IDLE, sim['lsap-sched'])} %"
    )
    why = (
        "Criterion: dl-sched's goodness never falls by > 2 points as I grows, gains > 30 "
        "points over the range, is ≥ 87 % at I = 0.4 (paper: 'over 90 %'; 3 points of "
        "sampling tolerance) and 20-40 % at I = 0.01 (paper: 'around 30 %': 15 waves of 20 "
        "idle slots cherry-picking among the remaining tasks; one wave would give ~60 %); "
        "'same direction' when only the rise holds. lsap-sched is over 90 % at I = 0.4 outright. "
        + SIM_WHY
        + _model()
    )
    path = _plot(
        out,
        "lsap-fig6f",
        f"lsap Fig. 6(f): locality vs ratio of idle slots ({len(seeds)} seeds)",
        [("ratio of idle slots I", False, _lines(IDLE, dl, opt, sim, SIM_IDLE))],
        [(0.4, 90, "paper: > 90 % at I = 0.4, ~30 % at small I"), (0.01, 30, "")],
    )
    data = {"I": list(IDLE), "dl-sched": dl, "lsap-sched": opt, "sim": sim}
    return Result(ours, verdict, why, path, data)
