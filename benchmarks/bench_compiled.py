"""What a compiled core would give: the simulator with its fluid model, attempts and copier
compiled by Cython, against the pure-Python package (issue "Speed").

    python benchmarks/bench_compiled.py                 # ila2400 / dl-sched, 3 rounds
    python benchmarks/bench_compiled.py --quick         # ila72, 2 rounds: a fast check
    python benchmarks/bench_compiled.py --golden        # + tests/test_golden.py on each copy
    python benchmarks/bench_compiled.py --modules execution,topology --variants pure,typed

Nothing in ``mrgym/`` changes.  The package is copied to a temporary folder (with
``configs/`` beside it, where an editable checkout reads the bundled scenarios) once per
compiled variant, and the copy's modules are compiled in place:

* ``cython``: the unchanged ``.py`` files through ``cythonize`` (pure-Python mode, no types);
* ``typed``: the same, plus the augmenting ``benchmarks/compiled/<module>.pxd`` files, which
  turn ``Work``, ``FluidEngine``, ``Link`` and ``CpuPool`` into extension types with C-typed
  fields and give the hot loops (``_refresh_links``, ``_bind``, ``_fire``, ...) C locals.

Both use ``annotation_typing=False``: the source's hints (``mb: float``) would otherwise
coerce arguments (an ``int`` becoming a ``float``), a change of semantics, not of speed.

Each round runs every variant once, in a fresh subprocess (``PYTHONPATH`` = the project
root for ``pure``, the copy for the others), in a rotating order, and times ``sim.run()``
with ``process_time`` (the machine is shared: CPU time, not wall time, and several rounds).
A worker reports where ``mrgym.sim.execution`` and the other compiled modules were loaded
from (a ``.so`` for the compiled copies) and a hash of the episode metrics and task log,
computed as tests/golden_cases.py does: a compiled copy must match ``pure`` exactly.

Cython and a C compiler are needed only here: neither is a dependency of mrgym.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PXD_DIR = Path(__file__).resolve().parent / "compiled"
DEFAULT_MODULES = ("execution", "work", "cpu", "topology", "attempts")
# an augmenting .pxd that cimports another module's extension type needs that module
# compiled too (else the pure-Python class fails the import-time type check)
PXD_NEEDS = {"execution": ("topology", "work"), "work": ("topology",)}
VARIANTS = ("pure", "cython", "typed")


# -- the worker: one timed run in a subprocess ---------------------------------------------
def worker(scenario: str, scheduler: str, seed: int, modules: list[str]) -> None:
    """Run one episode, print one JSON line: where the modules came from, tasks, CPU-s and
    the golden hash (tests/golden_cases.py's ``sim_hash``, here from the same simulation
    that was timed)."""
    import hashlib
    import importlib

    from mrgym.metrics import episode_metrics, task_log
    from mrgym.runner import build_simulation

    files = {m: importlib.import_module(f"mrgym.sim.{m}").__file__ for m in modules}
    sim = build_simulation(scenario, scheduler, seed)
    c0 = time.process_time()
    sim.run()
    cpu = time.process_time() - c0
    tasks = sum(1 for a in sim.attempts if a.end_s is not None)
    log = [
        (t.job, t.task, t.kind, t.attempt, t.vm, t.start, t.end, t.locality, t.outcome)
        for t in task_log(sim)
    ]
    obj = {"metrics": episode_metrics(sim), "log": log}
    digest = hashlib.sha256(json.dumps(obj, sort_keys=True, default=repr).encode()).hexdigest()
    print(json.dumps({"files": files, "tasks": tasks, "cpu_s": cpu, "hash": digest}))


def golden_digest_matches_worker() -> bool:
    """The worker's hash is golden_cases' (checked on one small case when importable)."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from golden_cases import GOLDEN, sim_hash, sim_seed
    except ImportError:
        return True  # nothing to compare with
    # a scenario its golden case runs at full size (golden_cases.sim_sizes), as the worker does
    case = ("hybrid48", "fifo", sim_seed("hybrid48", "fifo"))
    rec = json.loads(GOLDEN.read_text())["sim"].get("/".join(map(str, case)))
    return rec is None or sim_hash(*case) == rec


# -- building a compiled copy ---------------------------------------------------------------
def toolchain_problem() -> str | None:
    """Why the compiled variants cannot be built here, or None."""
    try:
        import Cython  # noqa: F401
        from Cython.Build import cythonize  # noqa: F401
    except ImportError:
        return "Cython is not installed (pip install cython); it is only needed for this benchmark"
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None and shutil.which("cc") is None and shutil.which("gcc") is None:
        return f"no C compiler found ({cc}, cc, gcc); install one to build the extensions"
    return None


def copy_package(dest: Path) -> None:
    skip = shutil.ignore_patterns("__pycache__", "*.so", "*.c", "*.pxd", "*.pyd", "build")
    shutil.copytree(ROOT / "mrgym", dest / "mrgym", ignore=skip)
    shutil.copytree(ROOT / "configs", dest / "configs", ignore=skip)


SETUP = """\
import sys
from setuptools import Extension, setup
mods = sys.argv[1].split(",")
sys.argv = [sys.argv[0], "build_ext", "--inplace", "-j", "2"]
setup(name="mrgym_compiled_bench", script_args=sys.argv[1:], ext_modules=[
    Extension(f"mrgym.sim.{m}", [f"mrgym/sim/{m}.c"]) for m in mods])
"""


def build(variant: str, dest: Path, modules: list[str]) -> dict:
    """Copy the package to ``dest`` and compile ``modules`` of the copy in place.

    Each module is cythonized on its own, so one that Cython rejects is reported and left
    as Python; the C files are then built by setuptools in a subprocess."""
    from Cython.Build import cythonize
    from Cython.Compiler.Errors import CompileError

    t0 = time.perf_counter()
    copy_package(dest)
    sim_dir = dest / "mrgym" / "sim"
    mods = list(modules)
    if variant == "typed":
        for m in list(mods):
            for need in PXD_NEEDS.get(m, ()):
                if need not in mods and (PXD_DIR / f"{need}.pxd").exists():
                    print(f"  typed: {m}.pxd cimports {need}: compiling {need} too")
                    mods.append(need)
        for m in mods:
            if (PXD_DIR / f"{m}.pxd").exists():
                shutil.copy(PXD_DIR / f"{m}.pxd", sim_dir / f"{m}.pxd")
    ok, failed = [], {}
    cwd = os.getcwd()
    os.chdir(dest)  # module names come from the package folders, relative to the copy
    try:
        for m in mods:
            try:
                cythonize(
                    [f"mrgym/sim/{m}.py"],
                    include_path=[str(dest)],
                    language_level=3,
                    quiet=True,
                    compiler_directives={"annotation_typing": False},
                )
                ok.append(m)
            except CompileError as e:  # the Cython error itself is printed above
                failed[m] = f"Cython rejected it ({e})"
    finally:
        os.chdir(cwd)
    t1 = time.perf_counter()
    if ok:
        (dest / "setup_bench.py").write_text(SETUP)
        p = subprocess.run(
            [sys.executable, "setup_bench.py", ",".join(ok)],
            cwd=dest,
            capture_output=True,
            text=True,
        )
        if p.returncode:
            sys.exit(f"building the {variant} extensions failed:\n{p.stderr[-3000:]}")
    t2 = time.perf_counter()
    return {
        "compiled": ok,
        "failed": failed,
        "cythonize_s": t1 - t0,
        "cc_s": t2 - t1,
        "typed_pxd": sorted(p.stem for p in sim_dir.glob("*.pxd")),
    }


# -- running -------------------------------------------------------------------------------
def run_variant(path: Path, a: argparse.Namespace, modules: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(path))
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        "--scenario",
        a.scenario,
        "--scheduler",
        a.scheduler,
        "--seed",
        str(a.seed),
        "--modules",
        ",".join(modules),
    ]
    p = subprocess.run(cmd, env=env, cwd=path, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"worker failed for {path}:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def golden(path: Path) -> tuple[bool, str]:
    """tests/test_golden.py with ``path``'s mrgym imported: a script in ``path`` (so the
    project root is not on sys.path) prints the module files, then runs pytest there."""
    script = path / "run_golden.py"
    script.write_text(
        "import sys, pytest, mrgym.sim.execution as e, mrgym.sim.topology as t\n"
        "print('golden imports', e.__file__, t.__file__, flush=True)\n"
        f"sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', {str(ROOT / 'tests' / 'test_golden.py')!r}]))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(path))
    p = subprocess.run(
        [sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    lines = p.stdout.strip().splitlines()
    where = next((x for x in lines if x.startswith("golden imports")), "?")
    return p.returncode == 0, f"{where}\n    {lines[-1] if lines else p.stderr[-500:]}"


def parse_args() -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--scenario", default="ila2400")
    p.add_argument("--scheduler", default="dl-sched")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--modules", default=",".join(DEFAULT_MODULES), help="of mrgym/sim")
    p.add_argument("--variants", default=",".join(VARIANTS), help="of " + ",".join(VARIANTS))
    p.add_argument("--quick", action="store_true", help="ila72, 2 rounds")
    p.add_argument("--golden", action="store_true", help="run tests/test_golden.py on copies")
    p.add_argument("--keep", action="store_true", help="keep the compiled copies")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args()


def build_variants(compiled: list[str], tmp: Path, modules: list[str]) -> dict[str, Path]:
    """Build each compiled variant's copy under ``tmp``, printing what compiled and how
    long it took; returns each variant's root (the pure one is this checkout)."""
    paths = {"pure": ROOT}
    for v in compiled:
        print(f"building {v} ({','.join(modules)}) in {tmp / v} ...", flush=True)
        info = build(v, tmp / v, modules)
        paths[v] = tmp / v
        print(
            f"  compiled {info['compiled']}  failed {info['failed'] or 'none'}  "
            f"typed .pxd {info['typed_pxd'] or 'none'}\n"
            f"  build {info['cythonize_s'] + info['cc_s']:.1f} s "
            f"(copy+cythonize {info['cythonize_s']:.1f} s, C compiler {info['cc_s']:.1f} s)",
            flush=True,
        )
    return paths


def run_rounds(
    variants: list[str], paths: dict[str, Path], a: argparse.Namespace, modules: list[str]
) -> dict[str, list[dict]]:
    """Run every variant once a round, rotating the order each round (load drifts),
    printing each round's tasks per CPU-second; returns each variant's runs."""
    print(f"\n{a.scenario} / {a.scheduler} / seed {a.seed}: tasks per CPU-second of run()")
    res: dict[str, list[dict]] = {v: [] for v in variants}
    for r in range(a.rounds):
        order = variants[r % len(variants) :] + variants[: r % len(variants)]
        row = []
        for v in order:
            out = run_variant(paths[v], a, modules)
            if r == 0 and v != "pure":
                loaded = {m: Path(f).name for m, f in out["files"].items()}
                print(f"  {v} loads {loaded}")
                not_so = [m for m, f in out["files"].items() if not f.endswith(".so")]
                if not_so:
                    print(f"  warning: {v} runs {not_so} as Python")
            res[v].append(out)
            row.append(f"{v} {out['tasks'] / out['cpu_s']:7,.0f}")
        print(f"  round {r}: " + "   ".join(row), flush=True)
    return res


def print_summary(variants: list[str], res: dict[str, list[dict]]) -> None:
    """Each variant's median rate, its spread, and against the pure runs its paired ratio
    and whether its results hash the same."""
    print("\nsummary (median of rounds; spread = (max - min) / median; paired = median")
    print("  of each round's ratio to its pure run, with its range)")
    ref = res.get("pure")
    med = {}
    for v in variants:
        rates = [o["tasks"] / o["cpu_s"] for o in res[v]]
        med[v] = statistics.median(rates)
        spread = (max(rates) - min(rates)) / med[v]
        line = f"  {v:7s} {med[v]:7,.0f} tasks/CPU-s  (spread {100 * spread:4.1f} %"
        line += f", {res[v][0]['tasks']} tasks)"
        if ref and v != "pure":
            same = {o["hash"] for o in res[v]} == {o["hash"] for o in ref}
            # paired: each round's ratio to that round's pure run (load drifts)
            pair = [
                (o["tasks"] / o["cpu_s"]) / (q["tasks"] / q["cpu_s"]) for o, q in zip(res[v], ref)
            ]
            line += f"  x{med[v] / med['pure']:.2f}, paired x{statistics.median(pair):.2f}"
            line += f" ({min(pair):.2f}-{max(pair):.2f})  exact: {'yes' if same else 'NO'}"
        print(line)
    if "pure" in res and len({o["hash"] for o in res["pure"]}) != 1:
        print("  warning: pure runs differ among themselves (nondeterminism)")


def main() -> None:
    a = parse_args()
    modules = [m for m in a.modules.split(",") if m]
    if a.worker:
        worker(a.scenario, a.scheduler, a.seed, modules)
        return
    if a.quick:
        a.scenario, a.rounds = "ila72", 2
    variants = [v for v in a.variants.split(",") if v]
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        sys.exit(f"unknown variants {bad}; choose from {VARIANTS}")
    compiled = [v for v in variants if v != "pure"]
    if compiled and (why := toolchain_problem()):
        sys.exit(f"bench_compiled: {why}")
    missing = [m for m in modules if not (ROOT / "mrgym" / "sim" / f"{m}.py").exists()]
    if missing:
        sys.exit(f"no such modules in mrgym/sim: {missing}")

    tmp = Path(tempfile.mkdtemp(prefix="mrgym-compiled-"))
    try:
        paths = build_variants(compiled, tmp, modules)
        if "pure" in variants and not golden_digest_matches_worker():
            print("warning: the worker's hash differs from tests/golden_cases.py's sim_hash")
        print_summary(variants, run_rounds(variants, paths, a, modules))
        if a.golden:
            print("\ngolden guard (tests/test_golden.py) on each compiled copy:")
            for v in compiled:
                t0 = time.perf_counter()
                passed, detail = golden(paths[v])
                dt = time.perf_counter() - t0
                print(f"  {v}: {'PASS' if passed else 'FAIL'} ({dt:.0f} s)  {detail}")
    finally:
        if a.keep:
            print(f"\ncompiled copies kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
