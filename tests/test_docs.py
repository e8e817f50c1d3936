"""The README and the docs tell the truth: their Python runs, the site builds, their links
stay inside the repository, and the README's verdict counts are the report's.

Every ```python block of README.md and docs/*.md runs as written, the blocks of one file in
order in one fresh namespace (``__name__`` is not ``"__main__"``, so a script's guarded
part is left out).  A block that cannot run in a test (a trained model, an hour of
training) carries the marker comment ``# docs-test: skip`` and is only compiled.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SKIP = "# docs-test: skip"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
# the documents a reader meets; the generated report is checked for links only
PAGES = [README, *sorted(DOCS.glob("*.md"))]
LINKED = [README, ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]


def python_blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text(encoding="utf-8"))


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def run_blocks(path: Path) -> dict:
    """Run ``path``'s blocks in order in one fresh namespace; return the namespace."""
    ns: dict = {"__name__": "__docs__"}
    for i, code in enumerate(python_blocks(path)):
        compiled = compile(code, f"{_name(path)} python block {i}", "exec")
        if SKIP in code:
            continue
        try:
            exec(compiled, ns)
        except Exception as e:  # name the block: the traceback's frames say the line
            raise AssertionError(f"{_name(path)} python block {i} failed: {e!r}\n{code}") from e
    return ns


@pytest.mark.parametrize("path", [p for p in PAGES[1:] if python_blocks(p)], ids=_name)
def test_python_blocks_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mrgym import registry

    monkeypatch.chdir(tmp_path)  # whatever a block writes lands here
    # a page may register its example scheduler: forget it afterwards, so that other tests
    # in this worker see the bundled registry
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    run_blocks(path)


def test_readme_blocks_run_and_do_what_they_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's gym loop ends its episode with every job done, its baseline finishes
    the same workload, and its overrides take effect."""
    monkeypatch.chdir(tmp_path)
    ns = run_blocks(README)
    m = ns["info"]["episode_metrics"]
    assert m["jobs_completed"] == m["jobs_submitted"] == 2  # lee-gpu: Crypto + Sort
    assert ns["r"].metrics["jobs_completed"] == 2
    assert ns["sc"].hdfs.replication == 2 and ns["sc"].cluster.hosts[0].count == 6


def test_few_blocks_are_skipped() -> None:
    """Skipping is for what cannot run in a test; most examples must run."""
    blocks = [b for p in PAGES for b in python_blocks(p)]
    skipped = [b for b in blocks if SKIP in b]
    assert len(blocks) >= 8
    assert len(skipped) <= 2, skipped


def test_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


# -- links and paths -------------------------------------------------------------------
LINK = re.compile(r"\]\(([^)\s]+)\)")
SNIPPET = re.compile(r'^--8<-- "([^"]+)"', re.M)
# a path of one machine, or the folder beside the checkout that a user does not have
OUTSIDE = re.compile(r"\.\./shared|/work/|/home/\w|/root/|/Users/\w|[A-Z]:\\\\")


@pytest.mark.parametrize("path", LINKED, ids=_name)
def test_no_document_points_outside_the_repository(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not OUTSIDE.search(text), OUTSIDE.search(text).group(0)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a web address or an anchor on the page
        dest = (path.parent / target.split("#")[0]).resolve()
        assert dest.is_relative_to(ROOT), f"{_name(path)}: {target} leaves the repository"
        assert dest.exists(), f"{_name(path)}: {target} does not exist"
    for target in SNIPPET.findall(text):
        assert (ROOT / target).is_file(), f"{_name(path)}: snippet {target} does not exist"


def test_code_cites_the_model_page_not_a_design_file() -> None:
    """Comments cite docs/model.md's numbered sections; the old design file is outside."""
    stale = []
    for folder in ("mrgym", "baselines", "agents", "benchmarks", "tests"):
        for py in (ROOT / folder).rglob("*.py"):
            if py == Path(__file__).resolve():
                continue  # this test names what it looks for
            text = py.read_text(encoding="utf-8")
            stale += [f"{_name(py)}: DESIGN §" for _ in re.findall(r"DESIGN\s+§", text)]
            for n in re.findall(r"docs/model\.md §(\d)", text):
                assert f"## {n}. " in (DOCS / "model.md").read_text(encoding="utf-8"), (py, n)
    assert not stale, stale


def test_outside_pattern_catches_what_it_should() -> None:
    for bad in ("see ../shared/DESIGN.md", "/work/main/x", "/home/me/traces"):
        assert OUTSIDE.search(bad)
    assert not OUTSIDE.search("docs/model.md and runs/compare-ila72/")


# -- the README's verdict table is the report's ----------------------------------------
PAPERS = {
    "HybridMR": "hybridmr",
    "ILA": "ila",
    "Lee's thesis": "lee",
    "lsap": "lsap",
    "PNA": "pna",
    "all": None,
}
VERDICTS = ("reproduced", "same direction", "not reproduced")
VALIDATION_ROW = "validation rows only"
PROBE_ROW = "mechanism probes (no paper number)"


def _results() -> dict:
    p = DOCS / "reproduction" / "results.json"
    if not p.is_file():
        pytest.fail("no docs/reproduction/results.json: run mrgym reproduce --update")
    return json.loads(p.read_text(encoding="utf-8"))


def test_readme_verdict_counts_equal_the_report() -> None:
    """Per paper, all rows, and the validation rows alone (their role from
    mrgym/reproduce/roles.py, the one table docs/calibration.md lists)."""
    from mrgym.reproduce.report import load_claims
    from mrgym.reproduce.roles import PROBE, VALIDATION, role

    text = README.read_text(encoding="utf-8")
    table = text.split("<!-- verdicts:start -->")[1].split("<!-- verdicts:end -->")[0]
    rows = {}
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = tuple(int(c) for c in cells[1:])
    claims = _results()["claims"]
    probes = [c for c in claims if role(c["key"]) == PROBE]
    papers = [c for c in claims if role(c["key"]) != PROBE]  # the papers' numbers
    count = Counter((c["paper"], c["verdict"]) for c in papers)
    total = Counter(c["verdict"] for c in papers)
    valid = Counter(c["verdict"] for c in papers if role(c["key"]) == VALIDATION)
    assert set(rows) == {*PAPERS, VALIDATION_ROW, PROBE_ROW}
    for label, paper in PAPERS.items():
        want = tuple((total[v] if paper is None else count[(paper, v)]) for v in VERDICTS)
        assert rows[label] == want, label
    assert rows[VALIDATION_ROW] == tuple(valid[v] for v in VERDICTS)
    assert rows[PROBE_ROW] == tuple(Counter(c["verdict"] for c in probes)[v] for v in VERDICTS)
    assert sum(rows["all"]) + len(probes) == len(claims) == len(load_claims())


def test_model_pages_measured_effects_are_the_reports() -> None:
    """docs/model.md's "What emerges" table quotes each named claim's measured value
    (``ours``) from the committed report; ``hybridmr-fig1a-*`` names the six per-app rows."""
    text = (DOCS / "model.md").read_text(encoding="utf-8")
    table = text.split("**What emerges.**")[1].split("**Monitoring.**")[0]
    ours = {c["key"]: c["ours"] for c in _results()["claims"]}
    rows = [r for r in table.splitlines() if r.startswith("| ") and "`" in r]
    assert len(rows) == 5
    for row in rows:
        key = row.split("`")[1]
        keys = sorted(k for k in ours if k.startswith(key[:-1])) if key.endswith("*") else [key]
        assert keys, row
        for k in keys:
            assert ours[k] in row, (k, ours[k])


# -- the learning pages: short, their numbers the result files', one path -------------------
LEARNING = DOCS / "learning.md"
TRAIN_CONFIGS = ROOT / "configs" / "train"


def table_rows(text: str, header: str) -> list[list[str]]:
    """The cells of each row of the markdown table whose header line starts ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def test_the_learning_page_is_short_and_the_training_page_names_the_top_recipes() -> None:
    assert len(LEARNING.read_text(encoding="utf-8").splitlines()) <= 300
    top = sorted(p.name for p in TRAIN_CONFIGS.glob("*.yaml"))
    rows = table_rows((DOCS / "training.md").read_text(encoding="utf-8"), "| config | what |")
    named = sorted(n for r in rows for n in re.findall(r"`([\w.]+\.yaml)`", r[0]))
    # the table and the recommended config above it name every recipe at the top, and only those
    assert sorted({*named, "bc_jobset_ila72_gate_linear_500k.yaml"}) == top


def _boards() -> dict:
    """The leaderboard's results, by scenario and then by policy name."""
    from mrgym.benchmark.leaderboard import load_boards

    return {b.scenario: {r.name: r for r in b.results} for b in load_boards(DOCS / "leaderboard")}


def _difference(values: list[float], base: list[float]) -> str:
    """The paired difference as the learning page writes it (ASCII minus signs)."""
    from mrgym.benchmark.leaderboard import pct
    from mrgym.benchmark.stats import paired_difference

    d = paired_difference(values, base)
    return f"{pct(d.mean_pct)} % [{pct(d.low_pct)}, {pct(d.high_pct)}]"


def test_the_learning_summary_is_the_leaderboards_result_files() -> None:
    """Each shipped model's row: its mean JCT, its comparator's, and their paired
    difference with its interval, recomputed from docs/leaderboard/*.json."""
    import numpy as np

    boards = _boards()
    text = LEARNING.read_text(encoding="utf-8")
    rows = table_rows(text, "| scenario | shipped model |")
    assert sorted(r[1].strip("`") for r in rows) == sorted(
        p.name
        for p in (ROOT / "models").iterdir()
        if (p / "best_model.zip").is_file()
        and not p.name.startswith("ila72-gate-v1-")  # the earlier recipe: its own section
    )
    for scenario, model, jct, comparator, its_jct, diff in rows:
        results = boards[scenario.strip("`")]
        m = results[model.strip("`")].per_seed["mean_jct_s"]
        c = results[comparator.strip("`")].per_seed["mean_jct_s"]
        assert (jct, its_jct) == (f"{np.mean(m):.1f}", f"{np.mean(c):.1f}"), model
        assert diff.replace("\u2212", "-") == _difference(m, c), model


def test_the_learning_track_tables_are_the_leaderboards_result_files() -> None:
    """Each cell of the Tracks tables: the track model's mean of the track's metric and its
    paired difference to the row's best baseline, recomputed from docs/leaderboard/*.json."""
    import numpy as np

    from mrgym.benchmark.tracks import TRACKS

    boards = _boards()
    text = LEARNING.read_text(encoding="utf-8")

    def shown(cell: str, values: list[float]) -> None:
        places = len(cell.partition(".")[2])
        assert cell == f"{np.mean(values):,.{places}f}", cell

    for scenario in ("lee-gpu", "ila72"):
        rows = table_rows(text, f"| `{scenario}` track |")
        assert rows, scenario
        results = boards[scenario]
        for cell, _, best, *seeds in rows:
            # the label's tag names the models: "fairness, v2" -> -v2-, "jct, mc" -> -mc-,
            # a track alone -> -v1-
            track, _, tag = cell.partition(", ")
            metric = TRACKS[track].metric
            name, value = best.split(", ", 1)
            base = results[name.strip("`")].per_seed[metric]
            shown(value, base)
            assert len(seeds) == 3, (scenario, track)
            for s, seed_cell in enumerate(seeds):
                value, diff = seed_cell.split(", ", 1)
                model = results[f"{scenario}-{track}-{tag or 'v1'}-s{s}"].per_seed[metric]
                shown(value, model)
                assert diff.replace("\u2212", "-") == _difference(model, base), (scenario, track, s)


def test_each_tried_recipe_has_a_row_with_a_commit_that_has_it() -> None:
    rows = table_rows(LEARNING.read_text(encoding="utf-8"), "| recipe | what changed |")
    tried = sorted(p.stem for p in (TRAIN_CONFIGS / "tried").glob("*.yaml"))
    assert tried and sorted(r[0].strip("`") for r in rows) == tried
    assert all(r[1] and r[2] for r in rows)  # what changed, its validation result
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the commits cannot be looked up")
    for cell, _, _, commit in rows:
        name, h = cell.strip("`"), commit.strip("`")
        assert re.fullmatch(r"[0-9a-f]{7,40}", h), (name, commit)
        # a recipe was tried at the top of configs/train/, or as a track's in tracks/
        paths = [f"configs/train/{d}{name}.yaml" for d in ("", "tracks/")]
        found = any(
            subprocess.run(
                ["git", "cat-file", "-e", f"{h}:{p}"], cwd=ROOT, capture_output=True
            ).returncode
            == 0
            for p in paths  # stops at the first path the commit has
        )
        assert found, f"{name}: commit {h} has none of {paths}"


# -- the site ----------------------------------------------------------------------------
SITE_NEEDS = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")


def _missing_site_packages() -> list[str]:
    missing = []
    for name in SITE_NEEDS:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(name)
    return missing


def test_docs_site_builds_strict(tmp_path: Path) -> None:
    missing = _missing_site_packages()
    if missing:
        pytest.skip(
            f"mkdocs packages not installed ({', '.join(missing)}): pip install -e '.[dev]'"
        )
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "environment" / "index.html").is_file()
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    assert "run_sim" in api and "MRClusterEnv" in api  # mkdocstrings rendered the API
