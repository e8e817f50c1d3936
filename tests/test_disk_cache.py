"""mrgym.disk_cache: results kept between processes, keyed by their inputs and the code."""

from __future__ import annotations

import os
import pickle
import sys
import time

import numpy as np
import pytest

from baselines import ila_training
from mrgym import disk_cache, reference


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MRGYM_CACHE", str(tmp_path / "c"))
    return tmp_path / "c"


class Counter:
    def __init__(self, value):
        self.value, self.calls = value, 0

    def __call__(self):
        self.calls += 1
        return self.value


def test_an_entry_is_computed_once_and_read_after(cache):
    f = Counter({1: 0.1 + 0.2, 2: 1e-300})
    first = disk_cache.cached("demo", ["a", 1], f)
    again = disk_cache.cached("demo", ["a", 1], f)
    assert f.calls == 1 and again == first and again is not first  # read from the file
    assert again[1] == 0.1 + 0.2  # bit for bit
    other = disk_cache.cached("demo", ["a", 2], Counter("b"))  # another key: its own entry
    assert other == "b"
    assert len(list(cache.rglob("demo-*.pkl"))) == 2


def test_off_keeps_nothing_and_the_default_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("MRGYM_CACHE", " OFF ")
    f = Counter(3)
    assert disk_cache.cached("demo", 1, f) == 3 and disk_cache.cached("demo", 1, f) == 3
    assert f.calls == 2 and disk_cache.entry_path("demo", 1) is None
    monkeypatch.delenv("MRGYM_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert disk_cache.cache_dir() == tmp_path / "xdg" / "mrgym"


def test_a_broken_entry_is_computed_again_and_rewritten(cache):
    path = disk_cache.entry_path("demo", "k")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x80\x05truncated")
    f = Counter([1.5])
    assert disk_cache.cached("demo", "k", f) == [1.5] and f.calls == 1
    assert pickle.loads(path.read_bytes()) == [1.5]


def test_an_unwritable_folder_only_costs_the_write(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MRGYM_CACHE", str(blocker))
    f = Counter(7)
    assert disk_cache.cached("demo", 0, f) == 7 and disk_cache.cached("demo", 0, f) == 7
    assert f.calls == 2


def test_the_fingerprint_changes_with_any_file_of_the_code(tmp_path, monkeypatch):
    pkg = tmp_path / "fakepkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "model.py").write_text("RATE = 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(disk_cache, "_FINGERPRINTS", {})
    before = disk_cache.code_fingerprint(("fakepkg",))
    (pkg / "sub" / "model.py").write_text("RATE = 2.0\n")
    assert disk_cache.code_fingerprint(("fakepkg",)) == before  # the code as first seen
    assert disk_cache._hash_code(("fakepkg",)) != before  # the files now
    monkeypatch.setattr(disk_cache, "_FINGERPRINTS", {})
    assert disk_cache.code_fingerprint(("fakepkg",)) != before
    assert "fakepkg" not in sys.modules  # located, not imported
    (pkg / "sub" / "model.py").unlink()
    (pkg / "__init__.py").unlink()
    (pkg / "__init__.pyc").write_bytes(b"")
    assert disk_cache._hash_code(("fakepkg",)) is None  # no source: nothing is kept
    with pytest.raises(ValueError, match="packages: 'no_such_pkg_x' is not an importable"):
        disk_cache.code_fingerprint(("no_such_pkg_x",))


def test_a_new_fingerprint_prunes_only_its_own_kind_of_folder_unused_for_a_week(cache):
    old, recent, other = cache / ("0" * 20), cache / ("a" * 20), cache / ("b" * 20)
    for d in (old, recent, other):
        d.mkdir(parents=True)
        (d / "x.pkl").write_bytes(b"")
    for d in (old, recent):
        (d / disk_cache.MARKER).touch()
    week_ago = time.time() - (disk_cache.PRUNE_DAYS + 1) * 86400.0
    for d in (old, other):
        os.utime(d, (week_ago, week_ago))
    disk_cache.cached("demo", 0, Counter(0))
    assert not old.exists() and recent.exists()
    assert (other / "x.pkl").exists()  # no marker: not the cache's, never removed
    assert (disk_cache.entry_path("demo", 0).parent / disk_cache.MARKER).is_file()


def test_code_edited_after_the_process_loaded_it_writes_nothing(cache, monkeypatch):
    monkeypatch.setattr(disk_cache, "_hash_code", lambda packages: "f" * 20)  # new files
    f = Counter(5)
    assert disk_cache.cached("demo", 0, f) == 5 and disk_cache.cached("demo", 0, f) == 5
    assert f.calls == 2 and not list(cache.rglob("demo-*.pkl"))


def test_an_unpicklable_value_is_returned_and_leaves_no_file(cache):
    value = {"f": lambda: None}  # pickle refuses a lambda
    assert disk_cache.cached("demo", 0, lambda: value) is value
    folder = disk_cache.entry_path("demo", 0).parent
    assert not [p for p in folder.iterdir() if p.name != disk_cache.MARKER]


def test_a_relative_folder_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MRGYM_CACHE", "rel/c")
    assert disk_cache.cache_dir() == tmp_path / "rel" / "c"


def test_reference_jcts_from_disk_equal_the_simulated_ones(cache, monkeypatch):
    monkeypatch.setattr(reference, "_REFERENCE", {})
    first = reference.reference_jct("lee-gpu", 3)
    assert first == reference.isolated_jct("lee-gpu", "fair", 3) and len(first) >= 2
    monkeypatch.setattr(reference, "_REFERENCE", {})  # a new process: only the disk

    def no_simulation(*_a, **_k):
        raise AssertionError("simulated again")

    monkeypatch.setattr(reference, "isolated_jct", no_simulation)
    assert reference.reference_jct("lee-gpu", 3) == first
    with pytest.raises(AssertionError, match="simulated again"):  # another seed: computed
        reference.reference_jct("lee-gpu", 4)


def test_a_drawn_seed_and_a_trace_workload_are_kept_in_memory_only(cache, monkeypatch):
    monkeypatch.setattr(reference, "_REFERENCE", {})
    monkeypatch.setattr(reference, "isolated_jct", lambda sc, s, seed: {0: float(seed)})
    assert reference.reference_jct("lee-gpu", 5, keep=False) == {0: 5.0}
    trace = {"workload": {"kind": "swim", "path": "trace.tsv"}}
    monkeypatch.setattr(reference, "load_scenario", lambda sc: _Trace(trace))
    assert reference.reference_jct("lee-gpu", 6) == {0: 6.0}
    assert not list(cache.rglob("reference_jct-*.pkl"))


class _Trace:
    """A stand-in scenario whose workload reads a file."""

    def __init__(self, data):
        self.data = data
        self.workload = type("W", (), {"path": data["workload"]["path"]})()

    def model_dump_json(self):
        return str(self.data)


def test_ilas_training_set_from_disk_is_the_computed_one(cache, monkeypatch):
    monkeypatch.setattr(ila_training, "_CACHE", {})
    ts = ila_training.training_set("ila72", n_combos=2, seed=11)
    monkeypatch.setattr(ila_training, "_CACHE", {})

    def no_profiling(*_a, **_k):
        raise AssertionError("profiled again")

    monkeypatch.setattr(ila_training, "_build_training_set", no_profiling)
    again = ila_training.training_set("ila72", n_combos=2, seed=11)
    assert again is not ts and len(again) == len(ts) > 0
    for k in ila_training.ROWS:
        assert np.array_equal(getattr(again, k), getattr(ts, k))
        assert not getattr(again, k).flags.writeable  # shared, as the computed one
    assert again.alone_s == ts.alone_s and again.demand == ts.demand
    with pytest.raises(AssertionError, match="profiled again"):  # other backgrounds
        ila_training.training_set("ila72", n_combos=2, seed=12)
