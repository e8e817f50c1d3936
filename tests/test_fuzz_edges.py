"""Edges a fuzzer found (config, trace, env and API cases), kept as tests: each one ends in
a one-line ValueError naming the argument or key and what was expected, is refused instead
of silently accepted, or (idle time) costs nothing."""

from __future__ import annotations

import gzip
import json
import math
import random
import threading

import gymnasium as gym
import numpy as np
import pytest

import mrgym  # noqa: F401  (registers MRCluster-v0)
from mrgym import ScenarioError, load_scenario
from mrgym.config import parse_yaml
from mrgym.metrics import episode_metrics
from mrgym.runner import build_simulation, run_sim
from mrgym.sim.monitoring import Monitor, delay_to, last_tick_before
from mrgym.summary import SMALL_N, markdown_table, summarize
from mrgym.workloads import rumen, swim
from mrgym.workloads.trace_sizing import MAX_TRACE_BYTES


def one_line(exc: pytest.ExceptionInfo) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and len(msg) < 240, msg
    return msg


def jobs_at(*submits: float, **over) -> dict:
    """ila72 overrides: one grep job of 3 maps submitted at each time of ``submits``."""
    jobs = [{"profile": "grep", "maps": 3, "submit_s": t} for t in submits]
    return {"workload": {"kind": "jobs", "jobs": jobs}, **over}


# -- a Rumen .json.gz bomb ------------------------------------------------------------------
def test_a_gzip_bomb_is_stopped_at_the_limit_not_unpacked(tmp_path, monkeypatch):
    """3 MiB of blanks pack into a few KB; with the limit at 1 MiB the reader stops at it
    (the real limit, 512 MiB, is too big for a test to write)."""
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (3 << 20)))
    assert bomb.stat().st_size < 20_000
    monkeypatch.setattr(rumen, "MAX_TRACE_BYTES", 1 << 20)
    read = []
    real = gzip.GzipFile.read

    def counted(self, n=-1):
        out = real(self, n)
        read.append(len(out))
        return out

    monkeypatch.setattr(gzip.GzipFile, "read", counted)
    with pytest.raises(ValueError) as e:
        rumen.read_rumen(bomb)
    assert one_line(e) == (
        "bomb.json.gz: the trace's text exceeds the limit of 1,048,576 bytes "
        "(MAX_TRACE_BYTES); split it or select fewer jobs"
    )
    assert sum(read) <= (1 << 20) + (1 << 20)  # at most one chunk past the limit
    assert MAX_TRACE_BYTES == 512 << 20  # the real limit: ~1.5 GB at the reader's peak


def test_a_trace_within_the_limit_still_reads(tmp_path, monkeypatch):
    job = {"jobID": "job_1", "submitTime": 0, "totalMaps": 1, "totalReduces": 0}
    job["mapTasks"] = [{"attempts": [{"result": "SUCCESS", "hdfsBytesRead": 1 << 20}]}]
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps(job).encode()))
    monkeypatch.setattr(rumen, "MAX_TRACE_BYTES", 1 << 20)
    (got,) = rumen.read_rumen(path)
    assert got.total_maps == 1 and got.map_input_bytes == 1 << 20
    plain = tmp_path / "big.json"
    plain.write_bytes(b" " * ((1 << 20) + 1))
    with pytest.raises(ValueError, match=r"^big.json: the trace's text exceeds the limit"):
        rumen.read_rumen(plain)


@pytest.mark.parametrize("reader", [swim.read_swim, rumen.read_rumen])
def test_trace_readers_refuse_a_directory_or_a_missing_file(reader, tmp_path):
    name = reader.__name__
    with pytest.raises(ValueError) as e:
        reader(tmp_path)
    assert one_line(e) == f"{name}: {tmp_path}: expected a trace file, got a directory"
    with pytest.raises(ValueError) as e:
        reader(tmp_path / "nope.tsv")
    assert one_line(e) == f"{name}: {tmp_path / 'nope.tsv'}: no such trace file"
    with pytest.raises(ValueError) as e:
        reader("/dev/null")
    assert one_line(e) == f"{name}: /dev/null: expected a trace file, got a special file"


# -- idle time costs nothing ----------------------------------------------------------------
def test_last_tick_before_is_the_float_sum_simpy_would_reach():
    """The closed form lands on the very float that repeated ``now + dt`` reaches, for
    periods whose multiples round (1.1, 7.3) and tie (dt with one bit below the ulp)."""
    rng = random.Random(5)
    for _ in range(400):
        dt = rng.choice([1.0, 10.0, 1.1, 7.3, 2.5, 3600.0, rng.uniform(1, 100)])
        t = rng.choice([0.0, dt, rng.uniform(0, 1e4), rng.uniform(0, 1e6)])
        until = t + rng.uniform(0, 20_000)
        x = t
        while x + dt < until:
            x += dt
        assert last_tick_before(t, dt, until) == x, (t, dt, until)
    assert last_tick_before(0.0, 1.0, 1e8) == 1e8 - 1
    assert 1.1 + delay_to(1.1, 12_345_678.9) == 12_345_678.9
    assert delay_to(6.6, 23.100000000000005) is None  # no float lands there: the caller steps back


def _run(sc):
    sim = build_simulation(sc, "fair", 3)
    sim.run()
    return sim, episode_metrics(sim)


def test_the_idle_sampler_changes_no_result(monkeypatch):
    """Two jobs 5 000 s apart, sampled every 7.3 s: sleeping through the gap gives the same
    metrics and fairness samples, bit for bit, as ticking through it."""
    sc = load_scenario("ila72", jobs_at(0.0, 5000.0, **{"execution.sample_s": 7.3}))
    fast, m_fast = _run(sc)
    assert fast.monitor.n_idle_skips >= 1
    with monkeypatch.context() as mp:
        mp.setattr(Monitor, "_idle_delay", lambda self, dt: 0.0)  # tick through, as before
        slow, m_slow = _run(sc)
    assert slow.monitor.n_idle_skips == 0
    assert json.dumps(m_fast, default=repr) == json.dumps(m_slow, default=repr)
    assert fast.monitor.fair_samples == slow.monitor.fair_samples
    assert fast.monitor.n_samples == slow.monitor.n_samples  # the same busy ticks
    # the gap's ~680 idle ticks: each one woke the sampler before; now two or so do
    assert slow.monitor.n_idle_ticks > 600 and fast.monitor.n_idle_ticks <= 4


@pytest.mark.parametrize(
    "sample_s,second",
    [(1.1, 23.25), (3.3, 61.0), (7.7, 530.5), (10.1, 1234.5), (1.1, 4096.3)],
)
def test_sleeping_lands_on_the_ticks_where_no_float_delay_reaches_them(
    monkeypatch, sample_s, second
):
    """Periods like 1.1 put some ticks where no ``now + delay`` rounds to them (a higher
    binade, ties to even): the sampler then sleeps to an earlier tick, and the run still
    equals ticking through (the first case crashed the run with an AssertionError)."""
    sc = load_scenario("ila72", jobs_at(0.0, second, **{"execution.sample_s": sample_s}))
    fast, m_fast = _run(sc)
    with monkeypatch.context() as mp:
        mp.setattr(Monitor, "_idle_delay", lambda self, dt: 0.0)
        slow, m_slow = _run(sc)
    assert json.dumps(m_fast, default=repr) == json.dumps(m_slow, default=repr)
    assert fast.monitor.fair_samples == slow.monitor.fair_samples


def test_sleeping_keeps_the_order_of_same_time_control_events(monkeypatch):
    """A scheduler whose control period equals the sampling period acts at the sampler's
    very instants; the sampler stops before such an event, so their order (and every
    fairness sample next to a control action) is the tick-through order."""
    from baselines.lee_cloud import CloudDriver

    jobs = [{"profile": "grep", "maps": 20, "submit_s": t} for t in (0.0, 600.0)]
    over = {"workload": {"kind": "jobs", "jobs": jobs}, "execution.sample_s": 3}
    sc = load_scenario("lee-cloud", over)

    def run():
        sim = build_simulation(sc, CloudDriver(period_s=3), 0)
        sim.run()
        return sim, episode_metrics(sim)

    fast, m_fast = run()
    assert fast.monitor.n_idle_skips == 0  # the driver's events cut every would-be sleep
    assert fast.monitor.n_idle_ticks > 10  # ... though the gap is idle
    with monkeypatch.context() as mp:
        mp.setattr(Monitor, "_idle_delay", lambda self, dt: 0.0)
        slow, m_slow = run()
    assert json.dumps(m_fast, default=repr) == json.dumps(m_slow, default=repr)
    assert fast.monitor.fair_samples == slow.monitor.fair_samples


def test_a_job_submitted_at_9e7_s_costs_a_few_sampler_ticks():
    """The fuzzer's case: one job far in the future, a 1 s sampler (9e7 idle ticks took
    ~70-170 s of CPU)."""
    over = jobs_at(9e7, **{"execution.sample_s": 1, "run.max_sim_time_s": 1e8})
    r = run_sim(load_scenario("ila72", over), "fifo", 0)
    assert r.metrics["jobs_completed"] == 1 and r.metrics["mean_jct_s"] < 100
    assert 0 < r.stats["sampler_ticks"] < 100  # the job's own seconds, not 9e7 idle ones


def test_interactive_vms_over_a_long_cap_are_bounded():
    """Interactive VMs are never idle (each load update draws noise; the SLA and energy
    follow it), so their updates over the time cap are bounded instead, as failures are."""
    with pytest.raises(ScenarioError) as e:
        load_scenario(
            "hybrid48",
            {"cluster.hosts.1.interactive.update_s": 1, "run.max_sim_time_s": 1e8},
        )
    assert one_line(e).startswith(
        "hybrid48.cluster.hosts.1.interactive.update_s: 24 interactive VMs over "
        "run.max_sim_time_s=100,000,000 would update their load ~2,400,000,000 times, "
        "more than the limit of 10,000,000"
    )
    with pytest.raises(ScenarioError) as e:
        load_scenario("hybrid48", {"execution.sample_s": 1, "run.max_sim_time_s": 1e6})
    assert one_line(e).startswith("hybrid48.execution.sample_s: 24 interactive VMs over")
    assert load_scenario("hybrid48").run.max_sim_time_s == 36000  # 14 400 updates


# -- the API's errors are one-line ValueErrors ------------------------------------------------
@pytest.fixture(scope="module")
def small():
    return load_scenario("ila72", jobs_at(0.0))


@pytest.mark.parametrize(
    "seed,expect",
    [
        (1.5, "seed: expected an integer >= 0, got 1.5"),
        (None, "seed: expected an integer >= 0, got None"),  # unseeded runs differ
        (True, "seed: expected an integer >= 0, got True"),
        ("3", "seed: expected an integer >= 0, got '3'"),
        (-1, "seed: expected an integer >= 0 and < 2**63, got -1"),
        (2**63, f"seed: expected an integer >= 0 and < 2**63, got {2**63}"),
    ],
)
def test_run_sim_refuses_a_seed_that_is_not_a_whole_number(small, seed, expect):
    with pytest.raises(ValueError) as e:
        run_sim(small, "fair", seed)
    assert one_line(e) == expect


def test_run_sim_takes_numpy_seeds_and_refuses_a_missing_scheduler(small):
    assert run_sim(small, "fifo", np.int64(2)).seed == 2
    with pytest.raises(ValueError) as e:
        run_sim(small, None, 0)
    assert one_line(e) == (
        "scheduler: expected a Scheduler or a registered name such as 'fifo', got NoneType"
    )


def test_reset_refuses_options_it_cannot_keep():
    env = gym.make("MRCluster-v0", config="ila72").unwrapped
    with pytest.raises(ValueError) as e:
        env.reset(seed=0, options={"x": threading.Lock()})
    assert one_line(e).startswith("options: every value must be deep-copyable")
    with pytest.raises(ValueError) as e:
        env.reset(seed=0, options=[1])
    assert one_line(e) == "options: must be a dict or None, got list"
    obs, _ = env.reset(seed=0, options={"note": [1, 2]})
    assert obs.shape == env.observation_space.shape


# -- silently accepted: refused now ---------------------------------------------------------
@pytest.mark.parametrize("value", ["no", 1, None])
def test_speculation_must_be_a_bool(value):
    """ "no" is truthy: it turned speculation on."""
    with pytest.raises(ValueError) as e:
        gym.make("MRCluster-v0", config="ila72", speculation=value)
    assert one_line(e) == f"speculation: must be true or false, got {value!r}"
    env = gym.make("MRCluster-v0", config="ila72", speculation=np.bool_(True)).unwrapped
    assert env.speculation is True


def test_an_interactive_block_on_a_native_group_is_refused():
    with pytest.raises(ScenarioError) as e:
        load_scenario("hybrid48", {"cluster.hosts.0.interactive": {"app": "rubis"}})
    assert one_line(e) == (
        "hybrid48.cluster.hosts.0.interactive: needs a virtualized group (native: false): "
        "a native host runs no interactive VMs"
    )


@pytest.mark.parametrize("steps", [0, -5, 2.5, True])
def test_bench_refuses_steps_below_one(steps):
    from mrgym.bench import bench_env

    with pytest.raises(ValueError) as e:
        bench_env("ila72", steps)
    assert one_line(e) == f"steps (--steps): must be an integer >= 1, got {steps!r}"


@pytest.mark.parametrize(
    "key,value,expect",
    [
        ("cluster.heartbeat_s", np.bool_(True), "must be a number, got np.True_"),
        ("cluster.heartbeat_s", b"3", "must be a number, got b'3'"),
        ("hdfs.replication", np.bool_(False), "must be an integer, got np.False_"),
        ("hdfs.replication", bytearray(b"2"), "must be an integer, got bytearray(b'2')"),
        ("cluster.rack_uplink_mbps", np.bool_(True), "must be a number of Mbit/s, got np.True_"),
    ],
)
def test_numpy_bools_and_bytes_are_not_numbers(key, value, expect):
    with pytest.raises(ScenarioError) as e:
        load_scenario("ila72", {key: value})
    assert one_line(e) == f"ila72.{key}: {expect}"


# -- messages that named the wrong thing ----------------------------------------------------
def test_a_set_value_with_a_byte_that_is_not_utf8_names_the_flag(capsys):
    from mrgym import cli

    bad = "cluster.racks=\udcff"  # how Python passes the command-line byte 0xff (PEP 383)
    assert cli.main(["simulate", "--config", "ila72", "--set", bad]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "mrgym: error: --set 'cluster.racks=\\udcff': not UTF-8 text "
        "(character 1 is a byte that is not UTF-8)"
    )
    with pytest.raises(ScenarioError, match=r"^src: not UTF-8 text \(character 3 "):
        parse_yaml("ab\udcff", "src")


def test_no_host_group_is_blamed_on_the_hosts_not_the_racks():
    with pytest.raises(ScenarioError) as e:
        load_scenario("ila72", {"cluster.hosts": []})
    assert one_line(e) == "ila72.cluster.hosts: must list at least one host group, got []"


def test_a_time_cap_below_one_heartbeat_is_blamed_on_the_cap():
    with pytest.raises(ScenarioError) as e:
        load_scenario("ila72", {"run.max_sim_time_s": 1e-6})
    assert one_line(e) == (
        "ila72.run.max_sim_time_s: must be >= cluster.heartbeat_s=3 (tasks start at "
        "heartbeats), got 1e-06"
    )
    assert load_scenario("ila72", {"run.max_sim_time_s": 3}).run.max_sim_time_s == 3


# -- tables over few seeds --------------------------------------------------------------------
def _rows(values: list[float]) -> list[dict]:
    return [
        {"scenario": "s", "policy": "fifo", "seed": i, "mean_jct_s": v, "fairness_jain": 0.5}
        for i, v in enumerate(values)
    ]


def test_few_seeds_show_the_range_and_n_not_a_useless_interval():
    """fifo over 3 seeds: the 95 % interval was 360 ± 2 079 s; the table shows what the
    seeds gave, [100, 830], and says why."""
    (row,) = summarize(_rows([100.0, 150.0, 830.0]))
    m, half = row["mean_jct_s"]  # the existing fields stay: mean and the t half-width
    # sd = sqrt((260^2 + 210^2 + 470^2) / 2) = 407.8; t(2) = 4.3027; 4.3027 x 407.8 / sqrt 3
    assert m == pytest.approx(360.0) and half == pytest.approx(1013.03, abs=0.01)
    assert row["ranges"]["mean_jct_s"] == (100.0, 830.0, 3)
    table = markdown_table([row])
    assert "| fifo | 360.0 [100.0, 830.0] |" in table and "±" not in table.splitlines()[2]
    assert "Mean [min, max] over n = 3 seeds (0-2)" in table
    assert "±4.3 standard errors wide (Student t, 2 degrees of freedom)" in table


def test_enough_seeds_keep_the_interval():
    vals = [100.0, 101.0, 102.0, 103.0, 104.0]
    assert len(vals) == SMALL_N
    table = markdown_table(summarize(_rows(vals)))
    assert "| fifo | 102.0 ± 2.0 |" in table  # t(4) 2.776 x 1.581 / sqrt(5) = 1.96
    assert "over 5 seeds (0-4)" in table
    one = markdown_table(summarize(_rows([7.0])))
    assert "| fifo | 7.0 |" in one and "one seed gives no spread" in one
    assert math.isnan(summarize(_rows([7.0]))[0]["mean_jct_s"][1])
