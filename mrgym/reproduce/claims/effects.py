"""Claims on the simulator's model effects: interference (ILA Figs. 1-2) and locality (ILA
Fig. 3); the platform effects (virtualization, GPU hosts) are in :mod:`platforms`.

Each experiment is a probe of :mod:`mrgym.reproduce.probes` repeated over the seeds it is
given; its verdict applies the criterion written in its ``why``.  Paper numbers are quoted
from the papers' text (their sections are cited in each claim); where a paper gives only a curve's shape, the
criterion tests the shape.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np

from mrgym.reproduce import ila_setup, probes
from mrgym.reproduce.claims import Result, claim, finish
from mrgym.reproduce.stats import exp_vs_linear, figure, mean_ci, pct

# --------------------------------------------------------------------------------------
# ILA Fig. 1: CPU interference

# background CPU demand in cores (one PiEst map = one core), up to §2.2's 4 co-hosted VMs'
# 12 map slots
FIG1_BG = list(range(0, probes.MAX_BG + 1))
FIG1_KNEE_PAPER = 8.0  # "no significant slowdown until the background demand reaches 800"
FIG1_SIGNIFICANT = 1.10  # a slowdown above 10 % counts as significant
FIG1_KNEE_TOL = 2.0  # cores


@claim(
    paper="ila",
    key="ila-fig1",
    setup=partial(ila_setup.host_setup, "ila-fig1"),
    where="Fig. 1 (§2.2)",
    what="CPU-bound task time vs co-hosted CPU demand: flat until the demand reaches the "
    "host's cores, then growing",
    paper_value="no significant slowdown until background demand reaches 800 % "
    "(8 of 10 cores), then it grows",
    default_seeds=3,
)
def ila_fig1(seeds: list[int], out: Path) -> Result:
    # per seed, the slowdown of each background level relative to the probe alone
    per_seed = np.array(
        [[probes.cpu_probe(bg, s) / probes.cpu_probe(0, s) for bg in FIG1_BG] for s in seeds]
    )
    cis = [mean_ci(per_seed[:, i]) for i in range(len(FIG1_BG))]
    means = np.array([c.mean for c in cis])
    significant = [bg for bg, m in zip(FIG1_BG, means, strict=True) if m > FIG1_SIGNIFICANT]
    knee = float(significant[0]) if significant else float("nan")
    flat_max = float(means[np.array(FIG1_BG) < knee].max()) if significant else float(means.max())
    grows = bool(np.all(np.diff(means[np.array(FIG1_BG) >= knee]) > 0)) if significant else False
    criterion = (
        f"reproduced if the first background demand with a slowdown over "
        f"{pct(FIG1_SIGNIFICANT - 1)} (the knee) is within ±{FIG1_KNEE_TOL:.0f} cores of the "
        f"paper's {FIG1_KNEE_PAPER:.0f} and the slowdown keeps growing past it; same direction "
        "if flat-then-growing with the knee elsewhere"
    )
    # the paper's knee: 8 background cores + its 3-vCPU probe VM, past the 10 cores
    note = (
        " Our probe (one KMeans map) adds 1 core of its own, the paper's probe VM had 3 "
        f"vCPUs: the paper's knee is at a total demand of 11 cores, ours at {knee + 1:.0f} "
        f"(the host has {probes.HOST_CORES} guest cores)."
        if significant
        else ""
    )
    if significant and grows and abs(knee - FIG1_KNEE_PAPER) <= FIG1_KNEE_TOL:
        verdict = "reproduced"
    elif significant and grows:
        verdict = "same direction"
    else:
        verdict = "not reproduced"
    ours = (
        f"knee at {knee:.0f} cores; ≤ {100 * (flat_max - 1):.1f} % below it; "
        f"{means[-1]:.2f}x at {FIG1_BG[-1]} cores"
    )

    fig, ax = figure()
    ax.plot(FIG1_BG, means, "o-", color="C0", label="ours (mean over seeds)")
    ax.axvline(FIG1_KNEE_PAPER, color="C3", ls="--", label="paper's knee (800 %)")
    ax.axvline(probes.HOST_CORES, color="0.5", ls=":", label="host's guest cores")
    ax.axhline(FIG1_SIGNIFICANT, color="0.6", lw=0.8)
    ax.set_xlabel("co-hosted CPU demand (cores)")
    ax.set_ylabel("task time / time alone")
    return finish(
        fig,
        ax,
        out,
        "ila-fig1",
        "ILA Fig. 1: CPU interference (KMeans probe)",
        f"One 10-core Xen host, 8 VMs; background PiEst maps on 7 co-hosted VMs. "
        f"Seeds: {len(seeds)}. Grey line: {pct(FIG1_SIGNIFICANT - 1)} slowdown.",
        ours=ours,
        verdict=verdict,
        why=criterion + "." + note,
        data={
            "background_cores": FIG1_BG,
            "slowdown": [c.as_dict() for c in cis],
            "per_seed": per_seed.tolist(),
            "knee_cores": knee,
            "host_cores": probes.HOST_CORES,
        },
    )


# --------------------------------------------------------------------------------------
# ILA Fig. 2: I/O interference

FIG2_STREAMS = list(range(0, 7))  # co-hosted disk streams (one Grep map each)
FIG2_MIN_R2 = 0.95


def _fig2_plot(s: np.ndarray, traffic: np.ndarray, fit: dict):
    """Fig. 2's two panels: the slowdown against the streams, with both fits, and against
    the co-hosted traffic (the paper's axis)."""
    r2e, r2l = fit["exp"]["r2"], fit["linear"]["r2"]
    fig, ax = figure(9.0, 3.4)
    ax2 = fig.add_subplot(1, 2, 2)
    ax.set_subplotspec(fig.add_gridspec(1, 2)[0])
    ax2.grid(alpha=0.3)
    ax.plot(FIG2_STREAMS, s, "o", color="C0", label="ours (mean over seeds)")
    xs = np.linspace(0, FIG2_STREAMS[-1], 100)
    e = fit["exp"]
    ax.plot(
        xs,
        e["a"] * np.exp(e["b"] * xs) + e["c"],
        color="C1",
        label=f"exponential fit (R² {r2e:.3f})",
    )
    ax.plot(
        xs,
        fit["linear"]["slope"] * xs + fit["linear"]["intercept"],
        color="0.5",
        ls="--",
        label=f"linear fit (R² {r2l:.3f})",
    )
    ax.set_xlabel("co-hosted I/O streams")
    ax.set_ylabel("task time / time alone")
    ax2.plot(traffic, s, "o-", color="C0")
    for k, x, y in zip(FIG2_STREAMS, traffic, s):
        ax2.annotate(str(k), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax2.set_xlabel("co-hosted VMs' I/O traffic (MB/s; labels: streams)")
    ax2.set_title("the paper's axis", fontsize=9)
    return fig, ax


@claim(
    paper="ila",
    key="ila-fig2",
    setup=partial(ila_setup.host_setup, "ila-fig2"),
    where="Fig. 2 (§2.2, eq. 2)",
    what="I/O-bound task slowdown vs the co-hosted VMs' aggregated I/O traffic: exponential growth",
    paper_value="exponential increase of I/O-bound task time with the aggregated I/O traffic "
    "from co-hosted VMs (fitted by the exponential model of eq. 2)",
    default_seeds=3,
)
def ila_fig2(seeds: list[int], out: Path) -> Result:
    runs = [[probes.io_probe_traffic(k, s) for k in FIG2_STREAMS] for s in seeds]
    per_seed = np.array([[t / row[0][0] for t, _ in row] for row in runs])
    traffic_seed = np.array([[mb for _, mb in row] for row in runs])
    cis = [mean_ci(per_seed[:, i]) for i in range(len(FIG2_STREAMS))]
    s = np.array([c.mean for c in cis])
    traffic = traffic_seed.mean(axis=0)
    fit = exp_vs_linear(FIG2_STREAMS, s)
    r2e, r2l, b = fit["exp"]["r2"], fit["linear"]["r2"], fit["exp"]["b"]
    increasing = bool(np.all(np.diff(s) > 0))
    convex = bool(np.all(np.diff(s, 2) > 0))
    # the paper's axis: the slowdown is a rising function of the co-hosted traffic only if
    # the traffic rises with every stream added, as the slowdown does
    on_traffic = increasing and bool(np.all(np.diff(traffic) > 0))
    criterion = (
        "Fig. 2's x-axis is the co-hosted VMs' aggregated I/O traffic (§2.2: \"an "
        "exponential increase of the completion time ... with the aggregated I/O traffic "
        'from co-hosted VMs"; §4.1: "an exponential relationship with background I/O '
        "rate\"), measured here as their read + write MB/s averaged over the probe's life "
        "with 0-6 co-hosted Grep streams. Reproduced if the slowdown rises with the "
        "traffic (both rise with every added stream), rises convexly with the streams, and "
        f"an exponential in the streams fits better than a line with R² > {FIG2_MIN_R2}; "
        "same direction if it only rises with the traffic; not reproduced if the traffic "
        "falls as the slowdown rises. The paper's text gives the shape, not values: "
        "magnitudes are not checked here (ILA Fig. 8 is the calibration check)"
    )
    if on_traffic and convex and b > 0 and r2e > r2l and r2e > FIG2_MIN_R2:
        verdict = "reproduced"
    elif on_traffic:
        verdict = "same direction"
    else:
        verdict = "not reproduced"
    ours = (
        ", ".join(f"{v:.2f}" for v in s[1:])
        + f"x for 1..{FIG2_STREAMS[-1]} streams at a co-hosted traffic of "
        + ", ".join(f"{v:.0f}" for v in traffic[1:])
        + f" MB/s; R² exp {r2e:.3f} vs linear {r2l:.3f} (on the streams)"
    )
    if not on_traffic:
        criterion += (
            ". Why not: the fitted disk thrash (disk_thrash, stage C; docs/calibration.md) "
            "makes the disk's total throughput fall with each added stream faster than the "
            "background's share of it grows, so the co-hosted traffic falls from "
            f"{traffic[1]:.0f} to {traffic[-1]:.0f} MB/s while the slowdown rises; the "
            "fit's Fig. 2 penalties (ila-fig2-rises, ila-fig2-convex) read the slowdown "
            "against the stream count, not the traffic"
        )

    fig, ax = _fig2_plot(s, traffic, fit)
    return finish(
        fig,
        ax,
        out,
        "ila-fig2",
        "ILA Fig. 2: I/O interference (Sort probe)",
        f"One Xen host, one shared disk; background Grep maps on co-hosted VMs. "
        f"Seeds: {len(seeds)}.",
        ours=ours,
        verdict=verdict,
        why=criterion + ".",
        data={
            "streams": FIG2_STREAMS,
            "slowdown": [c.as_dict() for c in cis],
            "per_seed": per_seed.tolist(),
            "traffic_mbps": traffic.tolist(),
            "traffic_per_seed": traffic_seed.tolist(),
            "exp_fit": fit["exp"],
            "linear_fit": fit["linear"],
        },
    )


# --------------------------------------------------------------------------------------
# ILA Fig. 3: locality levels

FIG3_PAPER = {"server": 1.0, "rack": 3.0, "off_rack": 4.0}
FIG3_TOL = 0.25


@claim(
    paper="ila",
    key="ila-fig3",
    setup=ila_setup.fig3_setup,
    where="Fig. 3 (§2.3)",
    what="map time by locality level, 100 Mbit/s switch",
    paper_value="server ≈ node; rack ≈ 3x; off-rack ≈ 4x",
    default_seeds=3,
)
def ila_fig3(seeds: list[int], out: Path) -> Result:
    per_seed = np.array(
        [[probes.locality_map_time(lv, s) for lv in range(4)] for s in seeds], dtype=float
    )
    ratios = per_seed / per_seed[:, :1]
    cis = {name: mean_ci(ratios[:, i]) for i, name in enumerate(probes.LOCALITY_LEVELS)}
    m = {k: c.mean for k, c in cis.items()}
    within = all(abs(m[k] / v - 1) <= FIG3_TOL for k, v in FIG3_PAPER.items())
    ordered = m["node"] <= m["server"] < m["rack"] < m["off_rack"]
    criterion = (
        f"reproduced if server, rack and off-rack times are each within ±{pct(FIG3_TOL)} of "
        "the paper's 1x, 3x, 4x of node-local; same direction if node ≤ server < rack < "
        "off-rack"
    )
    verdict = "reproduced" if within else ("same direction" if ordered else "not reproduced")
    ours = "; ".join(
        f"{k.replace('_', '-')} {cis[k].fmt(2, unit='x')}" for k in ("server", "rack", "off_rack")
    )

    fig, ax = figure()
    x = np.arange(4)
    labels = [k.replace("_", "-") for k in probes.LOCALITY_LEVELS]
    ax.bar(x - 0.2, [m[k] for k in probes.LOCALITY_LEVELS], 0.4, color="C0", label="ours")
    paper = [1.0] + [FIG3_PAPER[k] for k in probes.LOCALITY_LEVELS[1:]]
    ax.bar(x + 0.2, paper, 0.4, color="0.7", label="paper (≈)")
    ax.set_xticks(x, labels)
    ax.set_ylabel("map time / node-local map time")
    return finish(
        fig,
        ax,
        out,
        "ila-fig3",
        "ILA Fig. 3: effect of data locality (TeraSort map)",
        f"24 VMs on 12 hosts, 2 racks, 100 Mbit/s links, 30 % background traffic; one "
        f"100 MB map per level. Seeds: {len(seeds)}.",
        ours=ours,
        verdict=verdict,
        why=criterion + ".",
        data={
            "levels": list(probes.LOCALITY_LEVELS),
            "ratio": {k: c.as_dict() for k, c in cis.items()},
            "per_seed_seconds": per_seed.tolist(),
        },
    )
