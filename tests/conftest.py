"""Test-session settings that must hold however pytest is started."""

from __future__ import annotations

import pytest

_PYTEST_DEFAULT_REPORTCHARS = "fE"


@pytest.hookimpl(trylast=True)  # after the terminal plugin has made its reporter
def pytest_configure(config: pytest.Config) -> None:
    """List skipped tests with their reasons in the short summary, as ``-rs`` would.

    pytest's default summary names failures and errors only, so the trace tests that skip
    without ``../shared/traces`` (see ``tests/helpers.py``) would hide in an "N skipped"
    count.  An explicit ``-r`` other than the default is left alone."""
    if config.option.reportchars != _PYTEST_DEFAULT_REPORTCHARS:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and "s" not in reporter.reportchars:
        reporter.reportchars += "s"
