"""The layers of ARCHITECTURE.md: imports go one way (sim <- envs <- policies <- agents/CLI),
and the simulator's modules stay small."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SIM = sorted((ROOT / "mrgym" / "sim").glob("*.py"))
ENVS = sorted((ROOT / "mrgym" / "envs").glob("*.py"))


def _imports(path: Path) -> set[str]:
    """Every module a file imports (absolute names), type-checking-only imports included."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


@pytest.mark.parametrize("path", SIM, ids=lambda p: p.name)
def test_the_simulator_imports_only_itself_and_numeric_libraries(path):
    allowed_top = {"numpy", "simpy", "scipy", "mrgym"}
    for name in _imports(path):
        top = name.split(".")[0]
        if top == "mrgym":
            assert name.startswith(("mrgym.sim", "mrgym.workloads", "mrgym.config")), name
        else:
            assert top in allowed_top or top in _stdlib(), f"{path.name} imports {name}"


@pytest.mark.parametrize("path", ENVS, ids=lambda p: p.name)
def test_the_environment_does_not_import_policies_agents_or_baselines(path):
    for name in _imports(path):
        assert not name.startswith(("baselines", "agents", "mrgym.cli", "mrgym.evaluate")), name
        assert name not in ("mrgym.policy", "mrgym.runner"), f"{path.name} imports {name}"


LIBRARY = sorted(p for d in ("mrgym", "agents", "baselines") for p in (ROOT / d).rglob("*.py"))


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_stay_small(path):
    n = len(path.read_text().splitlines())
    assert n <= 450, f"{path.name} has {n} lines (split it: ARCHITECTURE.md)"


def test_no_library_module_imports_the_baselines():
    for path in (ROOT / "mrgym").rglob("*.py"):
        for name in _imports(path):
            assert name.split(".")[0] != "baselines", f"{path} imports {name}"


def _stdlib() -> frozenset[str]:
    import sys

    return frozenset(sys.stdlib_module_names) | {"__future__"}
