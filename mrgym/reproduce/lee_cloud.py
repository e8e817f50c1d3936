"""Claims of Lee's thesis, ch. 4, §4.4.1 (resource allocation and accelerator nodes) on
``lee-cloud``: 5 gridmix2 production jobs every 4 hours on core m1.large nodes, with or
without data-less accelerator nodes that the cloud driver (§4.2, ``cloud-driver`` in
:data:`mrgym.registry.TOOLS`) starts when a round arrives and releases when it is done.

The thesis' configurations are lee-cloud variants built with overrides: the core group
resized (5 or 9 m1.large), the accelerator group resized and retyped (m1.large or
c1.medium), ``standby: true`` (off and unbilled until the driver starts it), the spot
group dropped (Fig. 4.8-4.10 have none), ``dynamics.billing: hourly`` (EC2's 2011 rule,
``mrgym.sim.monitoring``), and one round of the full-size jobs (the scenario's second round
replays it with other task noise; rounds are independent unless one outlasts the 4 hours,
the "overloaded" case, which a round longer than 4 h shows by itself).  About 1-1.5 s per
configuration; the whole two-round lee-cloud under Fair takes about 2 s.

The cost of a round is what the thesis' Fig. 4.10 counts, "the cost to maintain the
cluster during one round of the production jobs (4 hours)": each core node 4 instance-hours
(long-lived: kept between rounds), each accelerator its begun instance-hours from its start
to its release; a round's accelerators still running when the episode ends are released
then (the jobs are done).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from mrgym import registry
from mrgym.config import load_scenario
from mrgym.reproduce.claims import Result, claim
from mrgym.reproduce.stats import figure, fmt, mean_ci, plot_file, save
from mrgym.runner import build_simulation
from mrgym.sim.monitoring import price_per_hour, session_hours

ROUND_S = 4 * 3600.0  # "have them arrive every 4 hours"
# label -> (core m1.large, accelerators, accelerator type)
CONFIGS = {
    "5m1": (5, 0, "c1.medium"),
    "9m1": (9, 0, "c1.medium"),
    "5m1+4m1": (5, 4, "m1.large"),
    "5m1+4c1": (5, 4, "c1.medium"),
    "5m1+8c1": (5, 8, "c1.medium"),
}
PAPER_COST = {"9m1": 12.24, "5m1+4m1": 10.88, "5m1+4c1": 8.84}  # §4.4.1, $ per round


def scenario(label: str):
    """lee-cloud as one of §4.4.1's configurations (module docstring)."""
    core, acc, acc_type = CONFIGS[label]
    base = load_scenario("lee-cloud").model_dump()
    groups = [dict(base["cluster"]["hosts"][0], count=core)]
    if acc:
        groups.append(dict(base["cluster"]["hosts"][1], count=acc, type=acc_type, standby=True))
    over = {"name": f"lee-cloud-{label}", "cluster.hosts": groups}
    over.update({f"workload.jobs.{j}.repeat": 1 for j in range(len(base["workload"]["jobs"]))})
    over["dynamics"] = {"billing": "hourly"}  # no spot pool, so no spot market
    return load_scenario("lee-cloud", over)


@cache
def run(label: str, seed: int) -> dict:
    """One episode of configuration ``label``: per-round time and cost, and the disk work
    the core nodes must do per round (cached: both claims read the same runs)."""
    acc = CONFIGS[label][1]
    sched = registry.tool("cloud-driver")(inner="fair") if acc else registry.make("fair")
    sim = build_simulation(scenario(label), sched, seed)
    sim.run()
    rounds = int(round(max(j.arrived_s for j in sim.jobs) / ROUND_S)) + 1
    spot = sim.scenario.dynamics.spot
    cost = [0.0] * rounds
    for h in sim.topo.hosts:
        price = price_per_hour(h, spot)
        if h.pool == "core":  # long-lived: 4 instance-hours every round
            for k in range(rounds):
                cost[k] += price * ROUND_S / 3600.0
            continue
        for start, end in sim.monitor.sessions[h.id]:
            stop = sim.env.now if end is None else end
            cost[min(int(start // ROUND_S), rounds - 1)] += price * session_hours(
                stop - start, False, False
            )
    span = [0.0] * rounds
    for j in sim.jobs:
        k = int(round(j.arrived_s / ROUND_S))
        end = j.finish_s if j.finish_s is not None else sim.env.now
        span[k] = max(span[k], end - k * ROUND_S)
    # what only the core nodes' disks can do (HDFS lives there): read every input block
    # and write every replica of the jobs' output (Lee §4.2: accelerators hold no data)
    repl = sim.scenario.hdfs.replication
    core_mb = sum(
        sum(t.input_mb for t in j.maps) * (1.0 + repl * j.profile.output_ratio) for j in sim.jobs
    )
    disks = sum(h.type.disk_mbps for h in sim.topo.hosts if h.pool == "core")
    return {
        "round_h": [s / 3600.0 for s in span],
        "cost": cost,
        "truncated": sim.truncated,
        "core_disk_gb_per_round": core_mb / rounds / 1024.0,
        "core_disk_bound_h": core_mb / rounds / disks / 3600.0,
        "acc_map_share": _acc_share(sim),
    }


def _acc_share(sim) -> float:
    maps = [a for a in sim.attempts if a.outcome == "success" and a.task.kind == "map"]
    return sum(1 for a in maps if a.vm.host.pool != "core") / max(1, len(maps))


def _mean(label: str, key: str, seeds: list[int]) -> list[float]:
    """Per seed, the mean over the rounds of ``key``."""
    return [sum(run(label, s)[key]) / len(run(label, s)[key]) for s in seeds]


@claim(
    paper="lee",
    key="lee-4.4.1-cost",
    where="§4.4.1, Fig. 4.10",
    what="cost of one 4-hour round: 9 core nodes vs 5 core + 4 accelerators released when "
    "the jobs are done (m1.large, then c1.medium)",
    paper_value="$12.24 (9m1), $10.88 (5m1+4m1, -11 %), $8.84 (5m1+4c1, -28 % from 9m1)",
    default_seeds=3,
)
def lee_cost(seeds: list[int], out: Path) -> Result:
    labels = list(PAPER_COST)
    cost = {lb: _mean(lb, "cost", seeds) for lb in labels}
    m = {lb: mean_ci(cost[lb]).mean for lb in labels}
    ordered = m["9m1"] > m["5m1+4m1"] > m["5m1+4c1"]
    close = all(abs(m[lb] / PAPER_COST[lb] - 1.0) <= 0.05 for lb in labels)
    verdict = (
        "reproduced" if ordered and close else ("same direction" if ordered else "not reproduced")
    )
    rounds = {lb: _mean(lb, "round_h", seeds) for lb in labels}
    ours = ", ".join(f"{lb} ${fmt(cost[lb], digits=2)}" for lb in labels)
    why = (
        "Criterion: 9m1 > 5m1+4m1 > 5m1+4c1 and each within 5 % of the thesis' dollars; "
        "'same direction' if only the order holds. Hourly billing (each begun "
        "instance-hour), core nodes 4 h per round, accelerators started by the cloud driver "
        "when a round arrives and released when its jobs are done. The thesis' numbers are "
        "5 x 4 h core + 4 x 3 h accelerators (its rounds took 2-3 h); ours took "
        + ", ".join(f"{lb} {fmt(rounds[lb], digits=2)} h" for lb in labels)
        + ", so each accelerator is billed its begun hours, 1 or 2, not 3 (a round of about "
        "1.0 h of 5m1+4m1 bills 1 or 2 h by the seed): the gap is the round time (claim "
        "lee-4.4.1-rounds), not the billing rule."
    )
    fig, ax = figure(5.5, 3.2)
    xs = range(len(labels))
    ax.bar([x - 0.2 for x in xs], [m[lb] for lb in labels], 0.4, label="ours")
    ax.bar([x + 0.2 for x in xs], [PAPER_COST[lb] for lb in labels], 0.4, label="thesis")
    ax.set_xticks(list(xs), labels)
    ax.set_ylabel("$ per 4-hour round")
    ax.legend(fontsize=8)
    path = save(fig, plot_file(out, "lee-4.4.1-cost"), "Lee §4.4.1 / Fig. 4.10: $ per round")
    return Result(ours, verdict, why, path, {"cost": cost, "round_h": rounds})


@claim(
    paper="lee",
    key="lee-4.4.1-rounds",
    where="§4.4.1, Fig. 4.8-4.9",
    what="time to finish a round: 5 core nodes alone, with 4 and with 8 c1.medium accelerators",
    paper_value="5m1 overloaded (response time keeps increasing over the rounds); 5m1+4c1 "
    "between 2 and 3 h; 5m1+8c1 less than 2 h",
    default_seeds=3,
)
def lee_rounds(seeds: list[int], out: Path) -> Result:
    labels = ["5m1", "5m1+4c1", "5m1+8c1", "9m1"]
    span = {lb: [max(run(lb, s)["round_h"]) for s in seeds] for lb in labels}
    m = {lb: mean_ci(span[lb]).mean for lb in labels}
    paper_ok = m["5m1"] > 4.0 and 2.0 <= m["5m1+4c1"] <= 3.0 and m["5m1+8c1"] < 2.0
    faster = m["5m1"] > 1.05 * m["5m1+4c1"] and m["5m1+4c1"] > 1.05 * m["5m1+8c1"]
    verdict = "reproduced" if paper_ok else ("same direction" if faster else "not reproduced")
    r0 = run("5m1+8c1", seeds[0])
    ours = ", ".join(f"{lb} {fmt(span[lb], digits=2)} h" for lb in labels) + " (longest round)"
    why = (
        "Criterion: the thesis' three statements (5m1 > 4 h, 5m1+4c1 in 2-3 h, 5m1+8c1 < "
        "2 h); 'same direction' if each step of accelerators shortens the round by ≥ 5 %. "
        "Cause, measured: a round is bound by the 5 core nodes' disks. HDFS lives only "
        "there (§4.2), so every map reads its block from a core disk (an accelerator over "
        "the network, through c1.medium's 250 Mbit/s 'moderate' NIC) and every replica of "
        "every reduce output is written to core disks: "
        f"{r0['core_disk_gb_per_round']:.0f} GB per round, ≥ {r0['core_disk_bound_h']:.2f} h "
        "at the 5 disks' full 100 MB/s before seek thrash, whatever the accelerators. "
        f"Accelerators ran {100 * r0['acc_map_share']:.0f} % of the maps on 5m1+8c1 but "
        "their remote reads add streams to the same disks. The thesis' gridmix2 inputs are "
        "block-compressed ~4x (configs/lee-cloud.yaml): its disks read a quarter of the "
        "records' bytes and its maps spend CPU decompressing, so its rounds were CPU-bound "
        "and accelerators helped; the model's maps read input_mb (the records) from disk "
        "and decompress nothing, so ours are disk-bound, too short for '5m1 overloaded', "
        "and barely helped by c1.medium CPUs."
    )
    fig, ax = figure(5.5, 3.2)
    ax.bar(labels, [m[lb] for lb in labels])
    ax.axhline(4.0, color="0.4", ls="--", lw=1, label="4 h: next round (5m1 overloaded)")
    ax.axhspan(2.0, 3.0, color="C1", alpha=0.2, label="thesis 5m1+4c1: 2-3 h")
    ax.axhline(2.0, color="C2", ls=":", lw=1, label="thesis 5m1+8c1: < 2 h")
    ax.set_ylabel("longest round (h)")
    ax.legend(fontsize=7)
    path = save(fig, plot_file(out, "lee-4.4.1-rounds"), "Lee §4.4.1 / Fig. 4.9: round time")
    data = {"round_h": span, **{f"{lb}_runs": [run(lb, s) for s in seeds] for lb in labels}}
    return Result(ours, verdict, why, path, data)
