"""ILA Fig. 8's reference: a map's time alone on an idle node (``alone_time``) equals a
one-map simulation of it, write-back cache included; and the ILA mix's generators write
``workload.generator_mb`` per map (issue "Fidelity III")."""

from __future__ import annotations

import copy

import pytest

from mrgym.config import load_scenario
from mrgym.reproduce.ila_runs import alone_time
from mrgym.runner import build_simulation

QUIET = {"execution.noise_sigma": 0.0, "execution.noise_tail_p": 0.0}


@pytest.mark.parametrize(
    "profile, reduces, input_mb",
    [
        ("terasort", 1, None),
        ("grep", 1, None),
        ("wordcount", 1, None),
        ("teragen", 0, None),
        ("teragen", 0, 32.0),
        ("piest", 1, None),
        ("terasort", 1, 1024.0),
        ("teragen", 0, 1024.0),  # over the cache budget: no flusher beside the pipeline
    ],
)
def test_alone_time_is_a_one_map_simulation(profile, reduces, input_mb):
    base = load_scenario("ila72").model_dump()
    data = copy.deepcopy(base)
    job = {"profile": profile, "maps": 1, "reduces": reduces}
    if input_mb is not None:
        job["input_mb"] = input_mb  # 1 GB: a map output over the guest's cache budget
    data["workload"] = {"kind": "jobs", "jobs": [job]}
    sim = build_simulation(load_scenario(data, QUIET), "fair", 0)
    sim.run()
    (a,) = [a for a in sim.attempts if a.task.kind == "map"]
    # a map-only job's pipeline shares Dom0 with its write-back (alone_time's docstring)
    rel = 1e-6 if reduces else 0.05
    assert alone_time(sim, a) == pytest.approx(a.end_s - a.start_s, rel=rel)


def test_generator_maps_write_generator_mb():
    for mb in (None, 40.0):
        sc = load_scenario("ila72", {"workload.generator_mb": mb})
        sim = build_simulation(sc, "fair", 0)
        gen = [j for j in sim.jobs if j.profile.name in ("teragen", "randomwriter")]
        other = [j for j in sim.jobs if j.profile.name == "terasort"]
        want = 128.0 if mb is None else mb
        assert gen and all(t.input_mb == want for j in gen for t in j.maps)
        assert all(t.input_mb == 128.0 for j in other for t in j.maps)
