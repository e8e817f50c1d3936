"""TensorBoard callbacks: docs/model.md §5 metrics of finished episodes under ``mr/``, held-out
masked evaluation under ``mr_eval/``, the hyperparameters as a text table, a progress bar."""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from mrgym.metrics import TENSORBOARD_TAGS, metric_value


def metric_scalars(metrics: dict[str, Any]) -> dict[str, float]:
    """The ``mr/`` scalars of one episode's metrics, tagged as :data:`mrgym.metrics.METRICS`
    says."""
    return {tag: float(metric_value(metrics, key)) for key, tag in TENSORBOARD_TAGS.items()}


class MRMetricsCallback(BaseCallback):
    """Logs every finished training episode's metrics and reward terms under ``mr/``."""

    def __init__(self) -> None:
        super().__init__()
        self._terms: list[dict[str, float]] = []
        # episodes finished and steps of the running ones: a short run whose episodes never
        # end has no mr/ (nor SB3 rollout/) tags, and train() says so with these numbers
        self.episodes = 0
        self._running: list[int] = []
        self.longest = 0

    def _on_training_start(self) -> None:
        self._terms = [{} for _ in range(self.training_env.num_envs)]
        self._running = [0] * self.training_env.num_envs

    def _on_step(self) -> bool:
        infos = self.locals.get("infos", [])
        for i, info in enumerate(infos):
            acc = self._terms[i]
            self._running[i] += 1
            for k, v in info.get("reward_terms", {}).items():
                acc[k] = acc.get(k, 0.0) + v
            m = info.get("episode_metrics")
            if m is not None:
                for tag, v in metric_scalars(m).items():
                    if not np.isnan(v):
                        self.logger.record_mean(f"mr/{tag}", v)
                for k, v in acc.items():
                    self.logger.record_mean(f"mr/reward_{k}", v)
                self._terms[i] = {}
                self.episodes += 1
                self.longest = max(self.longest, self._running[i])
                self._running[i] = 0
        return True

    def _on_training_end(self) -> None:
        if self.episodes == 0 and self._running:
            self.longest = max(self._running)


@dataclass
class ParallelEval:
    """How :class:`HeldOutEvalCallback` runs its episodes in worker processes
    (``eval.workers``): each evaluation saves the model to ``scratch`` and every worker
    plays seeds with that file, in the env that ``make_env(env_kwargs, hooks)`` builds.
    The numbers are the serial evaluation's: the same weights, env, seeds and decode."""

    workers: int
    algorithm: str  # agents.config.algorithm_class's name, to load the saved model
    env_kwargs: dict[str, Any]
    hooks: str | None
    scratch: str  # the .zip the workers load (removed when training ends)
    # torch threads per worker: the training's own (torch_threads), so that a worker's
    # numbers are the serial loop's also above 1 thread
    threads: int = 1
    pool: ProcessPoolExecutor | None = field(default=None, repr=False)  # made lazily


def _worker_init(threads: int) -> None:
    import signal

    import torch

    torch.set_num_threads(threads)
    # Ctrl-C stops the training process, which shuts the pool down: no worker tracebacks
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class HeldOutEpisode(NamedTuple):
    """What one held-out episode gives the evaluation."""

    scalars: dict[str, float]  # its mr_eval/ scalars
    decisions: int
    whole: bool  # it ran its whole workload (no cap cut it)
    episode_return: float


def _held_out(r: Any, max_steps: int) -> HeldOutEpisode:
    return HeldOutEpisode(
        metric_scalars(r.metrics), r.steps, _ran_whole(r, max_steps), float(r.episode_return)
    )


def held_out_episode(
    zip_path: str,
    algorithm: str,
    env_kwargs: dict[str, Any],
    hooks: str | None,
    seed: int,
    decode: str,
    max_steps: int,
    temperature: float = 1.0,
) -> HeldOutEpisode:
    """One held-out episode of a saved model (a worker's task, top level for ``spawn``)."""
    import mrgym
    from agents.config import algorithm_class
    from agents.env_hooks import make_env

    model = algorithm_class(algorithm).load(zip_path, device="cpu")
    env = make_env(env_kwargs, hooks)
    try:
        r = mrgym.run_episode(
            env,
            mrgym.ModelPolicy(model, decode=decode, temperature=temperature),
            seed=seed,
            max_steps=max_steps,
        )
    finally:
        env.close()
    return _held_out(r, max_steps)


def _ran_whole(r: Any, max_steps: int) -> bool:
    """Whether an episode ran its whole workload: neither the time cap nor the step cap
    (which guards against a deterministic policy that idles for ever) cut it."""
    return not r.metrics.get("truncated") and r.steps < max_steps


class HeldOutEvalCallback(BaseCallback):
    """Every ``every_steps``, run masked evaluation episodes on fixed held-out seeds through
    the same loop as the baselines (``mrgym.run_episode`` + ``ModelPolicy``); with
    ``evaluate_at_start``, also at step 0 (a warm start's clone, before any update).  With
    ``parallel`` (given for 2 or more workers), the episodes run in worker processes
    (:class:`ParallelEval`).  With ``report``, a bar counts the episodes while they run (on a
    terminal) and one line per evaluation gives its result, as SB3's ``EvalCallback`` does.

    Its ``mr_eval/`` tags are written at the evaluation's step on their own: SB3's values
    still pending (``train/*``, the rollout's ``mr/`` means) wait for the algorithm's dump
    at the rollout's end, so every tag has one point per step.  The evaluation's time is
    taken out of SB3's ``time/fps`` (``eval_s`` adds it up)."""

    def __init__(
        self,
        make_env,
        seeds: list[int],
        every_steps: int,
        max_steps: int = 200_000,
        best_path: str | None = None,
        decode: str = "argmax",
        p95_limit: float | None = None,
        evaluate_at_start: bool = False,
        parallel: ParallelEval | None = None,
        report: bool = False,
        temperature: float = 1.0,
    ):
        super().__init__()
        self.parallel = parallel
        # evaluate the untrained-by-RL model at step 0 (a warm start's clone), so that
        # best_model.zip stays the clone when fine-tuning never beats it on these seeds
        self.evaluate_at_start = evaluate_at_start
        self.decode = decode  # mrgym.policy.DECODES
        self.temperature = temperature  # "sample"'s (eval.temperature)
        # an evaluation whose mean p95 JCT is above this never counts as best (a baseline's
        # p95 on the same seeds: eval.p95_no_worse_than)
        self.p95_limit = p95_limit
        # model selection on these (validation) seeds: the best evaluation's model is saved
        # to best_path; an evaluation with an unfinished episode never counts as best
        self.best_path = best_path
        self.best: tuple[int, float] | None = None
        self.best_p95: float | None = None  # the best evaluation's p95 JCT (mean over seeds)
        self.max_steps = max_steps
        self.make_env = make_env
        self.seeds = seeds
        self.every = every_steps
        self._next = every_steps
        self._last = -1  # the step of the last evaluation
        self.history: list[tuple[int, float]] = []
        self.episode_steps: list[int] = []  # of the last evaluation, one per seed
        self.report = report
        self.eval_s = 0.0  # wall seconds of every evaluation so far

    def _on_training_start(self) -> None:
        # a resumed run starts at its step count: the next evaluation is the next multiple
        # of every_steps after it (not every step until the schedule catches up)
        self._next = (self.num_timesteps // self.every + 1) * self.every
        self._last = -1
        if self.evaluate_at_start and self.num_timesteps == 0:
            self.evaluate()

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self._next = (self.num_timesteps // self.every + 1) * self.every
            self.evaluate()
        return True

    def _on_training_end(self) -> None:
        try:
            if self._last != self.num_timesteps:  # not twice at the same step
                self.evaluate()
        finally:
            self.close()

    def close(self) -> None:
        """Stop the worker processes and remove the scratch model (``parallel``)."""
        par = self.parallel
        if par is None:
            return
        if par.pool is not None:
            par.pool.shutdown(cancel_futures=True)
            par.pool = None
        if os.path.exists(par.scratch):
            os.remove(par.scratch)

    def _bar(self):
        """The bar over this evaluation's episodes: on a terminal with ``report``, else None."""
        if not (self.report and sys.stderr.isatty()):
            return None
        from tqdm import tqdm

        return tqdm(
            total=len(self.seeds),
            desc=f"eval @ {self.num_timesteps:,}",
            unit="episode",
            leave=False,
            dynamic_ncols=True,
        )

    def _episodes(self) -> list[HeldOutEpisode]:
        """One episode per seed, in seed order, with the bar (if any) ticking as they end."""
        bar = self._bar()
        try:
            if self.parallel is not None:
                return self._parallel_episodes(bar)
            import mrgym

            env = self.make_env()
            out = []
            for s in self.seeds:
                policy = mrgym.ModelPolicy(
                    self.model, decode=self.decode, temperature=self.temperature
                )
                r = mrgym.run_episode(env, policy, seed=s, max_steps=self.max_steps)
                out.append(_held_out(r, self.max_steps))
                if bar is not None:
                    bar.update()
            env.close()
            return out
        finally:
            if bar is not None:
                bar.close()

    def _parallel_episodes(self, bar) -> list[HeldOutEpisode]:
        par = self.parallel
        if par.pool is None:
            import multiprocessing

            par.pool = ProcessPoolExecutor(
                min(par.workers, len(self.seeds)),
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_worker_init,
                initargs=(par.threads,),
            )
        self.model.save(par.scratch)
        args = (par.scratch, par.algorithm, par.env_kwargs, par.hooks)
        futures = [
            par.pool.submit(
                held_out_episode, *args, s, self.decode, self.max_steps, self.temperature
            )
            for s in self.seeds
        ]
        for _ in as_completed(futures):
            if bar is not None:
                bar.update()
        return [f.result() for f in futures]

    def evaluate(self) -> float:
        t0 = time.perf_counter_ns()
        episodes = self._episodes()
        rows = [e.scalars for e in episodes]
        self.episode_steps = [e.decisions for e in episodes]
        complete = all(e.whole for e in episodes)
        values = {}
        for tag in rows[0]:
            vals = [r[tag] for r in rows if not np.isnan(r[tag])]
            if vals:
                values[f"mr_eval/{tag}"] = float(np.mean(vals))
        jct = float(np.mean([r["mean_jct"] for r in rows]))
        self._last = self.num_timesteps
        self.history.append((self.num_timesteps, jct))
        # 1 when every episode ran its whole workload: agents.analysis.pareto keeps cut ones
        # off the front
        values["mr_eval/complete"] = float(complete)
        p95 = float(np.mean([r["p95_jct"] for r in rows]))
        eligible = complete
        if self.p95_limit is not None:
            values["mr_eval/p95_limit"] = self.p95_limit
            eligible &= p95 <= self.p95_limit  # a NaN p95 (no job finished) never qualifies
        new_best = bool(self.best_path and eligible and (self.best is None or jct < self.best[1]))
        if new_best:
            self.best = (int(self.num_timesteps), jct)
            self.best_p95 = p95
            self.model.save(self.best_path)
        write_alone(self.logger, values, self.num_timesteps)
        took = time.perf_counter_ns() - t0
        self.eval_s += took / 1e9
        # SB3's time/fps is the steps since learn() began over the time since its
        # start_time: moving that start by the evaluation's time leaves training time
        if hasattr(self.model, "start_time"):
            self.model.start_time += took
        if self.report:
            ret = float(np.mean([e.episode_return for e in episodes]))
            self._say(jct, p95, ret, took / 1e9, self._verdict(new_best, complete, p95))
        return jct

    def _verdict(self, new_best: bool, complete: bool, p95: float) -> str:
        """Whether this evaluation became best_model.zip, and why not."""
        if not self.best_path:
            return ""
        if new_best:
            return "new best"
        if not complete:
            return "not a candidate: an episode was cut (eval.max_steps or the time cap)"
        if self.p95_limit is not None and not p95 <= self.p95_limit:
            return f"not a candidate: p95 above {self.p95_limit:.1f} s (eval.p95_no_worse_than)"
        if self.best is None:
            return "no best yet"
        return f"best {self.best[1]:.1f} s @ {self.best[0]:,}"

    def _say(self, jct: float, p95: float, ret: float, wall: float, verdict: str) -> None:
        from tqdm import tqdm

        from mrgym.summary import format_seeds

        n = len(self.seeds)
        jcts = f"mean JCT {jct:.1f} s, p95 {p95:.1f} s" if np.isfinite(jct) else "no job finished"
        line = (
            f"eval @ {self.num_timesteps:,} steps: {jcts}, return {ret:.1f} "
            f"({n} seed{'s' * (n != 1)}: {format_seeds(self.seeds)}; {wall:.0f} s)"
        )
        # tqdm.write prints above any bar on the terminal, as print does elsewhere
        tqdm.write(f"{line}: {verdict}" if verdict else line, file=sys.stderr)


def write_alone(logger: Any, values: dict[str, float], step: int) -> None:
    """Write ``values`` to SB3's ``logger`` at ``step`` without the values it holds for its
    own next dump (``train/*`` of the last update, the rollout's ``mr/`` means so far), which
    stay recorded: dumping those here would put them at this step and again, or nowhere,
    at the rollout's end."""
    pending = (
        dict(logger.name_to_value),
        dict(logger.name_to_count),
        dict(logger.name_to_excluded),
    )
    held = (logger.name_to_value, logger.name_to_count, logger.name_to_excluded)
    for d in held:
        d.clear()
    for key, value in values.items():
        logger.record(key, value)
    logger.dump(step)
    for d, saved in zip(held, pending, strict=True):
        d.update(saved)


class HParamsTextCallback(BaseCallback):
    """Writes the run's configuration as a markdown table (TensorBoard TEXT tab)."""

    def __init__(self, table: dict[str, Any]):
        super().__init__()
        self.table = table

    def _on_training_start(self) -> None:
        from stable_baselines3.common.logger import TensorBoardOutputFormat

        text = "|key|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in self.table.items())
        for fmt in self.logger.output_formats:
            if isinstance(fmt, TensorBoardOutputFormat):
                fmt.writer.add_text("hyperparameters", text, 0)
                fmt.writer.flush()

    def _on_step(self) -> bool:
        return True


class TqdmCallback(BaseCallback):
    """A progress bar; with ``episodes`` it shows the finished training episodes, so that a
    run whose first episode has not ended yet (no mr/ tags) is visible as such.  Off a
    terminal (a log file, CI) it prints a plain line at every tenth of the run instead."""

    def __init__(self, total: int, initial: int = 0, episodes: MRMetricsCallback | None = None):
        super().__init__()
        self.total = total
        self.initial = initial
        self.episodes = episodes
        self._shown = -1
        self.bar = None
        self._next_line = 0
        self._t0 = 0.0

    def _on_training_start(self) -> None:
        import sys
        import time

        from tqdm import tqdm

        if sys.stderr.isatty():
            self.bar = tqdm(
                total=self.total,
                initial=self.initial,
                unit="step",
                desc="train",
                dynamic_ncols=True,
            )
        self._t0 = time.perf_counter()
        self._next_line = self.initial + max(1, (self.total - self.initial) // 10)

    def _on_step(self) -> bool:
        n = self.model.num_timesteps
        eps = self.episodes.episodes if self.episodes is not None else None
        if self.bar is None:
            if n >= self._next_line:
                self._line(n, eps)
                self._next_line += max(1, (self.total - self.initial) // 10)
            return True
        self.bar.update(n - self.bar.n)
        if eps is not None and eps != self._shown:
            self._shown = eps
            note = " (mr/ tags start after the first)" if eps == 0 else ""
            self.bar.set_postfix_str(f"episodes finished: {eps}{note}", refresh=False)
        return True

    def _line(self, n: int, eps: int | None) -> None:
        import sys
        import time

        wall = time.perf_counter() - self._t0
        done = "" if eps is None else f", episodes finished: {eps}"
        print(
            f"train: {n:,}/{self.total:,} steps ({100 * n / self.total:.0f} %), {wall:.0f} s{done}",
            file=sys.stderr,
            flush=True,
        )

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()
