"""Each job has random streams of its own (mrgym/sim/rng.py): two jobs with the same name
and the same input draw different luck and different block replicas, and a job's draws
do not depend on the other jobs of the workload."""

from __future__ import annotations

from mrgym.config import load_scenario
from mrgym.registry import make
from mrgym.sim.rng import job_keys
from mrgym.sim.simulation import Simulation


def _jobs(names: list[str]) -> list:
    """ila72's cluster with one 20-map wordcount job per name, all submitted at 0 s, each
    drawn (its tasks' noise, its input blocks' replicas) as it would be at arrival."""
    jobs = [{"profile": "wordcount", "maps": 20, "submit_s": 0, "name": n} for n in names]
    sc = load_scenario("ila72", {"workload": {"kind": "jobs", "jobs": jobs}})
    sim = Simulation(sc, make("fifo"), 11)
    for job in sim.tracker.jobs:
        sim.materialize(job)
    return sim.tracker.jobs


def _draws(job) -> tuple[list, list]:
    """(every task's noise, every map's block replicas as VM ids)."""
    noise = [t.noise for t in job.maps + job.reduces]
    replicas = [[v.id for v in t.block.replicas] for t in job.maps]
    return noise, replicas


def test_two_jobs_with_the_same_name_draw_their_own_luck_and_blocks():
    a0, a1 = _jobs(["a", "a"])
    (noise0, rep0), (noise1, rep1) = _draws(a0), _draws(a1)
    assert a0.spec.input_mb == a1.spec.input_mb and len(rep0) == len(rep1) == 20
    assert noise0 != noise1
    assert rep0 != rep1
    # not the same draws shifted by one task either: most maps differ
    assert sum(x != y for x, y in zip(rep0, rep1)) >= 10


def test_a_job_of_another_name_changes_neither_repeat():
    twice = [_draws(j) for j in _jobs(["a", "a"])]
    # "b" between the two: the second "a" is still the name's second job
    a0, b, a1 = _jobs(["a", "b", "a"])
    assert [_draws(a0), _draws(a1)] == twice
    assert _draws(b) not in twice


def test_job_keys_count_each_names_repeats():
    ka0, kb, ka1 = job_keys(["a", "b", "a"])
    assert len({ka0, kb, ka1}) == 3
    assert job_keys(["a", "a"]) == [ka0, ka1]  # the key follows the name and its repeat
    assert job_keys(["b"]) == [kb]
