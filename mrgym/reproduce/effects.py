"""Claims on the simulator's model effects: interference (ILA Figs. 1-2), locality (ILA
Fig. 3), virtualization overhead (HybridMR Fig. 1a) and GPU affinity (Lee §4.4.2).

Each experiment is a probe of :mod:`mrgym.reproduce.probes` repeated over the seeds it is
given; its verdict applies the criterion written in its ``why``.  Paper numbers are quoted
from the papers' text (``shared/papers/``); where a paper gives only a curve's shape, the
criterion tests the shape.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mrgym.reproduce import probes
from mrgym.reproduce.claims import Result, claim
from mrgym.reproduce.stats import exp_vs_linear, figure, mean_ci, pct, plot_file, save

# --------------------------------------------------------------------------------------
# ILA Fig. 1: CPU interference

FIG1_BG = list(range(0, 15))  # background CPU demand in cores (one PiEst map = one core)
FIG1_KNEE_PAPER = 8.0  # "no significant slowdown until the background demand reaches 800"
FIG1_SIGNIFICANT = 1.10  # a slowdown above 10 % counts as significant
FIG1_KNEE_TOL = 2.0  # cores


@claim(
    paper="ila",
    key="ila-fig1",
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
    note = (
        " Our probe (one KMeans map) adds 1 core of its own; the paper's probe VM had 3 "
        "vCPUs, so both knees sit where total demand reaches the 10 cores."
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
    ax.set_title("ILA Fig. 1: CPU interference (KMeans probe)", fontsize=10)
    ax.legend(fontsize=8, frameon=False)
    plot = save(
        fig,
        plot_file(out, "ila-fig1"),
        f"One 10-core Xen host, 8 VMs; background PiEst maps on 7 co-hosted VMs. "
        f"Seeds: {len(seeds)}. Grey line: {pct(FIG1_SIGNIFICANT - 1)} slowdown.",
    )
    return Result(
        ours=ours,
        verdict=verdict,
        why=criterion + "." + note,
        plot=plot,
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


@claim(
    paper="ila",
    key="ila-fig2",
    where="Fig. 2 (§2.2, eq. 2)",
    what="I/O-bound task slowdown vs co-hosted I/O streams: exponential growth",
    paper_value="exponential increase of I/O-bound task time with co-hosted I/O "
    "(fitted by the exponential model of eq. 2)",
    default_seeds=3,
)
def ila_fig2(seeds: list[int], out: Path) -> Result:
    per_seed = np.array(
        [[probes.io_probe(k, s) / probes.io_probe(0, s) for k in FIG2_STREAMS] for s in seeds]
    )
    cis = [mean_ci(per_seed[:, i]) for i in range(len(FIG2_STREAMS))]
    s = np.array([c.mean for c in cis])
    fit = exp_vs_linear(FIG2_STREAMS, s)
    r2e, r2l, b = fit["exp"]["r2"], fit["linear"]["r2"], fit["exp"]["b"]
    increasing = bool(np.all(np.diff(s) > 0))
    convex = bool(np.all(np.diff(s, 2) > 0))
    criterion = (
        "reproduced if the slowdown rises with every added stream, each stream costs more "
        f"than the last (convex), and an exponential fits better than a line with R² > "
        f"{FIG2_MIN_R2}; same direction if it only rises. The paper's text gives the shape, "
        "not values: magnitudes are not checked here (ILA Fig. 8 is the calibration check)"
    )
    if increasing and convex and b > 0 and r2e > r2l and r2e > FIG2_MIN_R2:
        verdict = "reproduced"
    elif increasing:
        verdict = "same direction"
    else:
        verdict = "not reproduced"
    ours = (
        ", ".join(f"{v:.2f}" for v in s[1:])
        + f"x for 1..{FIG2_STREAMS[-1]} streams; R² exp {r2e:.3f} vs linear {r2l:.3f}"
    )

    fig, ax = figure()
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
    ax.set_title("ILA Fig. 2: I/O interference (Sort probe)", fontsize=10)
    ax.legend(fontsize=8, frameon=False)
    plot = save(
        fig,
        plot_file(out, "ila-fig2"),
        f"One Xen host, one shared disk; background Grep maps on co-hosted VMs. "
        f"Seeds: {len(seeds)}.",
    )
    return Result(
        ours=ours,
        verdict=verdict,
        why=criterion + ".",
        plot=plot,
        data={
            "streams": FIG2_STREAMS,
            "slowdown": [c.as_dict() for c in cis],
            "per_seed": per_seed.tolist(),
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
    ax.set_title("ILA Fig. 3: effect of data locality (TeraSort map)", fontsize=10)
    ax.legend(fontsize=8, frameon=False)
    plot = save(
        fig,
        plot_file(out, "ila-fig3"),
        f"24 VMs on 12 hosts, 2 racks, 100 Mbit/s links, 30 % background traffic; one "
        f"100 MB map per level. Seeds: {len(seeds)}.",
    )
    return Result(
        ours=ours,
        verdict=verdict,
        why=criterion + ".",
        plot=plot,
        data={
            "levels": list(probes.LOCALITY_LEVELS),
            "ratio": {k: c.as_dict() for k, c in cis.items()},
            "per_seed_seconds": per_seed.tolist(),
        },
    )


# --------------------------------------------------------------------------------------
# HybridMR Fig. 1(a): virtualization overhead per application

IO_BAND = (0.07, 0.24)  # "I/O-bound jobs ... 7-24 % worse than the physical cluster"
CPU_BOUND = 0.08  # "CPU bound jobs ... the performance difference is within 8 %"
HYBRIDMR_APPS = {
    "twitter": "I/O",
    "wordcount": "I/O",
    "distgrep": "I/O",
    "sort": "I/O",
    "piest": "CPU",
    "kmeans": "CPU",
}


def _overhead_claim(profile: str, kind: str) -> None:
    """Register HybridMR Fig. 1(a)'s claim for one application."""
    if kind == "I/O":
        paper_value = f"{100 * IO_BAND[0]:.0f}-{pct(IO_BAND[1])} slower virtual (I/O-bound)"
        criterion = (
            f"reproduced if the mean overhead over seeds lies in the paper's "
            f"{100 * IO_BAND[0]:.0f}-{pct(IO_BAND[1])}; same direction if it is positive but "
            "outside it"
        )
    else:
        paper_value = f"within {pct(CPU_BOUND)} (CPU-bound)"
        criterion = (
            f"reproduced if the mean overhead is within ±{pct(CPU_BOUND)}; same direction if "
            f"it is positive but below the I/O-bound band's top ({pct(IO_BAND[1])})"
        )

    def run(seeds: list[int], out: Path) -> Result:
        virt = np.array([probes.virt_jct(profile, False, s) for s in seeds])
        native = np.array([probes.virt_jct(profile, True, s) for s in seeds])
        over = virt / native - 1  # per seed: same workload and placement seed on both
        ci = mean_ci(over)
        m = ci.mean
        if kind == "I/O":
            ok = IO_BAND[0] <= m <= IO_BAND[1]
            direction = m > 0
        else:
            ok = abs(m) <= CPU_BOUND
            direction = 0 < m <= IO_BAND[1]
        verdict = "reproduced" if ok else ("same direction" if direction else "not reproduced")
        why = criterion + (
            f". Per-seed overheads range {100 * over.min():+.1f} % to {100 * over.max():+.1f} %"
            f" over {len(seeds)} seed(s), so a single seed can fall outside the band"
        )

        fig, ax = figure(4.6, 3.0)
        ax.scatter(
            np.zeros(len(over)) + np.linspace(-0.08, 0.08, len(over)),
            100 * over,
            s=14,
            color="C0",
            alpha=0.7,
            label="per seed",
        )
        if ci.n > 1:
            ax.errorbar(
                [0.3],
                [100 * m],
                yerr=[100 * ci.half],
                fmt="o",
                color="C3",
                capsize=4,
                label="mean ± 95 % CI",
            )
        else:
            ax.plot([0.3], [100 * m], "o", color="C3", label="mean (1 seed)")
        lo, hi = IO_BAND if kind == "I/O" else (-CPU_BOUND, CPU_BOUND)
        ax.axhspan(100 * lo, 100 * hi, color="C2", alpha=0.15, label="paper's range")
        ax.axhline(0, color="0.4", lw=0.8)
        ax.set_xlim(-0.5, 0.8)
        ax.set_xticks([])
        ax.set_ylabel("virtual vs native JCT (%)")
        ax.set_title(f"HybridMR Fig. 1(a): {profile} ({kind}-bound)", fontsize=10)
        ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        plot = save(
            fig,
            plot_file(out, f"hybridmr-fig1a-{profile}"),
            "One 32-map job on 8 two-core hosts, native vs one Xen VM per host (same slots, "
            "vCPUs); dl-sched.",
        )
        return Result(
            ours=ci.pct(1),
            verdict=verdict,
            why=why,
            plot=plot,
            data={
                "profile": profile,
                "kind": kind,
                "overhead": ci.as_dict(),
                "per_seed_overhead": over.tolist(),
                "virtual_jct_s": virt.tolist(),
                "native_jct_s": native.tolist(),
                "seeds": list(seeds),
            },
        )

    claim(
        paper="hybridmr",
        key=f"hybridmr-fig1a-{profile}",
        where="Fig. 1(a) (§II)",
        what=f"virtualization overhead on JCT, {profile} ({kind}-bound)",
        paper_value=paper_value,
        default_seeds=10,
    )(run)


for _profile, _kind in HYBRIDMR_APPS.items():
    _overhead_claim(_profile, _kind)


# --------------------------------------------------------------------------------------
# Lee §4.4.2 / Fig. 4.11: a GPU node speeds Crypto up, not Sort

LEE_CRYPTO_PAPER = 2.0  # "Crypto, which runs twice faster"
LEE_TOL = 0.25
LEE_SORT_TOL = 0.05  # "no significant difference for Sort"


@claim(
    paper="lee",
    key="lee-fig4.11",
    where="§4.4.2, Fig. 4.11",
    what="replacing one of two cc1.4xlarge by a cg1.4xlarge (GPU): Crypto vs Sort speedup",
    paper_value="Crypto ≈ 2x faster; Sort: no significant difference",
    default_seeds=5,
)
def lee_gpu(seeds: list[int], out: Path) -> Result:
    speed = {
        job: np.array([probes.lee_jct(job, False, s) / probes.lee_jct(job, True, s) for s in seeds])
        for job in ("crypto", "sort")
    }
    cis = {job: mean_ci(v) for job, v in speed.items()}
    c, s = cis["crypto"].mean, cis["sort"].mean
    criterion = (
        f"reproduced if Crypto's speedup is within ±{pct(LEE_TOL)} of 2x and Sort's within "
        f"±{pct(LEE_SORT_TOL)} of 1x; same direction if Crypto gains more than Sort"
    )
    if abs(c / LEE_CRYPTO_PAPER - 1) <= LEE_TOL and abs(s - 1) <= LEE_SORT_TOL:
        verdict = "reproduced"
    elif c > s:
        verdict = "same direction"
    else:
        verdict = "not reproduced"
    ours = f"Crypto {cis['crypto'].fmt(2, unit='x')}; Sort {cis['sort'].fmt(2, unit='x')}"

    fig, ax = figure(4.6, 3.2)
    x = np.arange(2)
    means = [c, s]
    errs = [0 if cis[j].n < 2 else cis[j].half for j in ("crypto", "sort")]
    ax.bar(x - 0.2, means, 0.4, yerr=errs, capsize=4, color="C0", label="ours")
    ax.bar(x + 0.2, [LEE_CRYPTO_PAPER, 1.0], 0.4, color="0.7", label="paper (≈)")
    ax.set_xticks(x, ["Crypto", "Sort"])
    ax.set_ylabel("JCT without GPU / with GPU")
    ax.set_title("Lee Fig. 4.11: speedup from one GPU node", fontsize=10)
    ax.legend(fontsize=8, frameon=False)
    plot = save(
        fig,
        plot_file(out, "lee-fig4.11"),
        "Two-node lee-gpu cluster, each job alone under dl-sched (the paper: Fair; with "
        f"one job the same). Seeds: {len(seeds)}; error bars: 95 % CI.",
    )
    return Result(
        ours=ours,
        verdict=verdict,
        why=criterion + ".",
        plot=plot,
        data={
            "speedup": {j: ci.as_dict() for j, ci in cis.items()},
            "per_seed": {j: v.tolist() for j, v in speed.items()},
        },
    )
