"""Each claim's role in the reproduction: the one table that says which claims the model's
parameters were fitted on and which are evidence (issue 34, "calibrate, then validate").

- ``calibration``: a number the model's parameters are fitted on (:mod:`mrgym.calibration`)
  or were set from; the row shows that the fit holds, not that the model predicts it.
- ``validation``: every other claim on the simulator; the verdict counts that measure the
  model are these rows' (:func:`mrgym.reproduce.report.role_counts`).
- ``paper's model``: the claim re-runs the paper's own analytical or Monte-Carlo model
  (lsap §III.B's idle-slot snapshots), not the simulator; its verdict judges that model
  and the scheduler code on it, never the simulated cluster.
- ``probe``: a mechanism shown in isolation (keys starting ``probe-``), no paper number.

``docs/calibration.md`` lists the same table (a test compares them). A key missing here is
an error: a new claim must be classified before it can be reported.
"""

from __future__ import annotations

CALIBRATION = "calibration"
VALIDATION = "validation"
PAPERS_MODEL = "paper's model"
PROBE = "probe"
ROLES = (CALIBRATION, VALIDATION, PAPERS_MODEL, PROBE)
PROBE_PREFIX = "probe-"

_CALIBRATION = (
    # ILA §2.2-2.3: the interference and locality curves the model's functions are fitted to
    "ila-fig1",
    "ila-fig2",
    "ila-fig3",
    # ILA Fig. 8, PureFair's and ILA's own distributions: the targets of the
    # virtual-interference stage (one parameter set explains both)
    "ila-fig8-purefair",
    "ila-fig8-ila",
    # HybridMR Fig. 1(a): the virtualization overheads are set from these bands
    "hybridmr-fig1a-twitter",
    "hybridmr-fig1a-wordcount",
    "hybridmr-fig1a-distgrep",
    "hybridmr-fig1a-sort",
    "hybridmr-fig1a-piest",
    "hybridmr-fig1a-kmeans",
    # Lee Fig. 4.11: the platforms' gpu_speedup is set from this figure's numbers, so the
    # row reads back an input (issue 34's count of readbacks)
    "lee-fig4.11",
    # Lee §4.4.1: the thesis names no data size; lee-cloud's gridmix2 size class was chosen
    # as the one that fits these rows' round times (5m1 overloaded, 5m1+4c1 in 2-3 h), and
    # the cost row's 3 billed hours per accelerator are that same round time
    "lee-4.4.1-rounds",
    "lee-4.4.1-cost",
)
# lsap: every verdict is computed on §III.B's snapshot model (random idle slots and
# replicas, the schedulers' assignment code on them); the simulator lines of 4(a), 4(b),
# 6(c) and 6(f) are shown beside it but decide nothing
_PAPERS_MODEL = (
    "lsap-fig4a",
    "lsap-fig4b",
    "lsap-fig4c",
    "lsap-fig5",
    "lsap-fig6abh",
    "lsap-fig6c",
    "lsap-fig6d",
    "lsap-fig6eg",
    "lsap-fig6f",
)
_VALIDATION = (
    "ila-fig8",
    "ila-fig7",
    "ila-table1",
    "ila-classic",
    "ila-fig5",
    "ila-fig6",
    "ila-fig7-ila",
    "ila-ablation",
    "ila-table5",
    "ila-scalability",
    "ila-fig12",
    # lsap §IV.D Fig. 8 runs Hadoop on a real cluster (rand-sched vs dl-sched), not lsap
    # §III.B's snapshot model: a simulator claim
    "lsap-fig8",
    "pna-jct",
    "pna-table3",
    "hybridmr-fig6a",
    "hybridmr-fig8a",
    "hybridmr-fig8b",
    "hybridmr-sla",
    "hybridmr-fig9",
    "lee-predict-dist",
    "lee-predict-workers",
    "lee-predict-deadline",
    "lee-predict-online",
    "lee-ps-jct",
    "lee-ps-share",
    "lee-tara-jct",
    "lee-tara-accuracy",
    "lee-tara-random",
    "lee-tara-ga-sensitivity",
)

TABLE: dict[str, str] = {
    **{k: CALIBRATION for k in _CALIBRATION},
    **{k: PAPERS_MODEL for k in _PAPERS_MODEL},
    **{k: VALIDATION for k in _VALIDATION},
}


def role(key: str) -> str:
    """The role of claim ``key``: one of :data:`ROLES`; a key neither in :data:`TABLE` nor
    starting ``probe-`` is a ``ValueError`` (classify the new claim here and in
    docs/calibration.md)."""
    if key.startswith(PROBE_PREFIX):
        return PROBE
    try:
        return TABLE[key]
    except KeyError:
        raise ValueError(
            f"claim {key!r} has no role: add it to mrgym/reproduce/roles.py and "
            "docs/calibration.md as calibration, validation or paper's model"
        ) from None
