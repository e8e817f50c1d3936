"""Run a grid of independent simulations in parallel: a local process pool or Ray.

:func:`mrgym.evaluate.evaluate` (``mrgym compare``) hands its policy x scenario x seed grid
to :func:`run_grid`, which yields ``(index, row)`` pairs as the runs finish; the caller puts
the rows back in grid order, so the table and CSV are those of a serial run whatever order
the results arrive in.  Every run is self-contained: its seed is in the grid (a
:class:`Task`), never drawn by a worker, and each simulation seeds its own
``numpy.random.SeedSequence`` from it (docs/model.md §2), so a worker's history cannot leak into
a result.

Backends:

- ``"process"``: ``workers == 1`` runs in this process (the serial path, unchanged);
  more runs in a :class:`concurrent.futures.ProcessPoolExecutor` with the ``spawn`` start
  method: the worker function is a top-level function and a task is plain picklable data,
  so the same code works under ``fork``, ``spawn`` and ``forkserver`` (macOS, Windows and
  Python 3.14 defaults) and a worker never inherits a half-initialised torch or Ray.
- ``"ray"``: one Ray task (``num_cpus=1``) per run.  Without ``address`` a local Ray is
  started with ``workers`` CPUs; with one (``ray://HOST:10001`` or ``HOST:6379``, or
  ``RAY_ADDRESS``) the sweep joins that cluster and ``workers`` caps the runs in flight.
  See :func:`ray_session` for token authentication.

Other modules using Ray (``mrgym.cli`` for ``reproduce``, ``agents.tune``) start it through
:func:`ray_session` as well, so that the token handling lives in one place.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from mrgym.rows import run_row

BACKENDS = ("process", "ray")
# the environment variables Ray 2.60 reads its token from (besides ~/.ray/auth_token)
TOKEN_VARS = ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def default_workers() -> int:
    """All cores this process may use (the affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Task:
    """One run of the grid; ``index`` is its place in the serial order."""

    index: int
    policy: Any  # a registered name, a Scheduler object or agents.model_policy.ModelSpec
    scenario: Any  # a Scenario object or a scenario name / YAML path
    seed: int
    env_kwargs: dict = field(default_factory=dict)
    keep_logs: bool = False


def pace(done: int, total: int, elapsed_s: float) -> str:
    """``"42 s elapsed, ~1.5 min left"`` for a progress line after ``done`` of ``total``
    runs: the time left at the mean pace so far (an estimate: runs differ in length)."""
    text = f"{_duration(elapsed_s)} elapsed"
    if 0 < done < total:
        text += f", ~{_duration(elapsed_s / done * (total - done))} left"
    return text


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def run_task(task: Task) -> tuple[int, dict[str, Any]]:
    """The worker function (top level, so that ``spawn`` and Ray can import it)."""
    return task.index, run_row(
        task.policy, task.scenario, task.seed, task.env_kwargs, task.keep_logs
    )


def check_picklable(tasks: Sequence[Task]) -> None:
    """A parallel run sends its tasks to other processes: say which policy or scenario
    cannot go, before any worker starts (a lambda factory, an open model)."""
    seen: set[int] = set()
    for t in tasks:
        if not isinstance(t, Task):
            continue
        for what, obj in (("policy", t.policy), ("scenario", t.scenario)):
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            try:
                pickle.dumps(obj)
            except Exception as e:  # noqa: BLE001 - pickle raises many types
                name = getattr(obj, "name", None) or type(obj).__name__
                raise ValueError(
                    f"workers > 1: {what} {name!r} cannot be sent to a worker process "
                    f"({type(e).__name__}: {e}); pass a registered name, a scheduler object "
                    "or agents.model_policy.ModelSpec(path), or run with workers=1"
                ) from None


def run_grid(
    tasks: Sequence[Any],
    workers: int = 1,
    backend: str = "process",
    address: str | None = None,
    fn: Callable[[Any], Any] = run_task,
) -> Iterator[Any]:
    """Yield ``fn(task)`` for every task (``(task.index, row)`` for :func:`run_task`), in
    the order the runs finish.  ``fn`` must be a module-level function and the tasks
    picklable (``mrgym reproduce`` passes its claim groups this way).

    Closing the generator early (Ctrl-C in the caller) cancels the runs not started."""
    if backend not in BACKENDS:
        raise ValueError(f"backend {backend!r}: expected one of {', '.join(BACKENDS)}")
    if workers < 1:
        raise ValueError(f"--workers {workers}: expected at least 1")
    if backend == "ray":
        check_picklable(tasks)
        yield from _run_ray(tasks, workers, address, fn)
    elif workers == 1 or len(tasks) <= 1:
        restore = _one_torch_thread(tasks)
        try:
            for t in tasks:
                yield fn(t)
        finally:
            restore()
    else:
        check_picklable(tasks)
        yield from _run_pool(tasks, workers, fn)


def _run_pool(tasks: Sequence[Any], workers: int, fn: Callable) -> Iterator[Any]:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(tasks)),
        mp_context=mp.get_context("spawn"),
        initializer=one_thread,
    )
    try:
        futures = [pool.submit(fn, t) for t in tasks]
        for f in as_completed(futures):
            yield f.result()
    finally:
        # normal end: nothing left; an error or Ctrl-C: drop what has not started
        pool.shutdown(wait=True, cancel_futures=True)


# the variables torch's intra-op thread pool is sized by (one thread per core by default)
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def one_thread() -> None:
    """A pool worker's initializer: one intra-op thread, unless the user set one.  The pool
    already fills every core with one run each, and a saved model's batch-1 forward pass
    gains nothing from more threads: with torch's default (one per core) each worker's
    threads spin against the others' (a JobSetPolicy's episode took ~7x the CPU time on
    2 cores).  The variables reach a torch imported later (the worker imports it lazily,
    per task); one the spawned worker already imported (the parent's ``__main__`` imports
    it at the top) is told directly."""
    import sys

    user_set = "OMP_NUM_THREADS" in os.environ
    for var in THREAD_VARS:
        os.environ.setdefault(var, "1")
    if "torch" in sys.modules and not user_set:
        sys.modules["torch"].set_num_threads(1)


def _one_torch_thread(tasks: Sequence[Any]) -> Callable[[], None]:
    """The serial path's :func:`one_thread`, undone afterwards (the returned function):
    when a task runs a saved model in this process, torch gets one intra-op thread while
    the grid runs.  On 2 busy cores its default (one per core) made an ``ila72`` model's
    episode take ~8x the CPU time (58 s instead of 7 s), the threads spinning against
    each other over batch-1 forward passes.  Nothing changes without a model task, with
    ``OMP_NUM_THREADS`` set by the user, or without torch."""
    from mrgym.sim.scheduler import Scheduler

    models = any(
        getattr(t, "policy", None) is not None and not isinstance(t.policy, str | Scheduler)
        for t in tasks
    )
    if not models or "OMP_NUM_THREADS" in os.environ:
        return lambda: None
    try:
        import torch
    except ImportError:
        return lambda: None
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    return lambda: torch.set_num_threads(before)


def _run_ray(
    tasks: Sequence[Any], workers: int, address: str | None, fn: Callable
) -> Iterator[Any]:
    with ray_session(address, num_cpus=workers) as ray:
        remote = ray.remote(num_cpus=1, max_retries=0)(fn)
        # the cap on runs in flight: a local cluster has exactly ``workers`` CPUs anyway;
        # on a shared cluster it keeps one sweep from queueing thousands of tasks at once
        cap = workers if address else len(tasks)
        todo = list(tasks)
        pending: list = []
        try:
            while todo or pending:
                while todo and len(pending) < cap:
                    pending.append(remote.remote(todo.pop(0)))
                done, pending = ray.wait(pending, num_returns=1)
                yield ray.get(done[0])
        finally:
            for ref in pending:  # Ctrl-C or an error: stop the rest
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)


_SESSION_TOKEN: str | None = None  # see ray_session


@contextlib.contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None, **init_kw):
    """``ray``, initialised for the block and shut down after it (unless it was already
    initialised by the caller, e.g. a test's shared session, which is reused as is).

    Ray 2.60 turns token authentication on by default for a cluster that ``ray.init()``
    starts, and writes a token to ``~/.ray/auth_token`` when none exists.  For a local
    cluster we keep authentication on but, when the user has no token configured, give
    this session a random one in ``RAY_AUTH_TOKEN`` (inherited by Ray's worker
    processes, removed afterwards) instead of leaving a credential in the home folder.
    Joining a cluster (``address``) needs that cluster's token: ``RAY_AUTH_TOKEN``,
    ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token`` (``ray get-auth-token`` on the head
    prints it); with one, token mode is switched on for the connection (Ray does not for
    an explicit address; ``RAY_AUTH_MODE=disabled`` overrides), and an auth failure is
    one line saying where the token goes.  ``local_mode`` no longer exists in
    Ray 2.60: a local run is a real cluster of ``num_cpus`` worker processes."""
    try:
        import ray
    except ImportError:
        raise ValueError(
            "--backend ray needs Ray: pip install 'ray[tune]' (or mrgym[dev])"
        ) from None
    if ray.is_initialized():
        yield ray
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    auth = _RayAuth.set_up(address)
    try:
        _init(ray, address, num_cpus, init_kw, auth)
    except ValueError:
        auth.undo()
        raise
    try:
        yield ray
    finally:
        ray.shutdown()
        auth.undo()


@dataclass
class _RayAuth:
    """What :func:`ray_session` set in the environment for Ray's token authentication."""

    has_token: bool  # the user has one configured (variables or ~/.ray/auth_token)
    added: str | None = None  # the session token put in RAY_AUTH_TOKEN
    mode_set: bool = False  # RAY_AUTH_MODE=token set for an explicit address

    @classmethod
    def set_up(cls, address: str | None) -> _RayAuth:
        import secrets
        from pathlib import Path

        auth = cls(
            any(os.environ.get(v) for v in TOKEN_VARS)
            or (Path.home() / ".ray" / "auth_token").is_file()
        )
        if address is None and not auth.has_token:
            global _SESSION_TOKEN
            # one token per process: Ray's C++ token loader caches the first one it reads,
            # so a second local cluster in this process must get the same
            _SESSION_TOKEN = _SESSION_TOKEN or secrets.token_hex(32)
            auth.added = os.environ["RAY_AUTH_TOKEN"] = _SESSION_TOKEN
        elif address is not None and auth.has_token and "RAY_AUTH_MODE" not in os.environ:
            # ray.init(address=...) sends the token only in token mode (Ray 2.60 turns it on
            # by itself for a local cluster, never for an explicit address)
            os.environ["RAY_AUTH_MODE"] = "token"
            auth.mode_set = True
            _refresh_ray_config()
        return auth

    def undo(self) -> None:
        if self.added is not None and os.environ.get("RAY_AUTH_TOKEN") == self.added:
            del os.environ["RAY_AUTH_TOKEN"]
        if self.mode_set:
            os.environ.pop("RAY_AUTH_MODE", None)
            _refresh_ray_config()


def _init(ray, address: str | None, num_cpus: int | None, init_kw: dict, auth: _RayAuth) -> None:
    """``ray.init``; a failure is one ``ValueError`` line (with where a token goes)."""
    import logging

    kw: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.WARNING,
        **init_kw,
    }
    if address is None:
        kw["num_cpus"] = num_cpus
    if auth.added is not None:
        # Ray warns that it turned token authentication on: we chose that on purpose
        logging.getLogger("ray._private.authentication.authentication_token_setup").setLevel(
            logging.ERROR
        )
    try:
        # "local": always a new cluster of num_cpus, even when `ray start` runs here
        # (address=None would join that one, and refuse num_cpus)
        ray.init(address=address or "local", **kw)
    except Exception as e:
        text = " ".join(str(e).split())[:300]
        hint = (
            "; set RAY_AUTH_TOKEN (run `ray get-auth-token` on the head node) or copy its "
            "~/.ray/auth_token here"
            if address and (not auth.has_token or "token" in text.lower())
            else ""
        )
        raise ValueError(
            f"Ray could not start{f' at {address}' if address else ''}: {text}{hint}"
        ) from None


def _refresh_ray_config() -> None:
    """Make Ray's cached C++ config re-read ``RAY_AUTH_MODE`` (what Ray 2.60's own
    ``_enable_token_auth`` does after setting it); without it, a change made after
    ``import ray`` is not seen."""
    try:
        from ray._raylet import Config
    except ImportError:  # another Ray version: the variable is read at connect time
        return
    Config.initialize("")


def __getattr__(name: str) -> Any:
    # ``ModelSpec`` moved to :mod:`agents.model_policy` (the library imports no agents code
    # at import time); ``from mrgym.sweep import ModelSpec`` still works, loading it then
    if name == "ModelSpec":
        from agents.model_policy import ModelSpec

        return ModelSpec
    raise AttributeError(f"module 'mrgym.sweep' has no attribute {name!r}")
