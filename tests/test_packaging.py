"""The wheel is self-contained: built from a copy of the checkout and installed into a fresh
virtual environment, mrgym finds its bundled scenarios without the source tree."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

# xdist: the wheel built once
pytestmark = pytest.mark.xdist_group("packaging")


ROOT = Path(__file__).resolve().parents[1]
PACKAGE_ROOTS = ("mrgym", "baselines", "agents")
# What a build reads; copying only these keeps the checkout clean (a build writes build/ and
# *.egg-info next to pyproject.toml) and skips runs/, caches and other engineers' scratch.
SOURCE_DIRS = (*PACKAGE_ROOTS, "configs")
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")

venv = pytest.importorskip("venv", reason="the venv module is unavailable")

CHECK = r"""
import json, sys
import gymnasium as gym
import baselines, mrgym
from mrgym.config import CONFIG_DIR, available_scenarios, load_scenario

names = available_scenarios()
loaded = [load_scenario(n).name for n in names]
env = gym.make("MRCluster-v0", config="lee-gpu")
obs, info = env.reset(seed=0)
env.close()
print(json.dumps({
    "mrgym": mrgym.__file__,
    "baselines": baselines.__file__,
    "config_dir": str(CONFIG_DIR),
    "train": sorted(p.name for p in (CONFIG_DIR / "train").glob("*.yaml")),
    "tried": sorted(p.name for p in (CONFIG_DIR / "train" / "tried").glob("*.yaml")),
    "scenarios": names,
    "loaded": loaded,
    "obs_shape": list(obs.shape),
    "path": sys.path,
}))
"""


def repo_packages() -> set[str]:
    """Dotted names of every package directory in the checkout."""
    return {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in PACKAGE_ROOTS
        for init in (ROOT / top).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }


def test_pyproject_lists_every_package():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    missing = repo_packages() - set(listed)
    assert not missing, f"pyproject.toml [tool.setuptools].packages lacks {sorted(missing)}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for f in ROOT.iterdir():
        if f.is_file() and f.suffix in (".toml", ".md", ".cfg", ".txt"):
            shutil.copy2(f, src / f.name)
    for d in SOURCE_DIRS:
        shutil.copytree(ROOT / d, src / d, ignore=IGNORE)
    out = tmp / "dist"
    run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(out), str(src)],
        cwd=tmp,
    )
    (whl,) = out.glob("mrgym-*.whl")
    return whl


def run(cmd: list[str], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd[:4])} failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}"
    return r.stdout


def inner_venv(env_dir: Path) -> Path:
    """A venv that sees the running interpreter's packages (numpy, gymnasium, pip...) and
    returns its python.  ``system_site_packages=True`` would not do: inside a venv it means
    the *base* interpreter's packages, which lack the outer venv's.  A ``.pth`` file naming
    the outer site-packages works inside and outside a venv; ``.pth`` entries go after the
    venv's own site-packages, so the wheel's mrgym shadows an editable one (checked by the
    test, not assumed)."""
    venv.create(env_dir, system_site_packages=False, with_pip=False, symlinks=os.name != "nt")
    py = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    code = "import site, sysconfig; print(sysconfig.get_paths()['purelib'])"
    inner_site = Path(run([str(py), "-c", code], env_dir).strip())
    outer = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (inner_site / "_outer_site.pth").write_text("".join(f"{p}\n" for p in outer))
    return py


def test_wheel_contains_scenarios_and_every_package(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    configs = {
        f"mrgym/_configs/{p.relative_to(ROOT / 'configs')}" for p in ROOT.glob("configs/**/*.yaml")
    }
    assert configs and configs <= names
    inits = {f"{pkg.replace('.', '/')}/__init__.py" for pkg in repo_packages()}
    assert inits <= names, sorted(inits - names)


def test_installed_wheel_loads_every_bundled_scenario(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    py = inner_venv(env_dir)
    run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], tmp_path)
    work = tmp_path / "elsewhere"  # not the checkout: '' on sys.path must not find it
    work.mkdir()
    got = json.loads(run([str(py), "-c", CHECK], work).strip().splitlines()[-1])

    site = Path(got["mrgym"]).resolve()
    assert env_dir.resolve() in site.parents, f"mrgym from {site}, sys.path {got['path']}"
    assert ROOT not in site.parents and ROOT not in Path(got["baselines"]).resolve().parents
    config_dir = Path(got["config_dir"]).resolve()
    assert config_dir == site.parent / "_configs"
    assert ROOT not in config_dir.parents

    expected = sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))
    assert expected and got["scenarios"] == expected
    assert got["loaded"] == expected  # each scenario's name is its file's stem
    assert got["train"] == sorted(p.name for p in (ROOT / "configs" / "train").glob("*.yaml"))
    tried = sorted(p.name for p in (ROOT / "configs" / "train" / "tried").glob("*.yaml"))
    assert tried and got["tried"] == tried  # the tried recipes install too
    assert got["obs_shape"] and all(n > 0 for n in got["obs_shape"])
