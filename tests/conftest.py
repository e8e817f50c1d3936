"""Test-session settings that must hold however pytest is started."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_PYTEST_DEFAULT_REPORTCHARS = "fE"


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
    with sweep.ray_session(num_cpus=2) as ray:
        yield ray, had_file, had_env
    assert ("RAY_AUTH_TOKEN" in os.environ) == had_env  # our session token is gone
