"""The calibration targets: every number the fit of :mod:`mrgym.calibration.fit` aims at,
with where it comes from (docs/calibration.md says which claims are calibration).

A target is a value and a tolerance: its residual is ``(measured - value) / tol``, so
``|residual| <= 1`` means "within the claim's own criterion" where the target is a claim
(the tolerances of ILA Fig. 8 and HybridMR Fig. 1(a) are those of their claims), and a
stated choice where the source gives a number without a tolerance (the Rumen trace).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    key: str
    value: float
    tol: float  # |measured - value| <= tol: on target
    source: str

    def residual(self, measured: float) -> float:
        return (measured - self.value) / self.tol


# --- stage A: native variability ------------------------------------------------------
# Hadoop Rumen trace of 19 jobs (Apache Hadoop's Mumak test data, a native production
# cluster, April 2009; docs/traces.md). Successful map attempts' durations, each divided
# by its job's median, pooled over the jobs with >= 10 successful maps (5 641 maps, 12
# jobs): p90 = 1.1693, p99 = 1.8565 of the median (mrgym.calibration.probes.rumen_dispersion
# recomputes them from the trace when it is present; the test checks it does).
RUMEN_SHA256 = "95b7b8cc99ac5aee6173d9a01641ed88354701dc1f3a7a882e84661bcc98e1c8"
RUMEN_FILE = "rumen_mumak_19jobs/19-jobs.trace.json.gz"
RUMEN_MIN_MAPS = 10
RUMEN_MAPS = 5641
# its topology file: 41 racks of 28-40 hosts (median 39)
RUMEN_RACK_HOSTS = 39
# tolerances: our choice, about the spread of the per-job ratios of the trace's jobs with
# >= 100 maps (p90/p50 1.03-1.66, p99/p50 1.3-2.7), narrowed so the fit has to land near
# the pooled value
RUMEN = (
    Target("rumen-p90/p50", 1.1693, 0.05, "Rumen 19-job trace, pooled per-job-normalised maps"),
    Target("rumen-p99/p50", 1.8565, 0.15, "Rumen 19-job trace, pooled per-job-normalised maps"),
)
# Lee §5.2 (Fig. 5.2): map and reduce task durations are long-tailed and a log-normal
# fits them better than a normal; the thesis gives the fit only as a figure (no sigma in
# the text), so this is a shape target: the probe's log-normal log-likelihood must not be
# below the normal's (residual 0 when it holds, the per-map gap otherwise).
LEE_LOGNORMAL = Target(
    "lee-5.2-lognormal-better", 0.0, 0.05, "Lee thesis §5.2, Fig. 5.2 (shape only)"
)

# --- stage B: virtualization overheads ---------------------------------------------------
# HybridMR §II Fig. 1(a): "I/O-bound jobs ... 7-24 % worse than the physical cluster";
# "CPU bound jobs ... the performance difference is within 8 %" (claims hybridmr-fig1a-*,
# the same probe: one 32-map job on 8 two-core hosts, native vs one Xen VM per host).
HYBRIDMR_IO = ("twitter", "wordcount", "distgrep", "sort")
HYBRIDMR_CPU = ("piest", "kmeans")
HYBRIDMR = tuple(
    Target(f"hybridmr-fig1a-{p}", 0.155, 0.085, "HybridMR Fig. 1(a): I/O-bound 7-24 %")
    for p in HYBRIDMR_IO
) + tuple(
    # "within 8 %" of a cost that is never negative: the band 0-8 %, its middle the
    # target as for the I/O band (a centre of 0 would fit the CPU overhead away)
    Target(f"hybridmr-fig1a-{p}", 0.04, 0.04, "HybridMR Fig. 1(a): CPU-bound 0-8 %")
    for p in HYBRIDMR_CPU
)

# --- stage C: virtual interference -------------------------------------------------------
# ILA §5.2 Fig. 8, both of its distributions: PureFair's (claim ila-fig8-purefair; its
# tolerances ±10/±15/±7 points) and ILA's own (claim ila-fig8-ila; ±10 points each): one
# parameter set must explain why the oblivious schedule slows tasks and why the
# interference-aware one does not
ILA_FIG8 = (
    Target("ila-fig8-purefair-le1.1", 0.15, 0.10, "ILA Fig. 8: ~15 % of tasks without slowdown"),
    Target("ila-fig8-purefair-gt2", 0.60, 0.15, "ILA Fig. 8: up to ~60 % > 2x"),
    Target("ila-fig8-purefair-gt10", 0.10, 0.07, "ILA Fig. 8: ~10 % > 10x"),
)
ILA_FIG8_ILA = (
    Target("ila-fig8-ila-le1.1", 0.70, 0.10, "ILA Fig. 8: under ILA 70 % without slowdown"),
    Target("ila-fig8-ila-lt1.5", 0.90, 0.10, "ILA Fig. 8: under ILA 90 % < 1.5x"),
    Target("ila-fig8-ila-lt2.5", 0.99, 0.10, "ILA Fig. 8: under ILA 99 % < 2.5x"),
)
# penalties: ILA Fig. 1-3 stay within their claims' criteria (claims ila-fig1/2/3). A
# penalty is 0 inside and grows linearly outside, in units of the criterion's tolerance.
FIG1_FLAT_BG = 5  # the knee must stay >= 8 - 2 cores: no > 10 % slowdown at 5 cores
FIG1_KNEE_BG = 10  # ... and <= 8 + 2: a > 10 % slowdown at 10 cores
FIG1_SIGNIFICANT = 1.10
FIG3_PAPER = {"server": 1.0, "rack": 3.0, "off_rack": 4.0}
FIG3_TOL = 0.25


def all_targets() -> dict[str, Target]:
    """Every target by key."""
    ts = (*RUMEN, LEE_LOGNORMAL, *HYBRIDMR, *ILA_FIG8, *ILA_FIG8_ILA)
    return {t.key: t for t in ts}
