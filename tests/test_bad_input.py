"""Hostile input: every bad scenario, file or flag ends in one line naming the key and what
was expected, never a traceback, a hang or silently accepted nonsense."""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from typing import Any

import numpy as np
import pytest
from helpers import run_cli

from mrgym import ScenarioError, load_scenario
from mrgym.config import (
    EXECUTION_BOUNDS,
    EXECUTION_CHOICES,
    EXECUTION_SWITCHES,
    MAX_FILE_BYTES,
    Scenario,
    parse_yaml,
)
from mrgym.sim.params import ModelParams


def refused(over: dict, source: Any = "ila72") -> str:
    """The one-line message a bad scenario gets."""
    with pytest.raises(ScenarioError) as e:
        load_scenario(source, over)
    msg = str(e.value)
    assert "\n" not in msg and len(msg) < 240, msg
    return msg


def job(**kw: Any) -> dict:
    """ila72 with one explicit job (grep, 3 maps) changed by ``kw``."""
    return {"workload": {"kind": "jobs", "jobs": [{"profile": "grep", "maps": 3, **kw}]}}


# -- hangs: refused by schema bounds -------------------------------------------------------
@pytest.mark.parametrize(
    "over,expect",
    [
        ({"execution.sample_s": 0}, "ila72.execution.sample_s: must be >= 1, got 0"),
        ({"run.max_sim_time_s": math.inf}, "ila72.run.max_sim_time_s: must be a finite number"),
        ({"run.max_sim_time_s": 1e9}, "ila72.run.max_sim_time_s: must be <= 100000000"),
        (
            {"cluster.hosts.0.interactive": {"update_s": 1e-6}},
            "ila72.cluster.hosts.0.interactive.update_s: must be >= 1, got 1e-06",
        ),
        (job(repeat=10**6), "ila72.workload.jobs.0.repeat: must be <= 10000"),
        (job(maps=10**7), "ila72.workload.jobs.0.maps: must be <= 1000000"),
        ({"cluster.hosts.0.count": 10**9}, "ila72.cluster.hosts.0.count: must be <= 20000"),
        (
            {"cluster.hosts.0.count": 4000},  # 24 000 VMs
            "ila72.cluster.hosts: at most 20,000 VMs in all",
        ),
        (
            job(maps=600_000, repeat=2),
            "ila72.workload.jobs: at most 1,000,000 map tasks with repeats, got 1,200,000",
        ),
        (
            {"workload.n_jobs": 100_000},
            "ila72.workload.n_jobs: the mix has 10,760,000 map tasks, more than the limit",
        ),
        (
            {"dynamics.failures": {"mtbf_hours": 0.001, "repair_s": 1}, "run.max_sim_time_s": 1e6},
            "ila72.dynamics.failures.mtbf_hours: 12 hosts over run.max_sim_time_s=1,000,000",
        ),
    ],
)
def test_inputs_that_hung_are_refused(over, expect):
    assert refused(over).startswith(expect)


def test_bundled_scale_scenario_is_within_the_limits():
    sc = load_scenario("ila2400")
    assert sc.workload.n_jobs == 100 and sc.cluster.hosts[0].count * 6 == 2400


# -- tracebacks and nonsense: one line naming the key -----------------------------------------
@pytest.mark.parametrize(
    "over,expect",
    [
        ({"cluster.heartbeat_s": math.inf}, "ila72.cluster.heartbeat_s: must be a finite number"),
        (
            {"execution.noise_draws_per_task": 0},
            "ila72.execution.noise_draws_per_task: must be >= 1",
        ),
        ({"execution.reduce_slowstart": 1.5}, "ila72.execution.reduce_slowstart: must be <= 1"),
        ({"execution.parallel_copies": 0}, "ila72.execution.parallel_copies: must be >= 1"),
        ({"execution.disk_thrash_floor": 1.5}, "ila72.execution.disk_thrash_floor: must be <= 1"),
        ({"execution.disk_thrash_floor": 0}, "ila72.execution.disk_thrash_floor: must be > 0"),
        (
            {"cluster.provision": {"vms": 4, "pool": "gpu"}},
            "ila72.cluster.provision.pool: must be the pool of a host group (['core']), got 'gpu'",
        ),
        (job(maps=None), "ila72.workload.jobs.0.maps: must be an integer, got None"),
        (job(maps=True), "ila72.workload.jobs.0.maps: must be an integer, got True"),
        (job(maps=2.5), "ila72.workload.jobs.0.maps: must be an integer, got 2.5"),
        (job(maps="3"), "ila72.workload.jobs.0.maps: must be an integer, got '3'"),
        (job(reduces=1.5), "ila72.workload.jobs.0.reduces: must be an integer, got 1.5"),
        (job(profile=5), "ila72.workload.jobs.0.profile: must be a job profile name"),
        (job(profile="nope"), "ila72.workload.jobs.0.profile: must be a job profile name"),
        (job(weight=0), "ila72.workload.jobs.0.weight: must be > 0, got 0"),
        (job(weight=-2), "ila72.workload.jobs.0.weight: must be > 0, got -2"),
        (job(weight=math.nan), "ila72.workload.jobs.0.weight: must be a finite number, got nan"),
        (job(input_mb=-1), "ila72.workload.jobs.0.input_mb: must be >= 0, got -1"),
        (job(input_mb=math.nan), "ila72.workload.jobs.0.input_mb: must be a finite number"),
        (job(submit_s=-5), "ila72.workload.jobs.0.submit_s: must be >= 0, got -5"),
        (job(submit_s=math.nan), "ila72.workload.jobs.0.submit_s: must be a finite number"),
        (job(every_s=-1), "ila72.workload.jobs.0.every_s: must be >= 0, got -1"),
        (job(deadline_s=-1), "ila72.workload.jobs.0.deadline_s: must be > 0, got -1"),
        (job(deadline_s=math.nan), "ila72.workload.jobs.0.deadline_s: must be a finite number"),
        (job(repeat=-3), "ila72.workload.jobs.0.repeat: must be >= 1, got -3"),
        (job(repeat=0), "ila72.workload.jobs.0.repeat: must be >= 1, got 0"),
        (job(color="red"), "ila72.workload.jobs.0.color: unknown key"),
        ({"cluster.rack_uplink_mbps": 0}, "ila72.cluster.rack_uplink_mbps: must be in [1, 1e7]"),
        ({"cluster.rack_uplink_mbps": -5}, "ila72.cluster.rack_uplink_mbps: must be in [1, 1e7]"),
        (
            {"cluster.rack_uplink_mbps": math.nan},
            "ila72.cluster.rack_uplink_mbps: must be in [1, 1e7]",
        ),
        (
            {"cluster.rack_uplink_mbps": [800, 0]},
            "ila72.cluster.rack_uplink_mbps.1: must be in [1, 1e7] Mbit/s, got 0",
        ),
        (
            {"cluster.rack_uplink_mbps": [800, math.nan]},
            "ila72.cluster.rack_uplink_mbps.1: must be in [1, 1e7] Mbit/s, got nan",
        ),
        ({"cluster.rack_uplink_mbps": []}, "ila72.cluster.rack_uplink_mbps: must be a number"),
        ({"cluster.rack_uplink_mbps": "fast"}, "ila72.cluster.rack_uplink_mbps: must be a number"),
        (
            {"cluster.hosts.0.vm.map_slots": 0},
            "ila72.cluster.hosts.vm.map_slots: must be >= 1 on some worker VM",
        ),
        (
            {"cluster.hosts.0.vm.reduce_slots": 0},
            "ila72.cluster.hosts.vm.reduce_slots: must be >= 1 on some worker VM",
        ),
        ({"cluster.hosts.0.racks": [-1]}, "ila72.cluster.hosts.0.racks.0: must be >= 0, got -1"),
        ({"cluster.hosts.0.racks": [5]}, "ila72.cluster.hosts.0.racks: rack ids must be < "),
        ({"cluster.sites": 3}, "ila72.cluster.sites: must be <= cluster.racks (2), got 3"),
        (
            {
                "cluster.catalog": {
                    "hot": {"cores": 4, "core_speed": 1, "disk_mbps": 100, "nic_gbps": 1}
                },
                "cluster.catalog.hot.power_idle_w": 200,
                "cluster.catalog.hot.power_max_w": 100,
            },
            "ila72.cluster.catalog.hot.power_max_w: must be >= power_idle_w (200), got 100",
        ),
        ({"workload.profiles": {"grep": 0}}, "ila72.workload.profiles: must give some profile"),
        ({"workload.profiles": {"nope": 1}}, "ila72.workload.profiles.nope: must be a job profile"),
        ({"workload.base_profile": "zzz"}, "ila72.workload.base_profile: must be a job profile"),
        ({"workload": {"kind": "swim", "path": "/"}}, "ila72.workload.path: must be a swim trace"),
        (
            {"workload": {"kind": "rumen", "path": "/no/such/trace.json"}},
            "ila72.workload.path: no such file '/no/such/trace.json'",
        ),
    ],
)
def test_bad_values_name_the_key(over, expect):
    assert refused(over).startswith(expect)


def test_a_map_only_workload_needs_no_reduce_slot():
    sc = load_scenario("lsap-snapshot")  # every VM has reduce_slots: 0, every job reduces: 0
    assert all(g.vm.reduce_slots == 0 for g in sc.cluster.hosts)


def test_messages_stay_short_for_huge_inputs():
    assert refused(job(maps=[1] * 100_000)).startswith("ila72.workload.jobs.0.maps: must be an")
    assert refused(job(name="x" * 100_000)).startswith(
        "ila72.workload.jobs.0.name: must have at most 200 characters, got 100,000"
    )
    assert refused({"cluster": {"k" * 100_000: 1}}).endswith("...: unknown key")
    assert refused({"cluster.hosts.0.racks": [0] * 100_000}).startswith(
        "ila72.cluster.hosts.0.racks: must have at most 2,000 items"
    )
    assert refused({"cluster.hosts.0.type": "t" * 100_000}).startswith(
        "ila72.cluster.hosts.0.type: must have at most 100 characters"
    )


# -- every number is bounded --------------------------------------------------------------
def _numeric(annotation: Any) -> bool:
    """int or float (optionally in Annotated / Optional), not bool."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Annotated:
        return _numeric(args[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(_numeric(a) for a in args if a is not type(None))
    return annotation in (int, float)


def _model(annotation: Any) -> type | None:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        found = [m for m in map(_model, typing.get_args(annotation)) if m is not None]
        return found[0] if found else None
    return (
        annotation if isinstance(annotation, type) and hasattr(annotation, "model_fields") else None
    )


def numeric_keys(model: type, prefix: str, where: dict[str, str]) -> list[str]:
    """Dotted keys of every numeric field; ``where`` maps a nested list/dict field to the
    key of its first item in the base scenario."""
    keys = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        if _numeric(field.annotation):
            keys.append(key)
            continue
        sub = _model(field.annotation)
        if sub is None and key in where:  # list[Model] / dict[str, Model]
            args = typing.get_args(typing.get_args(field.annotation)[0]) or typing.get_args(
                field.annotation
            )
            sub = next(a for a in args if hasattr(a, "model_fields"))
            key = where[key]
        if sub is not None:
            keys += numeric_keys(sub, f"{key}.", where)
    return keys


BASE = {
    "cluster.hosts.0.interactive": {},
    "cluster.provision": {"vms": 2},
    "cluster.catalog": {"t": {"cores": 4, "core_speed": 1, "disk_mbps": 100, "nic_gbps": 1}},
    "dynamics": {"spot": {}, "failures": {"mtbf_hours": 100}},
    "workload.jobs": [{"profile": "grep", "maps": 2}],
}
WHERE = {
    "cluster.hosts": "cluster.hosts.0",
    "cluster.catalog": "cluster.catalog.t",
    "workload.jobs": "workload.jobs.0",
}
# one numeric key of each section, tested whether or not the walk above finds it
SECTION_KEYS = [
    "cluster.heartbeat_s",
    "cluster.hosts.0.vm.map_slots",
    "cluster.hosts.0.interactive.update_s",
    "cluster.catalog.t.power_max_w",
    "cluster.provision.vms",
    "workload.jobs.0.weight",
    "dynamics.failures.repair_s",
    "execution.sample_s",
    "run.max_sim_time_s",
]
KEYS = sorted(set(numeric_keys(Scenario, "", WHERE)) | set(SECTION_KEYS))


@pytest.mark.parametrize("key", KEYS)
def test_every_numeric_key_is_finite_and_bounded(key):
    for bad in (math.inf, -math.inf, math.nan, 1e300, -1e300):
        msg = refused({**BASE, key: bad})
        assert msg.startswith(f"ila72.{key}: must be "), msg


def test_every_model_param_has_bounds():
    names = {f.name for f in dataclasses.fields(ModelParams)}
    assert names <= set(EXECUTION_BOUNDS) | set(EXECUTION_CHOICES) | set(EXECUTION_SWITCHES)


def test_a_switch_param_takes_only_true_or_false():
    msg = refused({**BASE, "execution.guest_page_cache": 1})
    assert msg.startswith("ila72.execution.guest_page_cache: "), msg


def test_a_choice_param_names_its_choices():
    msg = refused({**BASE, "execution.task_choice": "closest"})
    assert "task_choice" in msg and "'hadoop'" in msg and "'lookahead'" in msg, msg


def test_defaults_of_model_params_are_within_bounds():
    load_scenario(
        "ila72", {f"execution.{k}": v for k, v in dataclasses.asdict(ModelParams()).items()}
    )


# -- explicit jobs expand as before ---------------------------------------------------------
def test_explicit_jobs_keep_names_repeats_and_defaults():
    from mrgym.workloads import generate

    sc = load_scenario(
        "ila72",
        {
            "workload": {
                "kind": "jobs",
                "jobs": [
                    {"profile": "Grep", "maps": 3, "user": 7, "weight": 2.5},
                    {"name": "s", "profile": "sort", "maps": 4, "repeat": 2, "every_s": 60},
                ],
            }
        },
    )
    jobs = generate(sc, np.random.default_rng(0))
    assert [j.name for j in jobs] == ["grep-0", "s.0", "s.1"]
    assert jobs[0].user == jobs[0].pool == "7" and jobs[0].weight == 2.5
    assert jobs[0].input_mb == 3 * 128 and jobs[2].submit_s == 60.0
    assert load_scenario(sc, {"hdfs.replication": 2}).workload.jobs == sc.workload.jobs


def test_drawn_workloads_over_the_limit_are_refused():
    from mrgym.workloads import generate

    sc = load_scenario(
        "ila72",
        {
            "workload": {
                "kind": "synthetic",
                "n_jobs": 1000,
                "maps_median": 5000,
                "maps_sigma": 0,
                "max_maps": 5000,
            }
        },
    )
    with pytest.raises(ValueError, match=r"workload: 5,000,000 map tasks, more than the limit"):
        generate(sc, np.random.default_rng(0))


def test_provision_into_a_missing_pool_fails_cleanly_in_build():
    from mrgym.sim.build import build_topology

    sc = load_scenario("tara80")
    prov = sc.cluster.provision.model_copy(update={"pool": "gpu"})
    cluster = sc.cluster.model_copy(update={"provision": prov})
    with pytest.raises(ValueError, match=r"cluster.provision.pool: must be the pool of a host"):
        build_topology(cluster, sc.hdfs, ModelParams(), np.random.default_rng(0))


# -- files ----------------------------------------------------------------------------------
MINI = "cluster:\n  hosts: [{count: 2, type: generic-4core}]\nworkload: {kind: jobs, jobs: [{profile: grep, maps: 3}]}\nhdfs: {replication: 2}\n"


def test_duplicate_yaml_keys_are_refused(tmp_path):
    p = tmp_path / "dup.yaml"
    p.write_text("name: dup\ncluster:\n  racks: 1\n  racks: 2\n" + MINI.split("\n", 1)[1])
    with pytest.raises(ScenarioError, match=re.escape(f"{p}:4: duplicate key 'racks'")):
        load_scenario(p)


def test_yaml_merge_keys_still_work(tmp_path):
    p = tmp_path / "merge.yaml"
    p.write_text(
        "cluster:\n  hosts: [{<<: {count: 1, type: generic-4core}, count: 2}]\n"
        + MINI.split("\n", 2)[2]
    )
    assert load_scenario(p).cluster.hosts[0].count == 2


@pytest.mark.parametrize(
    "text,expect",
    [
        ("cluster: !!python/object:os.system {}\n", r":1: not valid YAML: could not determine"),
        # libyaml says "did not find expected", PyYAML's pure parser "expected"
        ("cluster: [1\n", r":2: not valid YAML: (did not find )?expected ',' or ']'"),
        ("- 1\n- 2\n", r": must be a mapping of keys, got list"),
    ],
)
def test_bad_yaml_is_one_line(tmp_path, text, expect):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(ScenarioError, match=re.escape(str(p)) + expect) as e:
        load_scenario(p)
    assert "\n" not in str(e.value)


def test_directories_and_missing_files_as_config(tmp_path):
    d = tmp_path / "conf.yaml"
    d.mkdir()
    with pytest.raises(ScenarioError, match=r"is not a file \(a directory\?\)"):
        load_scenario(d)
    with pytest.raises(ScenarioError, match=r"scenario path '.+' is a directory"):
        load_scenario(tmp_path)
    with pytest.raises(ScenarioError, match=r"scenario path '/tmp' is a directory"):
        load_scenario("/tmp")
    with pytest.raises(ScenarioError, match="does not exist"):
        load_scenario(tmp_path / "none.yaml")


# -- the CLI ------------------------------------------------------------------------------
def cli_error(*args: str) -> str:
    r = run_cli(*args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mrgym: error: "), r.stderr
    return lines[0][len("mrgym: error: ") :]


def test_cli_set_errors_are_one_line():
    msg = cli_error("simulate", "--set", "cluster.racks=[1")
    assert re.match(
        r"--set 'cluster.racks=\[1': not valid YAML: (did not find )?expected ',' or ']'", msg
    )
    msg = cli_error("simulate", "--set", "cluster.racks=!!python/object:os.system {}")
    assert "not valid YAML: could not determine a constructor" in msg
    msg = cli_error("simulate", "--set", "cluster={racks: 1, racks: 2}")
    assert msg == "--set 'cluster={racks: 1, racks: 2}': duplicate key 'racks'"
    assert cli_error("simulate", "--set", "run.max_sim_time_s=.inf").startswith(
        "ila72.run.max_sim_time_s: must be a finite number"
    )
    assert cli_error("simulate", "--set", "execution.sample_s=0").startswith(
        "ila72.execution.sample_s: must be >= 1"
    )


def test_cli_unknown_names_suggest_the_closest_known_one():
    assert cli_error("simulate", "--config", "ila27").startswith(
        "unknown scenario 'ila27' (did you mean 'ila72'?); expected one of ["
    )
    assert cli_error("simulate", "--set", "hdfs.replicaton=2") == (
        "ila72.hdfs.replicaton: unknown key (did you mean 'replication'?)"
    )
    # inside a list item, and in the execution section built from the model's parameters
    assert cli_error("simulate", "--set", "cluster.hosts.0.cnt=2").endswith(
        "unknown key (did you mean 'count'?)"
    )
    assert cli_error("simulate", "--set", "execution.disk_thrsh=1").endswith(
        "(did you mean 'disk_thrash'?)"
    )
    assert cli_error("simulate", "--set", "hdfs.zzzz=1") == "ila72.hdfs.zzzz: unknown key"
    assert cli_error("compare", "--schedulers", "fifo,dealy").startswith(
        "unknown scheduler 'dealy' (did you mean 'delay'?)"
    )


def test_cli_paths_are_checked(tmp_path):
    assert cli_error("simulate", "--config", "/tmp") == (
        "scenario path '/tmp' is a directory, expected a YAML file"
    )
    assert cli_error("compare", "--config", str(tmp_path / "x.yaml")).endswith("does not exist")
    p = tmp_path / "dup.yaml"
    p.write_text("cluster: {}\ncluster: {}\n")
    assert cli_error("simulate", "--config", str(p)) == f"{p}:2: duplicate key 'cluster'"
    assert cli_error("simulate", "--config", "lee-gpu", "--log", str(tmp_path)).startswith("--log")
    f = tmp_path / "file"
    f.write_text("")
    assert cli_error("compare", "--config", "lee-gpu", "--out", str(f), "--schedulers", "fifo")
    assert cli_error(
        "simulate",
        "--config",
        "ila72",
        "--set",
        f"workload={{kind: swim, path: {tmp_path}}}",
    ).startswith("ila72.workload.path: must be a swim trace file, got a directory")


def test_cli_seeds_are_checked():
    assert (
        cli_error("compare", "--seeds", "0-100000000")
        == "--seeds '0-100000000': at most 10,000 seeds"
    )
    assert cli_error("simulate", "--seed", "-1").startswith("--seed -1: must be >= 0")


def test_metric_table_has_jobs_failed_after_jobs_completed():
    from mrgym.cli import METRIC_LABELS, metrics_table
    from mrgym.runner import run_sim

    keys = [k for k, _ in METRIC_LABELS]
    assert keys[keys.index("jobs_completed") + 1] == "jobs_failed"
    # lee-gpu's machines replaced with empty disks: one job loses a block and fails
    over = {"dynamics.failures": {"mtbf_hours": 0.05, "repair_s": 60, "keeps_disk": False}}
    table = metrics_table(run_sim(load_scenario("lee-gpu", over), "dl-sched", 4))
    assert re.search(r"^jobs failed +1$", table, re.M), table


# -- found by a hostile re-check ----------------------------------------------------------
def test_exponent_numbers_read_as_numbers():
    # YAML 1.1 wants a dot in a float; the bounds are documented as "1e8 s"
    sc = load_scenario("lee-gpu", {"run.max_sim_time_s": 1e8})
    assert sc.run.max_sim_time_s == 1e8
    assert cli_error(
        "simulate", "--config", "hybrid48", "--set", "cluster.hosts.0.interactive.update_s=1e-6"
    ).endswith("update_s: must be >= 1, got 1e-06")
    p = parse_yaml("a: 1e8\nb: -2.5E-3\nc: '1e8'\nd: 1_000\n", "x")
    assert p == {"a": 1e8, "b": -2.5e-3, "c": "1e8", "d": 1000}


def test_a_huge_scenario_file_is_refused_before_parsing(tmp_path):
    p = tmp_path / "big.yaml"
    p.write_text("# padding\n" * (MAX_FILE_BYTES // 10 + 1))
    with pytest.raises(ScenarioError, match=r"big.yaml is larger than 4 MiB"):
        load_scenario(str(p))


def test_training_configs_get_the_scenario_reader_checks(tmp_path):
    cases = {
        "dup.yaml": (
            "name: x\ntotal_steps: 5\ntotal_steps: 6\n",
            "dup.yaml:3: duplicate key 'total_steps'",
        ),
        "list.yaml": ("[1, 2]\n", "list.yaml: must be a mapping of keys, got list"),
        "num.yaml": ("5\n", "num.yaml: must be a mapping of keys, got int"),
        "py.yaml": ("x: !!python/object:os.system {}\n", "py.yaml:1: not valid YAML"),
    }
    for name, (text, want) in cases.items():
        (tmp_path / name).write_text(text)
        assert cli_error("train", "--config", str(tmp_path / name)).startswith(want)
    (tmp_path / "latin.yaml").write_bytes(b"name: \xff\n")
    assert cli_error("train", "--config", str(tmp_path / "latin.yaml")) == (
        "training config file latin.yaml cannot be read: not UTF-8 text"
    )
    assert cli_error("train", "--config", str(tmp_path / "nope.yaml")).endswith("does not exist")


def test_environment_arguments_are_checked():
    import gymnasium as gym

    with pytest.raises(ValueError, match=r"job_slots: must be in \[1, 1024\], got 10000000"):
        gym.make("MRCluster-v0", job_slots=10**7)
    for bad in (5, None, [1]):
        with pytest.raises(ScenarioError, match="config: must be a bundled scenario name"):
            gym.make("MRCluster-v0", config=bad)
    with pytest.raises(ScenarioError, match="config: the scenario name is empty"):
        gym.make("MRCluster-v0", config="")
    with pytest.raises(ValueError, match="overrides: must be a dict of scenario keys, got list"):
        gym.make("MRCluster-v0", overrides=[1])


def test_cli_reports_reversed_seeds_missing_models_and_truncation():
    assert (
        cli_error("compare", "--seeds", "5-2")
        == "--seeds '5-2': the range 5-2 runs backwards; write 2-5"
    )
    assert cli_error("evaluate", "--model", "/nonexistent/model.zip").startswith(
        "no saved model at /nonexistent/model.zip"
    )
    # 80 s: before both of lee-gpu's jobs can end; the line counts the unfinished ones
    r = run_cli("simulate", "--config", "lee-gpu", "--set", "run.max_sim_time_s=80")
    assert r.returncode == 0
    m = re.search(r"TRUNCATED at 80.0 s: (\d) of 2 job\(s\) not finished", r.stdout)
    done = re.search(r"jobs completed\s+(\d+)", r.stdout)
    assert m and done and int(m.group(1)) == 2 - int(done.group(1)) >= 1


def test_cli_output_into_a_closed_pipe_stops_quietly():
    import subprocess
    import sys

    p = subprocess.Popen(
        [sys.executable, "-m", "mrgym.cli", "simulate", "--config", "lee-gpu"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    p.stdout.close()  # the reader is gone before anything is written (`| head -0`)
    err = p.stderr.read().decode()
    assert p.wait() == 0 and err == "", err
