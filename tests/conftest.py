"""Test-session settings that must hold however pytest is started."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

_PYTEST_DEFAULT_REPORTCHARS = "fE"
_RAY_NICENESS = "RAY_worker_niceness"  # Ray's spelling: its config names are lower case


@pytest.hookimpl(trylast=True)  # after the terminal plugin has made its reporter
def pytest_configure(config: pytest.Config) -> None:
    """List skipped tests with their reasons in the short summary, as ``-rs`` would.

    pytest's default summary names failures and errors only, so the trace tests that skip
    without the third-party traces (``MRGYM_TRACES``, see ``tests/helpers.py``) would hide
    in an "N skipped" count.  An explicit ``-r`` other than the default is left alone."""
    if config.option.reportchars != _PYTEST_DEFAULT_REPORTCHARS:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and "s" not in reporter.reportchars:
        reporter.reportchars += "s"


@pytest.fixture(autouse=True, scope="session")
def _sb3_logdir(tmp_path_factory):
    """SB3's ``learn`` without a logger of its own logs into ``SB3_LOGDIR`` when set, and
    else makes an empty ``SB3-<time>`` folder in the system's temporary folder per call."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3")))
        yield


@pytest.fixture(autouse=True, scope="session")
def _disk_cache(tmp_path_factory):
    """The session's own :mod:`mrgym.disk_cache` folder, whatever ``MRGYM_CACHE`` the
    shell sets: no test reads a result an earlier run left, and the xdist workers share
    one folder (their base folders are siblings), so ILA's training set and a seed's
    reference JCTs are computed once per session."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MRGYM_CACHE", str(base / "mrgym-cache"))
        yield


@pytest.fixture(scope="session")
def ray_cluster():
    """One local Ray cluster of 2 CPUs for the session (tests/test_sweep.py and
    tests/test_tune.py share it: a start costs seconds; their xdist_group "ray" keeps them
    on one worker).  Yields ``(ray, had_file, had_env)``: whether a token file in the home
    folder and ``RAY_AUTH_TOKEN`` existed before, for the token tests."""
    pytest.importorskip("ray")
    from mrgym import sweep

    had_file = (Path.home() / ".ray" / "auth_token").exists()
    had_env = "RAY_AUTH_TOKEN" in os.environ
    with pytest.MonkeyPatch.context() as mp:
        # Ray runs its workers at nice 15: beside the other xdist worker they would get a
        # few per cent of a core (a 10 s tune took 180 s beside three busy processes)
        mp.setenv(_RAY_NICENESS, os.environ.get(_RAY_NICENESS, "0"))
        with sweep.ray_session(num_cpus=2) as ray:
            yield ray, had_file, had_env
    assert ("RAY_AUTH_TOKEN" in os.environ) == had_env  # our session token is gone


def pytest_collection_finish(session: pytest.Session) -> None:
    """Say so when ``--dist loadgroup`` lost the ``xdist_group`` marks (a pytest that
    pytest-xdist does not support, see pyproject.toml): the suite still passes, but every
    worker builds the grouped modules' fixtures (the claim run, the Ray cluster) again."""
    if not hasattr(session.config, "workerinput") or not session.config.getoption("loadgroup"):
        return
    lost = [i.nodeid for i in session.items if i.get_closest_marker("xdist_group")]
    lost = [n for n in lost if "@" not in n.rsplit("]", 1)[-1]]
    if lost:
        warnings.warn(
            f"--dist loadgroup ignored xdist_group on {len(lost)} tests (pytest "
            f"{pytest.__version__}); install pytest<9.2 so grouped fixtures are built once",
            pytest.PytestWarning,
            stacklevel=1,
        )
