"""Claims of the lsap paper (data-locality-optimal scheduling): Fig. 4(a), dl-sched vs the
optimal assignment on the ``lsap-snapshot`` setup.

Two definitions of dl-sched's locality are measured and kept apart:

* **snapshot (the paper's)** — §III.B counts locality in one snapshot of IS idle slots: a
  task "achieves data locality" when its input sits on an idle slot, and the number of
  local tasks is the number of *distinct idle slots* holding some task's input ("if the
  input data of multiple tasks are stored on the same node with only one idle slot, only
  one task can be scheduled to the node", the g1/g2 argument behind eqs. 2-4).  That count
  implies every idle slot of the snapshot heartbeats and takes a local task if one is left
  *before* any task is placed non-locally: one pass over the IS idle slots (random order,
  each takes the first unassigned task with a replica on it, Hadoop's task-list order),
  then the leftover tasks fill the leftover slots.  With replication 1 this greedy pass is
  optimal, as the paper notes; with replication 5 it is a maximal, not maximum, matching.
* **heartbeat (Hadoop's, as the simulator runs it)** — ``run_sim("lsap-snapshot",
  "dl-sched", seed)`` with the job's map count set to T: idle slots heartbeat one at a time
  and each takes a task at once (node-local if it has one, else rack, else any), so with
  T < IS the first T slots to heartbeat take all T tasks.

The optimum is scipy's ``linear_sum_assignment`` on the 0/1 cost matrix (0 when a replica of
the task is on the slot's node) of the IS idle slots x T tasks; a rectangular matrix is
the paper's dummy padding (Fig. 3).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

import mrgym
from mrgym import registry
from mrgym.reproduce.claims import Result, claim
from mrgym.reproduce.stats import ci, fmt, pyplot, save_pyplot

TS = (10, 20, 30, 40, 50)
TRIALS_PER_SEED = 200  # snapshot draws per seed and T (the paper ran 10 000 per T)


def snapshot_setup() -> tuple[int, int, int, dict]:
    """N nodes, replication C, IS idle slots (one slot per node) from lsap-snapshot."""
    d = mrgym.load_scenario("lsap-snapshot").model_dump()
    n = sum(h["count"] for h in d["cluster"]["hosts"])
    c = d["hdfs"]["replication"]
    busy = next(j for j in d["workload"]["jobs"] if j["name"] == "background")["maps"]
    return n, c, n - busy, d


def snapshot_trial(rng: np.random.Generator, n: int, c: int, idle_n: int, t: int):
    """One snapshot: (paper-order dl-sched locality, optimal locality) as fractions of T."""
    idle = rng.permutation(n)[:idle_n]  # random idle slots, in random heartbeat order
    local = np.zeros((idle_n, t), dtype=bool)
    pos = {int(node): i for i, node in enumerate(idle)}
    for j in range(t):
        for node in rng.choice(n, c, replace=False):  # random placement, C distinct nodes
            i = pos.get(int(node))
            if i is not None:
                local[i, j] = True
    taken = np.zeros(t, dtype=bool)
    greedy = 0
    for i in range(idle_n):
        js = np.flatnonzero(local[i] & ~taken)
        if js.size:
            taken[js[0]] = True
            greedy += 1
    rows, cols = linear_sum_assignment(1.0 - local)
    return greedy / t, float(local[rows, cols].sum()) / t


def _heartbeat_locality(d: dict, t: int, seed: int) -> float:
    """Node-local share of the study job's maps when ``run_sim`` runs dl-sched on
    lsap-snapshot (scenario dict ``d``) with the job's map count set to ``t``."""
    d2 = {**d, "workload": {**d["workload"], "jobs": [dict(j) for j in d["workload"]["jobs"]]}}
    job = next(j for j in d2["workload"]["jobs"] if j["name"] != "background")
    job["maps"] = t
    r = mrgym.run_sim(mrgym.load_scenario(d2), "dl-sched", seed)
    jid = next(i for i, name, *_ in r.jobs if name == job["name"])
    ms = [x for x in r.task_log if x.job == jid and x.kind == "map" and x.outcome == "success"]
    return float(np.mean([x.locality == "node" for x in ms]))


def fig4a_verdict(gap: list[float], rel50: float) -> str:
    """Fig. 4(a)'s verdict on the optimum's mean gain over dl-sched per T (``gap``, points
    as fractions) and its relative gain at T = 50 (``rel50``)."""
    grows = all(b >= a - 0.005 for a, b in zip(gap, gap[1:])) and gap[-1] > gap[0] + 0.03
    near = 0.09 <= gap[-1] <= 0.19 or 0.09 <= rel50 <= 0.19
    return "reproduced" if grows and near else ("same direction" if grows else "not reproduced")


FIG4A_WHY = (
    "Criterion: the optimum's improvement over the paper's snapshot dl-sched grows with T "
    "(non-decreasing, +3 points overall) and is 9-19 % (absolute points or relative) at "
    "T = IS = 50; the paper's Fig. 4(a) is the snapshot definition of §III.B (g1/g2 "
    "argument: local tasks = distinct idle slots holding a task's input, so every idle "
    "slot takes a local task before any task goes non-local; we run one pass over the idle "
    "slots in random order, each taking its first unassigned local task, then fill). "
    "{trials} random snapshots (N = {n}, C = {c}, IS = {idle_n}) per seed and T. "
    "Beside it, Hadoop's one-at-a-time heartbeat order as the simulator runs it "
    "(run_sim lsap-snapshot dl-sched, maps = T): each slot takes a task as it heartbeats, "
    "so with T < IS the first T slots take every task and locality is low at small T; its "
    "gap to the optimum shrinks with T, the opposite of Fig. 4(a), because it answers a "
    "different question (online arrival of slots), not because dl-sched is near-optimal."
)


def _fig4a_plot(seeds, snap, opt, hb, rel_snap, gap_snap, gap_hb, out: Path) -> Path:
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for dd, lab, st in (
        (opt, "optimum (lsap-sched, LSAP)", "k-o"),
        (snap, "dl-sched, paper's snapshot order", "b-s"),
        (hb, "dl-sched, Hadoop heartbeat order (simulator)", "r-^"),
    ):
        _bars(a1, TS, dd, 1, st, lab)
    a1.set_xlabel("tasks T (IS = 50 idle slots)")
    a1.set_ylabel("node-local fraction")
    a1.set_ylim(0, 1.05)
    a1.legend(fontsize=8, loc="lower right")
    a1.grid(alpha=0.3)
    _bars(a2, TS, rel_snap, 100, "b-s", "ours, snapshot order (relative %)")
    _bars(a2, TS, gap_snap, 100, "c--s", "ours, snapshot order (points)")
    _bars(a2, TS, gap_hb, 100, "r-^", "ours, heartbeat order (points)")
    a2.plot([50], [14], "k*", ms=12, label="paper: ~14 % at T = 50")
    a2.set_xlabel("tasks T")
    a2.set_ylabel("improvement of optimum over dl-sched")
    a2.legend(fontsize=8)
    a2.grid(alpha=0.3)
    fig.suptitle(f"lsap Fig. 4(a): dl-sched vs optimal assignment ({len(seeds)} seeds)")
    return save_pyplot(fig, out, "lsap-fig4a")


@claim(
    paper="lsap",
    key="lsap-fig4a",
    where="Fig. 4(a) (§IV.B)",
    what="node locality of dl-sched vs the optimal (lsap-sched) assignment, T = 10..50 tasks, "
    "IS = 50 idle slots, N = 100, C = 5",
    paper_value="lsap-sched's improvement over dl-sched grows with T, to ~14 % at T = IS = 50",
    default_seeds=5,
)
def lsap_fig4a(seeds: list[int], out: Path) -> Result:
    n, c, idle_n, d = snapshot_setup()
    snap: dict[int, list[float]] = {t: [] for t in TS}
    opt: dict[int, list[float]] = {t: [] for t in TS}
    hb: dict[int, list[float]] = {t: [] for t in TS}
    for seed in seeds:
        rng = np.random.default_rng([seed, 4])
        for t in TS:
            a = np.array([snapshot_trial(rng, n, c, idle_n, t) for _ in range(TRIALS_PER_SEED)])
            snap[t].append(float(a[:, 0].mean()))
            opt[t].append(float(a[:, 1].mean()))
            hb[t].append(_heartbeat_locality(d, t, seed))
    gap_snap = {t: [o - s for o, s in zip(opt[t], snap[t])] for t in TS}
    rel_snap = {t: [(o - s) / s for o, s in zip(opt[t], snap[t])] for t in TS}
    gap_hb = {t: [o - h for o, h in zip(opt[t], hb[t])] for t in TS}
    verdict = fig4a_verdict([ci(gap_snap[t])[0] for t in TS], ci(rel_snap[TS[-1]])[0])
    ours = (
        "paper-order snapshot dl-sched "
        + "/".join(f"{ci(snap[t])[0]:.2f}" for t in TS)
        + ", optimum "
        + "/".join(f"{ci(opt[t])[0]:.2f}" for t in TS)
        + f" (T = {'/'.join(map(str, TS))}); improvement at T = 50: "
        f"{fmt(gap_snap[50], 100, 1)} points ({fmt(rel_snap[50], 100, 1)} % relative); "
        "heartbeat-order dl-sched (simulator) "
        + "/".join(f"{ci(hb[t])[0]:.2f}" for t in TS)
        + f", gap to optimum {fmt(gap_hb[10], 100)} -> {fmt(gap_hb[50], 100)} points"
    )
    why = FIG4A_WHY.format(trials=TRIALS_PER_SEED, n=n, c=c, idle_n=idle_n)
    path = _fig4a_plot(seeds, snap, opt, hb, rel_snap, gap_snap, gap_hb, out)
    data = {"T": list(TS), "snapshot": snap, "optimum": opt, "heartbeat": hb}
    return Result(ours, verdict, why, path, data)


# -- lsap-sched / lsap-fair-sched (baselines/lsap.py, reached through the registry) --------
REPS = tuple(range(1, 20))  # Fig. 4(b): replication factor 1..19
NODES = tuple(range(20, 201, 20))  # Fig. 4(c): 10..200 step 10 in the paper; step 20 here
ALPHAS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.5, 2.0, 3.0, 5.0)  # Fig. 5's DLC
SNAP_TRIALS = 100  # snapshots per seed and point of Figs. 4(b), 4(c) and 5


def _bars(ax, xs, d: dict, scale: float, fmt_: str, label: str) -> None:
    """Means and 95 % intervals over seeds of ``d[x]`` for x in ``xs``."""
    m = np.array([ci(d[x]) for x in xs]) * scale
    ax.errorbar(xs, m[:, 0], yerr=m[:, 1], fmt=fmt_, capsize=3, label=label)


def _sim_node_locality(d: dict, name: str, seed: int) -> float:
    """Node-local share of the study job's maps in ``run_sim`` of scenario dict ``d``."""
    from mrgym import registry

    r = mrgym.run_sim(mrgym.load_scenario(d), registry.make(name), seed)
    jid = next(i for i, nm, *_ in r.jobs if nm == "job50")
    ms = [x for x in r.task_log if x.job == jid and x.kind == "map" and x.outcome == "success"]
    return float(np.mean([x.locality == "node" for x in ms]))


@claim(
    paper="lsap",
    key="lsap-fig4b",
    where="Fig. 4(b) (§IV.B)",
    what="locality improvement of lsap-sched over dl-sched vs replication factor 1..19 "
    "(N = 100, IS = T = 50)",
    paper_value="rises drastically from C = 1 (no gain), peaks, then falls gradually",
    default_seeds=3,
)
def lsap_fig4b(seeds: list[int], out: Path) -> Result:
    n, _, idle_n, d = snapshot_setup()
    gap = {c: [] for c in REPS}
    sim_gap = {c: [] for c in REPS}
    for seed in seeds:
        rng = np.random.default_rng([seed, 42])
        for c in REPS:
            a = np.array([snapshot_trial(rng, n, c, idle_n, idle_n) for _ in range(SNAP_TRIALS)])
            gap[c].append(float(a[:, 1].mean() - a[:, 0].mean()))
            d2 = {**d, "hdfs": {**d["hdfs"], "replication": c}}
            sim_gap[c].append(
                _sim_node_locality(d2, "lsap-sched", seed)
                - _sim_node_locality(d2, "dl-sched", seed)
            )
    g = np.array([ci(gap[c])[0] for c in REPS])
    k = int(np.argmax(g))
    peak_c = REPS[k]
    rises = g[0] < 0.005 and g[k] > g[0] + 0.05
    falls = REPS[k] < REPS[-1] and g[-1] < g[k] - 0.03
    verdict = "reproduced" if rises and falls else ("same direction" if rises else "not reproduced")
    sg = np.array([ci(sim_gap[c])[0] for c in REPS])
    ours = (
        f"snapshot optimum - dl-sched: {g[0] * 100:.1f} points at C = 1, peak "
        f"{fmt(gap[peak_c], 100, 1)} at C = {peak_c}, {g[-1] * 100:.1f} at C = 19; "
        f"simulator (run_sim lsap-sched - dl-sched, node-local share): "
        f"{sg[0] * 100:.0f} at C = 1, max {sg.max() * 100:.0f} at C = {REPS[int(np.argmax(sg))]}, "
        f"{sg[-1] * 100:.0f} at C = 19 points"
    )
    why = (
        "Criterion: improvement ≈ 0 at C = 1 (< 0.5 points), a peak ≥ 5 points above it at an "
        "interior C, and ≥ 3 points lower at C = 19. Snapshot: the paper-order dl-sched of "
        f"Fig. 4(a)'s claim vs LSAP, {SNAP_TRIALS} random snapshots per seed and C. The "
        "simulator line runs the schedulers themselves on lsap-snapshot (heartbeat order, "
        "lsap-sched's rounds): dl-sched there places tasks as slots arrive, so it loses "
        "locality even at C = 1 and the gap is larger than the snapshot's."
    )
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.8))
    _bars(ax, REPS, gap, 100, "b-s", "snapshot: LSAP - paper-order dl-sched")
    _bars(ax, REPS, sim_gap, 100, "r-^", "simulator: lsap-sched - dl-sched")
    ax.set_xlabel("replication factor C (N = 100, IS = T = 50)")
    ax.set_ylabel("node-locality improvement (points)")
    ax.set_xticks(REPS[::2])
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.suptitle(f"lsap Fig. 4(b): improvement vs replication ({len(seeds)} seeds)")
    path = save_pyplot(fig, out, "lsap-fig4b")
    return Result(ours, verdict, why, path, {"C": list(REPS), "snapshot": gap, "sim": sim_gap})


@claim(
    paper="lsap",
    key="lsap-fig4c",
    where="Fig. 4(c) (§IV.B)",
    what="locality improvement of lsap-sched over dl-sched vs node count N (IS = T = N/2, C = 5)",
    paper_value="the improvement oscillates with N (no clear trend; sampling, the paper "
    "conjectures)",
    default_seeds=3,
)
def lsap_fig4c(seeds: list[int], out: Path) -> Result:
    _, c, _, _ = snapshot_setup()
    gap = {m: [] for m in NODES}
    for seed in seeds:
        rng = np.random.default_rng([seed, 43])
        for m in NODES:
            k = m // 2
            a = np.array([snapshot_trial(rng, m, c, k, k) for _ in range(SNAP_TRIALS)])
            gap[m].append(float(a[:, 1].mean() - a[:, 0].mean()))
    g = np.array([ci(gap[m])[0] for m in NODES])
    half = np.array([ci(gap[m])[1] for m in NODES])
    slope = float(np.polyfit(NODES, g, 1)[0]) * 100  # points per node
    positive = bool((g - half > 0).all())
    flat = abs(slope) * (NODES[-1] - NODES[0]) < 3.0  # < 3 points of trend over the range
    dg = np.diff(g)  # an oscillation: direction changes bigger than the intervals
    osc = sum(
        1
        for k in range(1, len(dg))
        if dg[k] * dg[k - 1] < 0 and min(abs(dg[k]), abs(dg[k - 1])) > half[k] + half[k + 1]
    )
    verdict = (
        "reproduced"
        if positive and flat and osc >= 2
        else ("same direction" if positive else "not reproduced")
    )
    ours = (
        "improvement " + "/".join(f"{x * 100:.1f}" for x in g) + f" points (N = {NODES[0]}.."
        f"{NODES[-1]} step 20); range {(g.max() - g.min()) * 100:.1f} points, linear trend "
        f"{slope * 100:.2f} points per 100 nodes, {osc} significant direction changes"
    )
    why = (
        "Criterion: improvement > 0 at every N (95 % interval), no clear trend (a fitted line "
        "moves < 3 points over N = 20..200) and an oscillation (≥ 2 direction changes larger "
        "than the intervals); 'same direction' when only the first hold. Snapshot model of "
        f"Fig. 4(a)'s claim (C = 5, half the one-slot nodes idle), {SNAP_TRIALS} snapshots "
        "per seed and N. Our curve is smooth within noise (a plateau at 10-12 points): the "
        "oscillation is not seen, consistent with the paper's own conjecture that it came "
        "from sampling."
    )
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.8))
    _bars(ax, NODES, gap, 100, "b-s", "LSAP - paper-order dl-sched")
    ax.set_xlabel("nodes N (IS = T = N / 2, C = 5)")
    ax.set_ylabel("node-locality improvement (points)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.suptitle(f"lsap Fig. 4(c): improvement vs nodes ({len(seeds)} seeds)")
    path = save_pyplot(fig, out, "lsap-fig4c")
    return Result(ours, verdict, why, path, {"N": list(NODES), "gap": gap})


def fair_trial(rng: np.random.Generator, costs, assign, distance, alphas, beta: float = 10.0):
    """One §IV.B Fig. 5 snapshot (60 one-slot nodes, 30 idle, 30 running tasks, 90 to
    schedule, replication 1, 5 groups weighted 20..24): per α, (d(0) - d(t), local share)."""
    n, idle_n, running, todo, groups = 60, 30, 30, 90, 5
    w = np.arange(20, 25, dtype=float)
    w /= w.sum()
    rt = np.bincount(rng.integers(groups, size=running), minlength=groups).astype(float)
    group = np.sort(rng.integers(groups, size=todo))
    idle = rng.permutation(n)[:idle_n]
    block = rng.integers(n, size=todo)  # replication 1: one random node per block
    local = block[:, None] == idle[None, :]
    d0 = distance(rt / rt.sum(), w)
    out = []
    for a in alphas:
        pairs = assign(costs(local, group, w, rt, n, a, beta))
        after = rt + np.bincount([group[i] for i, _ in pairs], minlength=groups)
        out.append(
            (d0 - distance(after / after.sum(), w), np.mean([local[i, j] for i, j in pairs]))
        )
    return out


@claim(
    paper="lsap",
    key="lsap-fig5",
    where="Fig. 5 (§IV.B)",
    what="lsap-fair-sched: fairness improvement d(0) - d(t) and data locality as the DLC α of "
    "non-local tasks grows (60 nodes, 30 idle, 90 tasks, 5 groups)",
    paper_value="small α: fairness improved most; as α grows locality rises and fairness "
    "deteriorates, staircase-shaped",
    default_seeds=3,
)
def lsap_fig5(seeds: list[int], out: Path) -> Result:
    cls = registry.load("lsap-fair-sched")
    fair = {a: [] for a in ALPHAS}
    loc = {a: [] for a in ALPHAS}
    for seed in seeds:
        rng = np.random.default_rng([seed, 5])
        rows = np.array(
            [
                fair_trial(rng, cls.costs, cls.assign, cls.distance, ALPHAS)
                for _ in range(SNAP_TRIALS)
            ]
        )  # trials x alphas x 2
        for k, a in enumerate(ALPHAS):
            fair[a].append(float(rows[:, k, 0].mean()))
            loc[a].append(float(rows[:, k, 1].mean()))
    f = np.array([ci(fair[a])[0] for a in ALPHAS])
    lo = np.array([ci(loc[a])[0] for a in ALPHAS])
    loc_up = lo[-1] > lo[0] + 0.05 and all(b >= x - 0.01 for x, b in zip(lo, lo[1:]))
    fair_down = f[-1] < f[0] - 0.02 and all(b <= x + 0.01 for x, b in zip(f, f[1:]))
    verdict = (
        "reproduced"
        if loc_up and fair_down
        else ("same direction" if lo[-1] > lo[0] and f[-1] < f[0] else "not reproduced")
    )
    ours = (
        f"α = {ALPHAS[0]:g} -> {ALPHAS[-1]:g}: fairness improvement d(0)-d(t) "
        f"{fmt(fair[ALPHAS[0]], 1, 3)} -> {fmt(fair[ALPHAS[-1]], 1, 3)}, local share "
        f"{fmt(loc[ALPHAS[0]], 100)} -> {fmt(loc[ALPHAS[-1]], 100)} %"
    )
    why = (
        "Criterion: the local share rises (≥ 5 points, never falling by > 1) and the fairness "
        "improvement falls (≥ 0.02, never rising by > 0.01) as α grows. Snapshot of §IV.B's "
        "setup through lsap-fair-sched's cost matrix (β = 10; groups of running and pending "
        "tasks uniformly random; the paper's weights '{20..24}/31' do not sum to 1, we "
        f"normalise by 110), {SNAP_TRIALS} snapshots per seed; formulas (9)-(15) are "
        "reconstructed (baselines/lsap.py). Averaged over snapshots the staircase of one "
        "snapshot smooths out."
    )
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.8))
    _bars(ax, ALPHAS, fair, 1, "b-s", "fairness improvement d(0) - d(t)")
    ax.set_xlabel("DLC of non-local tasks α")
    ax.set_ylabel("fairness improvement", color="b")
    ax2 = ax.twinx()
    _bars(ax2, ALPHAS, loc, 100, "r-^", "local share of scheduled tasks")
    ax2.set_ylabel("data locality (%)", color="r")
    ax.set_xscale("symlog", linthresh=0.5)
    ax.grid(alpha=0.3)
    fig.suptitle(f"lsap Fig. 5: lsap-fair-sched fairness vs locality ({len(seeds)} seeds)")
    path = save_pyplot(fig, out, "lsap-fig5")
    return Result(ours, verdict, why, path, {"alpha": list(ALPHAS), "fair": fair, "local": loc})
