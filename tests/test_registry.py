"""The scheduler registry (``mrgym.registry``: entry-point strings, resolved lazily), the
library's independence from ``baselines``, and the one table of metric names."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import baselines
import mrgym
from mrgym import cli, registry
from mrgym.metrics import (
    COMPARE_COLUMNS,
    COMPARE_KEYS,
    FORMATS,
    METRIC,
    METRICS,
    OPTIONAL_COMPARE_KEYS,
    SIMULATE_ROWS,
    TENSORBOARD_TAGS,
    metric_value,
)
from mrgym.sim.scheduler import Scheduler

ev = importlib.import_module("mrgym.evaluate")  # the module, not mrgym.evaluate()
ROOT = Path(__file__).resolve().parent.parent
CLASSIC = ["fifo", "fair", "delay", "capacity", "late", "dl-sched", "rand-sched"]
PAPERS = [
    "ila",
    "iao",
    "lao",
    "pna",
    "coupling",
    "lsap-sched",
    "lsap-fair-sched",
    "hybridmr",
    "hybridmr-phase1",
    "fifo-random",
    "progress-share",
    "lee-fair",
    "cloud-driver",
]
SIMPLE = ["random", "sjf", "srpt", "wfair", "hostcap"]
ALL = CLASSIC + PAPERS + SIMPLE


@pytest.fixture
def clean_registry():
    """Whatever a test registers is gone after it (other tests list the names)."""
    saved = dict(registry._REGISTRY)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


# -- the registry ------------------------------------------------------------------------
def test_classic_names_in_order_as_entry_point_strings():
    assert registry.available() == ALL
    for name in CLASSIC:
        ep = registry.entry_point(name)
        assert isinstance(ep, str) and ep.startswith("baselines.classic:"), ep
    for name in PAPERS:
        assert registry.entry_point(name).startswith("baselines."), name
    for name in SIMPLE:  # the job orders, and hostcap in a module of its own
        module = "baselines.hostcap:" if name == "hostcap" else "baselines.simple:"
        assert registry.entry_point(name).startswith(module), name


@pytest.mark.parametrize("name", ALL)
def test_every_classic_name_makes_a_scheduler_of_that_name(name):
    s = registry.make(name)
    assert isinstance(s, Scheduler)
    assert s.name == name
    assert registry.make(name.upper()).name == name  # names are case-insensitive
    assert registry.make(name) is not s  # a new scheduler per call


def test_baselines_functions_are_the_registry():
    assert baselines.make is registry.make
    assert baselines.available is registry.available
    assert baselines.register is registry.register
    assert baselines.available() == registry.available()


def test_entry_points_resolve_lazily(clean_registry, capsys):
    registry.register("bad", "nope.module:X")  # no import yet: no error
    assert registry.available()[-1] == "bad"
    assert registry.entry_point("bad") == "nope.module:X"
    with pytest.raises(ImportError) as e:
        registry.make("bad")
    msg = str(e.value)
    assert msg == "scheduler 'bad': cannot load entry point 'nope.module:X': No module named 'nope'"
    assert isinstance(e.value, ValueError)  # the CLI's one-line user errors
    # the CLI says it in one line, without a traceback
    assert cli.main(["simulate", "--config", "lee-gpu", "--scheduler", "bad"]) == 2
    err = capsys.readouterr().err
    assert err == f"mrgym: error: {msg}\n"


def test_entry_point_without_the_attribute_or_not_callable(clean_registry):
    registry.register("missing", "baselines.classic:NoSuchScheduler")
    with pytest.raises(
        registry.EntryPointError,
        match=r"^scheduler 'missing': cannot load entry point 'baselines.classic:NoSuchScheduler': module 'baselines.classic' has no attribute 'NoSuchScheduler'$",
    ):
        registry.make("missing")
    registry.register("constant", "mrgym.metrics:FORMATS")
    with pytest.raises(registry.EntryPointError, match="is a tuple, not callable"):
        registry.make("constant")


def test_bad_registrations_fail_at_once_in_one_line(clean_registry):
    for bad in ("nocolon", "a:", ":b", "a b:c", "a:b:c"):
        with pytest.raises(ValueError, match=r"entry point .*: expected 'module:attr'"):
            registry.register("x", bad)
    with pytest.raises(TypeError, match="expected a 'module:attr' string or a callable, got int"):
        registry.register("x", 3)
    with pytest.raises(ValueError, match="must not be empty"):
        registry.register("", "baselines.classic:FifoScheduler")
    assert "x" not in registry.available()


def test_unknown_name_lists_the_expected_ones():
    with pytest.raises(ValueError) as e:
        registry.make("nope")
    assert str(e.value) == f"unknown scheduler 'nope'; expected one of {ALL}"
    with pytest.raises(ValueError, match="unknown scheduler 'nope'; expected one of"):
        registry.unregister("nope")


def test_unknown_names_suggest_the_closest_one():
    with pytest.raises(ValueError) as e:
        registry.make("fiffo")
    assert str(e.value).startswith("unknown scheduler 'fiffo' (did you mean 'fifo'?); expected")
    with pytest.raises(ValueError, match=r"unknown order 'hostcp' \(did you mean 'hostcap'\?\)"):
        registry.make("hybridmr-gate+hostcp")
    with pytest.raises(ValueError, match=r"unknown tool 'tara-predcit' \(did you mean 'tara"):
        registry.tool("tara-predcit")


# -- listings and descriptions -------------------------------------------------------------
def test_every_scheduler_says_in_one_line_what_it_does():
    every = registry.names("all")
    assert every == ALL + registry.compositions()
    assert registry.names("registered") == ALL
    texts = {n: registry.describe(n) for n in every}
    for name, text in texts.items():
        assert 10 <= len(text) <= 130 and "\n" not in text, name
    assert len(set(texts.values())) == len(every)  # each its own
    # a composition is described by its parts
    assert texts["ila-gate+srpt"] == f"{registry.GATES['ila']}, the rest by srpt: {texts['srpt']}"
    assert registry.describe("HybridMR-Gate+SJF").startswith("HybridMR's phase II gate")
    with pytest.raises(ValueError, match="scheduler set 'some': expected registered"):
        registry.names("some")


def test_a_scheduler_registered_without_a_description_shows_its_docstring(clean_registry):
    class Mine(baselines.FifoScheduler):
        """The oldest job first, mine.

        More text that the listing leaves out."""

    registry.register("mine", Mine)
    assert registry.describe("mine") == "The oldest job first, mine."
    registry.register("mine", Mine, "first come, first served")
    assert registry.describe("mine") == "first come, first served"
    # the listing: a name a line (a valid --scheduler), then what it does
    r = _python("from mrgym import cli; cli.main(['schedulers'])")
    lines = r.stdout.splitlines()
    assert [ln.split()[0] for ln in lines] == ALL + registry.compositions(), r.stderr
    assert lines[0].split(None, 1)[1] == registry.describe("fifo")


def test_the_readme_counts_the_registry():
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    registered, composed = len(registry.available()), len(registry.compositions())
    assert f"{registered} registered schedulers and {composed} compositions" in text
    assert f"the {registered} registered baselines" in text
    assert "Twenty-five" not in text and "24 baselines" not in text


def test_compare_runs_every_scenarios_best_baseline_by_default():
    """The default comparison has what the leaderboard ranks first on each scenario (e.g.
    hybridmr-gate+hostcap on ila72), and :data:`LEADERBOARD_COMPOSITIONS` is exactly the
    compositions among those."""
    from mrgym.benchmark.leaderboard import load_boards
    from mrgym.benchmark.stats import summarize

    boards = load_boards(ROOT / "docs" / "leaderboard")
    best = {b.scenario: summarize(b.results)[1] for b in boards}
    assert best["ila72"] == "hybridmr-gate+hostcap"
    default = registry.names("default")
    assert set(best.values()) <= set(default) and default[: len(ALL)] == ALL
    composed = {n for n in best.values() if registry.composition(n) is not None}
    assert set(registry.LEADERBOARD_COMPOSITIONS) == composed


def test_register_a_callable_or_a_string_and_run_it(clean_registry):
    class Mine(baselines.FifoScheduler):
        name = "mine"

    baselines.register("Mine", Mine)  # the wrapper README shows; names are lower-cased
    registry.register("fifo-again", "baselines.classic:FifoScheduler")
    assert registry.available() == [*ALL, "mine", "fifo-again"]
    assert isinstance(registry.make("mine"), Mine)
    a = mrgym.run_sim("lee-gpu", "fifo-again", 0).metrics
    b = mrgym.run_sim("lee-gpu", "fifo", 0).metrics
    assert a == b
    registry.unregister("mine")
    assert "mine" not in registry.available()


# -- imports run one way ----------------------------------------------------------------
def test_the_library_does_not_import_baselines():
    r = _python(
        "import mrgym, mrgym.runner, mrgym.cli, mrgym.evaluate, mrgym.policy, "
        "mrgym.reproduce, mrgym.reproduce.report, mrgym.registry, sys\n"
        "mrgym.registry.available(); mrgym.cli.build_parser()\n"
        "assert 'baselines' not in sys.modules, 'imported baselines'\n"
        "s = mrgym.registry.make('fair')\n"
        "assert 'baselines.classic' in sys.modules and s.name == 'fair'\n"
    )
    assert r.returncode == 0, r.stderr


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


def test_no_import_of_baselines_in_the_library_source():
    # lazy imports inside functions too: the library names schedulers by entry points only
    for path in sorted((ROOT / "mrgym").rglob("*.py")):
        bad = {m for m in _imports(path) if m == "baselines" or m.startswith("baselines.")}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_the_simulator_core_does_not_import_the_registry():
    for path in sorted((ROOT / "mrgym" / "sim").rglob("*.py")):
        bad = {m for m in _imports(path) if m.startswith("mrgym.registry")}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"
    assert "mrgym.registry" not in _imports(ROOT / "mrgym" / "registry.py")  # (no cycle)


# -- one table of metric names ----------------------------------------------------------
@pytest.fixture(scope="module")
def row():
    """One flat row of the comparison harness and its run's metrics."""
    return ev.evaluate(["fifo"], ["lee-gpu"], [0])[0]


def test_the_metric_table_covers_every_column_compare_prints(row):
    table = ev.markdown_table(ev.summarize([row]))
    header = [c.strip() for c in table.splitlines()[0].strip("|").split("|")]
    assert header[0] == "policy"
    assert header[1:] == [m.column for m in COMPARE_COLUMNS]
    assert [m.key for m in COMPARE_COLUMNS] == list(COMPARE_KEYS)
    # every metric with a column is one of them or an optional one (shown where non-zero),
    # and each is in the harness's rows
    assert {m.key for m in METRICS if m.column} == set(COMPARE_KEYS) | set(OPTIONAL_COMPARE_KEYS)
    for key in COMPARE_KEYS + OPTIONAL_COMPARE_KEYS:
        assert key in row, key


def test_every_metric_resolves_in_rows_and_episode_metrics(row):
    assert len({m.key for m in METRICS}) == len(METRICS)
    assert len(set(TENSORBOARD_TAGS.values())) == len(TENSORBOARD_TAGS)
    metrics = mrgym.run_sim("lee-gpu", "fifo", 0).metrics
    for m in METRICS:
        assert m.fmt in FORMATS, m
        assert m.key in row, m.key  # a CSV column of compare
        if m.simulate:
            a, b = metric_value(metrics, m.key), row[m.key]
            assert a == b or (a != a and b != b), m.key  # NaN: no job of that kind
    # every top-level number of the episode metrics has a row in mrgym simulate's table,
    # except the bookkeeping ones
    shown = {m.key.split(".")[0] for m in SIMULATE_ROWS}
    unshown = {k for k in metrics if k not in shown}
    assert unshown <= {
        "map_outputs_lost",
        "host_failures",
        "hosts_evicted",
        "attempts",
        "speculative_attempts",
        "throughput_task_work_per_h",
        "shuffle_mb",
        "fairness_distance",
        "sim_time_s",
        "truncated",
    }, unshown


def test_the_tables_read_the_one_definition():
    # the labels the outputs showed before the table existed, unchanged
    assert cli.METRIC_LABELS[:17] == [
        ("jobs_completed", "jobs completed"),
        ("jobs_failed", "jobs failed"),
        ("jobs_submitted", "jobs submitted"),
        ("tasks_completed", "tasks completed"),
        ("tasks_reexecuted", "tasks re-executed"),
        ("mean_jct_s", "mean JCT (s)"),
        ("median_jct_s", "median JCT (s)"),
        ("p95_jct_s", "p95 JCT (s)"),
        ("makespan_s", "makespan (s)"),
        ("throughput_jobs_per_h", "throughput (jobs/h)"),
        ("fairness_jain", "fairness (Jain)"),
        ("slot_utilization", "slot utilization"),
        ("cpu_utilization", "CPU utilization"),
        ("shuffle_cross_rack_bytes", "cross-rack shuffle (GB)"),
        ("cost_usd", "cost ($)"),
        ("energy_kwh", "energy (kWh)"),
        ("sla_violation_s", "SLA violation (s)"),
    ]
    assert [label for _, label in cli.METRIC_LABELS[17:]] == [
        "map locality: node",
        "map locality: server",
        "map locality: rack",
        "map locality: off-rack",
        "mean JCT, small jobs (s)",
        "mean JCT, medium jobs (s)",
        "mean JCT, large jobs (s)",
    ]
    assert ev.SUMMARY == [
        ("mean_jct_s", "mean JCT (s)"),
        ("p95_jct_s", "p95 JCT (s)"),
        ("small_jct_s", "small-job JCT (s)"),
        ("makespan_s", "makespan (s)"),
        ("throughput_jobs_per_h", "jobs/h"),
        ("local_frac", "node+server local"),
        ("fairness_jain", "Jain"),
        ("slot_utilization", "slot util."),
        ("tasks_reexecuted", "re-executed"),
    ]
    assert [k for k, m in METRIC.items() if m.bounded and m.column] == [
        "fairness_jain",
        "slot_utilization",
        "local_frac",
    ]  # three decimals in the compare table
    assert METRIC["fairness_jain"].axis_label == "fairness (Jain's index, 1 = equal shares)"
    assert METRIC["mean_jct_s"].axis_label == "mean JCT (s)"
    assert TENSORBOARD_TAGS["map_locality.off_rack"] == "locality_off_rack"
