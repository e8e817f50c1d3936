"""The rules of docs/architecture.md, checked on the source (``ast``, nothing imported).

The import graph has one node per module of ``mrgym/``, ``agents/`` and ``baselines/``
and one edge per import statement anywhere in a file (inside functions too), except:

- imports inside the functions of ``mrgym/cli/`` (the commands load the learning side
  lazily, on purpose);
- a module-level ``__getattr__`` (PEP 562): a lazy re-export, run only when a user asks
  for the name (``mrgym.ModelPolicy``);
- imports under ``if TYPE_CHECKING:`` are kept but marked: a cycle may consist of them
  only inside one package (the simulator's parts annotate each other's types).

``import a.b.c`` and ``from a.b import c`` are edges to the deepest module they name
(``a.b.c`` when it is a module); the parent packages' ``__init__`` that Python also runs
are not counted.

``python tests/test_layers.py`` prints the graph's upward imports and cycles.
"""

from __future__ import annotations

import ast
import functools
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mrgym", "agents", "baselines")
# where the function-length cap applies
CODE_DIRS = ("mrgym", "agents", "baselines", "benchmarks")
MAX_FUNCTION_LINES = 80
NUMERIC = {"numpy", "simpy", "scipy"}
# xdist: one worker runs the module, so the files are parsed once per suite (_edges)
pytestmark = pytest.mark.xdist_group("layers")


@dataclass(frozen=True)
class Edge:
    src: str  # importing module
    dst: str  # imported module (ours, or a third-party top-level name)
    line: int
    lazy: bool  # inside a function
    typing_only: bool  # under ``if TYPE_CHECKING:``


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _files() -> list[Path]:
    return sorted(p for d in PACKAGES for p in (ROOT / d).rglob("*.py"))


MODULES = {module_name(p): p for p in _files()}


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once for the import graph and the function lengths."""
    return ast.parse(path.read_text())


def _resolve(name: str) -> str:
    """The module an import names: ``mrgym.sim.view.ClusterView`` -> ``mrgym.sim.view``;
    third-party names stay as written."""
    parts = name.split(".")
    if parts[0] not in PACKAGES:
        return name
    while parts and ".".join(parts) not in MODULES:
        parts.pop()
    return ".".join(parts) or name


def _absolute(node: ast.ImportFrom, module: str, is_pkg: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    base = base if is_pkg else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_type_checking(node: ast.AST) -> bool:
    t = node.test if isinstance(node, ast.If) else None
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def edges_of(path: Path) -> list[Edge]:
    """Every import of one file, with where it sits (function, TYPE_CHECKING block)."""
    module = module_name(path)
    is_pkg = path.name == "__init__.py"
    in_cli = module == "mrgym.cli" or module.startswith("mrgym.cli.")
    out: list[Edge] = []

    def visit(node: ast.AST, lazy: bool, typing_only: bool, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr | ast.expr_context):
                continue  # an import is a statement: no expression holds one (the bulk)
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                if (in_cli and lazy is False) or (top and child.name == "__getattr__"):
                    continue  # a CLI command's lazy import, or a PEP 562 re-export
                visit(child, True, typing_only, False)
                continue
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = _absolute(child, module, is_pkg)
                names = [f"{base}.{a.name}" for a in child.names]
            for n in names:
                dst = _resolve(n)
                if dst != module:
                    out.append(Edge(module, dst, child.lineno, lazy, typing_only))
            tc = typing_only or _is_type_checking(child)
            visit(child, lazy, tc, top and isinstance(child, ast.If | ast.Try))

    visit(_tree(path), False, False, True)
    return out


# Built on first use, not at import: every xdist worker collects this module, and the
# parse of every file (~3.5 s) is then paid once, by the worker in the "layers" group.
@functools.cache
def _edges() -> list[Edge]:
    """One edge per (module, imported module, line): ``from x import a, b`` is one import."""
    return list(dict.fromkeys(e for p in _files() for e in edges_of(p)))


@functools.cache
def _ours() -> list[Edge]:
    """The edges between our own packages."""
    return [e for e in _edges() if e.dst.split(".")[0] in PACKAGES]


def _in(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


# ---- the layers (docs/architecture.md) -----------------------------------------------------

# low to high.  An import from a lower rank to a higher one runs upward.  The package root
# ``mrgym`` (its ``__init__``: the public names) imports the harness, so it ranks above it.
RANKS = (
    ("mrgym.seeds", "mrgym.config", "mrgym.workloads", "mrgym.sim", "mrgym.pareto"),
    ("mrgym.disk_cache",),
    ("mrgym.metrics", "mrgym.registry", "mrgym.reference"),
    ("mrgym.envs",),
    ("mrgym.policy", "mrgym.runner", "mrgym.bench"),
    ("mrgym.summary", "mrgym.plots", "mrgym.rows", "mrgym.sweep", "mrgym.evaluate"),
    ("mrgym.benchmark",),
    ("mrgym",),
    ("baselines",),
    ("mrgym.reproduce",),
    ("agents",),
    ("mrgym.cli",),
)


def rank(module: str) -> int | None:
    if module == "mrgym":  # the root alone: every module's name starts with it
        return RANKS.index(("mrgym",))
    for i, group in enumerate(RANKS):
        if group != ("mrgym",) and _in(module, *group):
            return i
    return None


def upward(edges: list[Edge]) -> list[Edge]:
    out = []
    for e in edges:
        a, b = rank(e.src), rank(e.dst)
        if a is not None and b is not None and b > a and not e.typing_only:
            out.append(e)
    return out


def cycles(edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.src, set()).add(e.dst)
        graph.setdefault(e.dst, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


# ---- the rules ---------------------------------------------------------------------------


def _stdlib() -> frozenset[str]:
    return frozenset(sys.stdlib_module_names) | {"__future__"}


def _by_module(prefix: str) -> list[str]:
    return sorted(m for m in MODULES if _in(m, prefix))


def _imports(module: str) -> list[Edge]:
    return [e for e in _edges() if e.src == module]


@pytest.mark.parametrize("module", _by_module("mrgym.sim"))
def test_the_simulator_imports_only_itself_and_numeric_libraries(module):
    for e in _imports(module):
        top = e.dst.split(".")[0]
        if top == "mrgym":
            # the validated scenario and the workloads it draws are the simulator's input
            assert _in(e.dst, "mrgym.sim", "mrgym.config", "mrgym.workloads"), e
        else:
            assert top in NUMERIC or top in _stdlib(), f"{module} imports {e.dst}"


@pytest.mark.parametrize("module", _by_module("mrgym.envs"))
def test_the_environment_imports_no_policy_agent_baseline_or_cli(module):
    above = (
        "agents",
        "baselines",
        "mrgym.cli",
        "mrgym.policy",
        "mrgym.runner",
        "mrgym.evaluate",
        "mrgym.sweep",
        "mrgym.rows",
        "mrgym.reproduce",
    )
    for e in _imports(module):
        assert not _in(e.dst, *above), f"{module}:{e.line} imports {e.dst}"


def test_no_library_module_imports_the_agents():
    bad = [e for e in _ours() if _in(e.src, "mrgym") and _in(e.dst, "agents")]
    assert not bad, [f"{e.src}:{e.line} imports {e.dst}" for e in bad]


def test_no_library_module_imports_the_baselines():
    # the registry resolves them by name ("baselines.classic:FairScheduler")
    bad = [e for e in _ours() if _in(e.src, "mrgym") and _in(e.dst, "baselines")]
    assert not bad, [f"{e.src}:{e.line} imports {e.dst}" for e in bad]


def test_the_baselines_import_no_agent_or_cli():
    bad = [e for e in _ours() if _in(e.src, "baselines") and _in(e.dst, "agents", "mrgym.cli")]
    assert not bad, [f"{e.src}:{e.line} imports {e.dst}" for e in bad]


def test_the_training_path_imports_no_measurement_tool():
    """``agents.analysis`` (docs/architecture.md rule 9) may import the training path;
    nothing else imports it, so training never depends on a one-off tool."""
    tools = _by_module("agents.analysis")
    assert len(tools) >= 7, tools  # the package and its six tools: the walk sees them
    assert any(_in(e.src, "agents.analysis") and _in(e.dst, "agents.train") for e in _ours())
    bad = [
        e for e in _ours() if _in(e.dst, "agents.analysis") and not _in(e.src, "agents.analysis")
    ]
    assert not bad, [f"{e.src}:{e.line} imports {e.dst}" for e in bad]


def test_no_import_runs_upward():
    bad = upward(_ours())
    assert not bad, [f"{e.src}:{e.line} imports {e.dst}" for e in bad]


def test_no_import_cycle_but_type_only_ones_inside_a_package():
    runtime = cycles([e for e in _ours() if not e.typing_only])
    assert not runtime, runtime
    # annotations only (``if TYPE_CHECKING:``), within one package: the simulator's parts
    typed = cycles(_ours())
    assert all(len({m.rsplit(".", 1)[0] for m in c}) == 1 for c in typed), typed


def test_the_graph_sees_lazy_and_type_only_imports():
    """The rules above would pass vacuously if the walk missed nested imports."""
    sweep = {e.dst for e in _imports("mrgym.sweep") if e.lazy}
    assert "ray" in sweep  # ray_session imports it inside the function
    assert any(e.typing_only for e in _imports("mrgym.sim.part"))
    # a cycle of two modules is found
    assert cycles([Edge("a", "b", 1, False, False), Edge("b", "a", 1, False, False)]) == [
        ["a", "b"]
    ]


def test_the_architecture_page_names_every_module():
    page = (ROOT / "docs" / "architecture.md").read_text()
    for module in MODULES:
        parts = module.split(".")
        if parts[0] == "mrgym" and len(parts) == 2 or parts[:2] in (["mrgym", "envs"], ["agents"]):
            # a package by its folder (``mrgym/sim/``), a module by its file name
            path = MODULES[module]
            name = f"{parts[-1]}/" if path.name == "__init__.py" else f"{path.stem}.py"
            assert name in page or f"`{path.stem}`" in page, f"{module} is not on the page"
    for package in ("sim", "config", "workloads", "cli", "reproduce", "envs"):
        assert f"`mrgym/{package}/`" in page


# ---- function length ---------------------------------------------------------------------


@functools.cache
def _functions() -> list[tuple[str, int]]:
    """(``path::Class.function``, its length in lines) of every function."""
    out = []

    def walk(node: ast.AST, rel: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                continue  # a def is a statement (a lambda is not counted): skip expressions
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out.append((f"{rel}::{name}", child.end_lineno - child.lineno + 1))
                walk(child, rel, name + ".")
            else:
                walk(child, rel, prefix)

    for d in CODE_DIRS:
        for path in sorted((ROOT / d).rglob("*.py")):
            walk(_tree(path), path.relative_to(ROOT).as_posix(), "")
    return out


def _long() -> list[tuple[str, int]]:
    return [f for f in _functions() if f[1] > MAX_FUNCTION_LINES]


def test_no_function_is_longer_than_80_lines():
    assert not _long(), "\n".join(f"{n} has {k} lines (split it)" for n, k in _long())


def test_the_length_walk_finds_functions():
    assert len(_functions()) > 500
    assert any(name.startswith("mrgym/sim/") for name, _ in _functions())


def report() -> str:
    up = upward(_ours())
    cyc = cycles([e for e in _ours() if not e.typing_only])
    typed = [c for c in cycles(_ours()) if c not in cyc]
    lines = [f"{len(MODULES)} modules, {len(_ours())} internal imports"]
    lines.append(f"upward imports: {len(up)}")
    lines += [f"  {e.src}:{e.line} -> {e.dst}{' (lazy)' if e.lazy else ''}" for e in up]
    agents = [e for e in _ours() if _in(e.src, "mrgym") and _in(e.dst, "agents")]
    lines.append(f"mrgym -> agents imports: {len(agents)}")
    lines += [f"  {e.src}:{e.line} -> {e.dst}" for e in agents]
    lines.append(f"runtime cycles: {len(cyc)}")
    lines += [f"  {' <-> '.join(c)}" for c in cyc]
    lines.append(f"type-only cycles: {len(typed)}")
    lines += [f"  {len(c)} modules: {', '.join(c[:4])}, ..." for c in typed]
    lines.append(f"functions over {MAX_FUNCTION_LINES} lines: {len(_long())}")
    lines += [f"  {n} ({k})" for n, k in sorted(_long(), key=lambda f: -f[1])]
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
