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
    snap = {t: [] for t in TS}
    opt = {t: [] for t in TS}
    hb = {t: [] for t in TS}
    for seed in seeds:
        rng = np.random.default_rng([seed, 4])
        for t in TS:
            a = np.array([snapshot_trial(rng, n, c, idle_n, t) for _ in range(TRIALS_PER_SEED)])
            snap[t].append(float(a[:, 0].mean()))
            opt[t].append(float(a[:, 1].mean()))
            d2 = {
                **d,
                "workload": {**d["workload"], "jobs": [dict(j) for j in d["workload"]["jobs"]]},
            }
            job = next(j for j in d2["workload"]["jobs"] if j["name"] != "background")
            job["maps"] = t
            r = mrgym.run_sim(mrgym.load_scenario(d2), "dl-sched", seed)
            jid = next(i for i, name, *_ in r.jobs if name == job["name"])
            ms = [
                x for x in r.task_log if x.job == jid and x.kind == "map" and x.outcome == "success"
            ]
            hb[t].append(float(np.mean([x.locality == "node" for x in ms])))
    gap_snap = {t: [o - s for o, s in zip(opt[t], snap[t])] for t in TS}
    rel_snap = {t: [(o - s) / s for o, s in zip(opt[t], snap[t])] for t in TS}
    gap_hb = {t: [o - h for o, h in zip(opt[t], hb[t])] for t in TS}
    g = [ci(gap_snap[t])[0] for t in TS]
    rel50 = ci(rel_snap[TS[-1]])[0]
    grows = all(b >= a - 0.005 for a, b in zip(g, g[1:])) and g[-1] > g[0] + 0.03
    near = 0.09 <= g[-1] <= 0.19 or 0.09 <= rel50 <= 0.19
    verdict = "reproduced" if grows and near else ("same direction" if grows else "not reproduced")
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
    why = (
        "Criterion: the optimum's improvement over the paper's snapshot dl-sched grows with T "
        "(non-decreasing, +3 points overall) and is 9-19 % (absolute points or relative) at "
        "T = IS = 50; the paper's Fig. 4(a) is the snapshot definition of §III.B (g1/g2 "
        "argument: local tasks = distinct idle slots holding a task's input, so every idle "
        "slot takes a local task before any task goes non-local; we run one pass over the idle "
        "slots in random order, each taking its first unassigned local task, then fill). "
        f"{TRIALS_PER_SEED} random snapshots (N = {n}, C = {c}, IS = {idle_n}) per seed and T. "
        "Beside it, Hadoop's one-at-a-time heartbeat order as the simulator runs it "
        "(run_sim lsap-snapshot dl-sched, maps = T): each slot takes a task as it heartbeats, "
        "so with T < IS the first T slots take every task and locality is low at small T; its "
        "gap to the optimum shrinks with T, the opposite of Fig. 4(a), because it answers a "
        "different question (online arrival of slots), not because dl-sched is near-optimal."
    )
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for dd, lab, st in (
        (opt, "optimum (lsap-sched, LSAP)", "k-o"),
        (snap, "dl-sched, paper's snapshot order", "b-s"),
        (hb, "dl-sched, Hadoop heartbeat order (simulator)", "r-^"),
    ):
        a1.errorbar(
            TS,
            [ci(dd[t])[0] for t in TS],
            yerr=[ci(dd[t])[1] for t in TS],
            fmt=st,
            label=lab,
            capsize=3,
        )
    a1.set_xlabel("tasks T (IS = 50 idle slots)")
    a1.set_ylabel("node-local fraction")
    a1.set_ylim(0, 1.05)
    a1.legend(fontsize=8, loc="lower right")
    a1.grid(alpha=0.3)
    a2.errorbar(
        TS,
        [ci(rel_snap[t])[0] * 100 for t in TS],
        yerr=[ci(rel_snap[t])[1] * 100 for t in TS],
        fmt="b-s",
        capsize=3,
        label="ours, snapshot order (relative %)",
    )
    a2.errorbar(
        TS,
        [ci(gap_snap[t])[0] * 100 for t in TS],
        yerr=[ci(gap_snap[t])[1] * 100 for t in TS],
        fmt="c--s",
        capsize=3,
        label="ours, snapshot order (points)",
    )
    a2.errorbar(
        TS,
        [ci(gap_hb[t])[0] * 100 for t in TS],
        yerr=[ci(gap_hb[t])[1] * 100 for t in TS],
        fmt="r-^",
        capsize=3,
        label="ours, heartbeat order (points)",
    )
    a2.plot([50], [14], "k*", ms=12, label="paper: ~14 % at T = 50")
    a2.set_xlabel("tasks T")
    a2.set_ylabel("improvement of optimum over dl-sched")
    a2.legend(fontsize=8)
    a2.grid(alpha=0.3)
    fig.suptitle(f"lsap Fig. 4(a): dl-sched vs optimal assignment ({len(seeds)} seeds)")
    path = save_pyplot(fig, out, "lsap-fig4a")
    return Result(
        ours,
        verdict,
        why,
        path,
        {"T": list(TS), "snapshot": snap, "optimum": opt, "heartbeat": hb},
    )
