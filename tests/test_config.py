"""Scenarios: every bundled one loads and runs; bad ones fail with one line naming the key."""

from __future__ import annotations

import pytest
from helpers import run_cli

import mrgym
from mrgym import ScenarioError, load_scenario

BUNDLED = [
    "ila72",
    "pna60",
    "lsap-snapshot",
    "hybrid48",
    "hybrid48-peak",
    "lee-gpu",
    "lee-cloud",
    "tara80",
    "ila2400",
]


def test_all_design_scenarios_are_bundled():
    assert set(BUNDLED) <= set(mrgym.available_scenarios())


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_scenario_loads(name):
    sc = load_scenario(name)
    assert sc.name == name
    assert sc.description


def test_bundled_yaml_keys_are_commented():
    """Every key with a value carries a comment (docs/model.md §6 / STYLE: YAML with a comment on
    every key)."""
    import re

    from mrgym.config import CONFIG_DIR

    keyval = re.compile(r"^\s*(- )?[\w.-]+:\s*[^\s#>]")
    for path in sorted(CONFIG_DIR.rglob("*.yaml")):
        in_description = False
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if line.startswith("description:"):
                in_description = True
                continue
            if in_description and line.startswith("  "):
                continue
            in_description = False
            if line.startswith("name:") or not keyval.match(line):
                continue
            assert "#" in line, f"{path.name}:{n}: key without a comment: {line.strip()}"


@pytest.mark.parametrize("name", ["lsap-snapshot", "lee-gpu", "hybrid48"])
def test_small_bundled_scenarios_run(name):
    m = mrgym.run_sim(name, "dl-sched", 0).metrics
    assert m["jobs_completed"] == m["jobs_submitted"] > 0


def test_hybrid48_peak_differs_from_hybrid48_in_the_load_cycle_only():
    """hybrid48-peak moves the interactive load's peak into the batch (HybridMR §IV Fig.
    9(a): SLAs breached at minutes 12-14); everything else is hybrid48's."""
    base = load_scenario("hybrid48").model_dump()
    peak = load_scenario("hybrid48-peak").model_dump()
    apps = [g["interactive"] for g in peak["cluster"]["hosts"] if g["interactive"]]
    assert [a["period_s"] for a in apps] == [1200.0]  # the peak at 600 s, within ~10 minutes
    for sc in (base, peak):
        sc.pop("name"), sc.pop("description")
        for g in sc["cluster"]["hosts"]:
            if g["interactive"]:
                g["interactive"].pop("period_s")
    assert peak == base


def test_ila72_matches_the_paper_setup():
    sc = load_scenario("ila72")
    from mrgym.runner import build_simulation

    sim = build_simulation(sc, "fifo", 0)
    assert len(sim.topo.hosts) == 12 and len(sim.topo.workers) == 72 and len(sim.topo.racks) == 2
    assert sum(v.map_slots for v in sim.topo.workers) == 144  # "a total of 144 map slots"
    assert sum(v.reduce_slots for v in sim.topo.workers) == 72
    assert len(sim.jobs) == 25
    sizes = sorted(len(j.maps) for j in sim.jobs)
    assert sizes.count(1) == 8 and sizes.count(2) == 6 and max(sizes) == 1000  # Table 4


def test_ila2400_totals():
    from mrgym.runner import build_simulation

    sim = build_simulation("ila2400", "fifo", 0)
    assert len(sim.topo.workers) == 2400
    assert abs(sum(len(j.maps) for j in sim.jobs) - 15000) <= 100
    assert abs(sum(len(j.reduces) for j in sim.jobs) - 5000) <= 100


@pytest.mark.parametrize(
    "over,key",
    [
        ({"cluster.foo": 1}, "ila72.cluster.foo: unknown key"),
        ({"cluster.racks": 0}, "ila72.cluster.racks: must be >= 1, got 0"),
        ({"hdfs.block_mb": -64}, "ila72.hdfs.block_mb: must be > 0"),
        ({"cluster.hosts.0.count": -3}, "ila72.cluster.hosts.0.count: must be >= 1"),
        (
            {"hdfs.replication": 99},
            "ila72.hdfs.replication: must be <= the number of DataNodes (72), got 99",
        ),
        (
            {"cluster.hosts.0.vms_per_host": 0},
            "ila72.cluster.hosts: must provide at least one worker VM",
        ),
        ({"cluster.hosts.0.type": "m9.huge"}, "ila72.cluster.hosts.0.type: must be one of"),
        ({"hdfs.placement": "nearest"}, "ila72.hdfs.placement:"),
        ({"workload.kind": "swim"}, "ila72.workload.path: is required"),
    ],
)
def test_bad_scenarios_name_the_key(over, key):
    with pytest.raises(ScenarioError) as e:
        load_scenario("ila72", over)
    msg = str(e.value)
    assert msg.startswith(key), msg
    assert "\n" not in msg


def test_unknown_scenario_and_file():
    with pytest.raises(ScenarioError, match="unknown scenario 'nope'"):
        load_scenario("nope")
    with pytest.raises(ScenarioError, match="does not exist"):
        load_scenario("missing/file.yaml")


def test_yaml_path_and_dict(tmp_path):
    p = tmp_path / "mine.yaml"
    p.write_text(
        "cluster:\n  hosts: [{count: 2, type: generic-4core}]\nworkload: {kind: jobs, jobs: [{profile: grep, maps: 3}]}\nhdfs: {replication: 2}\n"
    )
    sc = load_scenario(p)
    assert sc.name == "mine"
    m = mrgym.run_sim(sc, "fifo", 0).metrics
    assert m["jobs_completed"] == 1 and m["tasks_completed"] == 3 + 1


def test_cli_error_is_one_line_without_traceback():
    r = run_cli("simulate", "--config", "ila72", "--set", "cluster.racks=0")
    assert r.returncode == 2
    assert r.stderr.strip() == "mrgym: error: ila72.cluster.racks: must be >= 1, got 0"
    assert "Traceback" not in r.stderr


def test_cli_simulate_prints_table_and_json():
    r = run_cli("simulate", "--config", "lee-gpu", "--scheduler", "fifo")
    assert r.returncode == 0, r.stderr
    assert "mean JCT (s)" in r.stdout and "map locality: node" in r.stdout
    r = run_cli("simulate", "--config", "lee-gpu", "--json")
    import json

    m = json.loads(r.stdout)
    for key in [
        "jobs_submitted",
        "jobs_completed",
        "tasks_completed",
        "tasks_reexecuted",
        "mean_jct_s",
        "median_jct_s",
        "p95_jct_s",
        "makespan_s",
        "throughput_jobs_per_h",
        "map_locality",
        "shuffle_cross_rack_bytes",
        "fairness_jain",
        "slot_utilization",
        "cost_usd",
        "energy_kwh",
        "sla_violation_s",
    ]:
        assert key in m
    assert set(m["map_locality"]) == {"node", "server", "rack", "off_rack"}


def test_cli_compare_writes_table_csv_and_plots(tmp_path):
    r = run_cli(
        "compare",
        "--config",
        "lee-gpu",
        "--seeds",
        "0-1",
        "--schedulers",
        "fifo,fair",
        "--out",
        str(tmp_path),
    )
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("| ")]
    assert lines[0].startswith("| policy | mean JCT (s)") and len(lines) == 3  # header + 2 policies
    # two seeds: each mean with its range [min, max], not a 95 % interval (summary.SMALL_N)
    assert lines[1].startswith("| fifo |") and " [" in lines[1] and " ± " not in lines[1]
    import csv

    with open(tmp_path / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4 and {r["policy"] for r in rows} == {"fifo", "fair"}
    for png in ("jct_cdf.png", "locality.png", "throughput_fairness.png"):
        assert (tmp_path / png).stat().st_size > 1000


def test_cli_compare_rejects_bad_input():
    r = run_cli("compare", "--schedulers", "fifo,nope")
    assert r.returncode == 2 and "unknown scheduler 'nope'" in r.stderr
    r = run_cli("compare", "--seeds", "a-b")
    assert r.returncode == 2 and "--seeds 'a-b'" in r.stderr
