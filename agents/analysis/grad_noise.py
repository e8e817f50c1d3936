"""How much signal one PPO update carries: the gradient noise scale of the policy loss.

McCandlish et al. ("An Empirical Model of Large-Batch Training", 2018, §2.2) define the
simple noise scale ``B_simple = tr(Σ) / |G|²``: ``G`` the expected gradient, ``Σ`` the
covariance of one sample's gradient.  With batches well below ``B_simple`` samples, a step
is mostly noise and the steps needed to train grow as ``1 + B_simple / B``.  Here a sample
is one rollout (``n_steps`` decisions per environment, one update's data when ``n_envs`` is
1), not one decision, since the decisions of a rollout are correlated.  ``G`` is the
expected gradient of PPO's policy loss under the config's own advantage estimate, which is
not the gradient of the expected return where that estimate is biased (a value head
bootstrapped after a short λ).

The measurement is taken at one model: by default the config's ``init_from`` for
``--seed`` (or a fresh network when it has none); ``--model`` names another, ``--clone``
makes the behaviour clone the config's ``pretrain`` makes for ``--seed``.  The weights are
copied as ``init_from`` copies them (a zeroed value head under ``init_value: false``, wait
actions grown), on the config's environment and hyper-parameters.  ``S`` independent
streams (env seeds ``DIAG_SEED0 + k``, a range no split, demonstration or training seed
uses), each ``R`` rollouts long, are collected and their advantages computed as training
does: the config's rollout buffer, with γ and GAE's λ per simulated second where
configured.  No update is made between rollouts, so the advantage estimate does not change
which rollouts are collected.  Per rollout ``b``:

- ``g_b``: the gradient of PPO's clipped policy loss at the model, where the probability
  ratio is 1, so it is ``-mean(Â ∇log π)``, with ``Â`` normalized over the rollout (PPO
  normalizes per minibatch);
- ``e_b``: the gradient of the entropy term, ``ent_coef × -mean(H)``.

Estimates (:func:`noise_scale`, for ``g`` and for ``e`` alike):

- ``|G|²``: the mean inner product of two different streams' mean gradients.  The streams
  are independent, so it is unbiased; its interval is a jackknife over streams;
- ``tr Σ``: the mean ``|g_b|²`` less ``|G|²``; and ``R`` times the variance of a stream's
  mean, which equals ``tr Σ`` when a stream's rollouts are uncorrelated and exceeds it when
  they share their luck;
- ``B_simple`` in rollouts, its data in decisions and episodes, and its range from
  ``|G|²``'s interval alone (each end a one-sided 97.5 % bound);
- the mean cosine between two rollouts' gradients from different streams;
- for the entropy term, its expected gradient's norm against ``|G|``, and the cosine of two
  rollouts' entropy gradients, which says whether it points the same way at every update.

Usage (the numbers for ``ila72``'s models trained before Fidelity III are in CHANGELOG.md, under
Tracks)::

    python -m agents.analysis.grad_noise --config configs/train/ftlam90_jobset_ila72_gate.yaml \\
        --seed 0 --streams 10 --rollouts 6 --workers 2 --out grad_noise.json
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml
from scipy.stats import t as student_t
from stable_baselines3.common.callbacks import BaseCallback

if TYPE_CHECKING:  # pragma: no cover
    from stable_baselines3.common.base_class import BaseAlgorithm

    from agents.config import TrainConfig

#: First env seed of the streams: apart from validation (2000-2019), test (3000-3009),
#: the behaviour-cloning demonstrations (10 000 and up) and the training seeds' envs.
DIAG_SEED0 = 5000


@dataclass
class Stream:
    """One stream's rollouts: their gradients and what they covered."""

    pg: np.ndarray  # (rollouts, parameters): the policy loss's gradient per rollout
    ent: np.ndarray  # (rollouts, parameters): the entropy term's gradient per rollout
    decisions: int  # decisions collected
    episodes: int  # episodes that ended in them
    sim_seconds: float  # simulated seconds they covered (nan without per-second sojourns)


@dataclass
class NoiseScale:
    """What :func:`noise_scale` estimates (see the module docstring)."""

    streams: int
    rollouts: int  # in all
    g2: float  # |G|^2
    g2_low: float  # its 95 % interval (jackknife over streams)
    g2_high: float
    trace: float  # tr(Sigma) of one rollout's gradient
    trace_of_means: float  # R x the variance of a stream's mean: trace if uncorrelated
    b_simple: float  # trace / g2, in rollouts (inf when g2 <= 0)
    b_low: float  # trace / g2_high: from g2's interval alone
    b_high: float  # trace / g2_low (inf when g2_low <= 0)
    cos: float  # mean cosine of two rollouts' gradients from different streams


def _cross_mean(vectors: np.ndarray) -> float:
    """The mean inner product of two different rows of ``vectors``."""
    n = len(vectors)
    total = vectors.sum(axis=0)
    return float((total @ total - np.einsum("ij,ij->", vectors, vectors)) / (n * (n - 1)))


def noise_scale(streams: list[np.ndarray]) -> NoiseScale:
    """The noise scale of per-rollout gradients ``streams[i]`` (rollouts x parameters,
    the same number of rollouts in each), the streams independent of each other, the
    rollouts within one possibly not."""
    if len(streams) < 3:
        raise ValueError(f"streams: need at least 3 for an interval, got {len(streams)}")
    if len({len(x) for x in streams}) != 1:
        raise ValueError(f"streams: expected equal lengths, got {[len(x) for x in streams]}")
    grads = np.stack(streams).astype(np.float64)  # streams x rollouts x parameters
    n, r = grads.shape[:2]
    means = grads.mean(axis=1)
    g2 = _cross_mean(means)
    jack = np.array([_cross_mean(np.delete(means, i, axis=0)) for i in range(n)])
    se = math.sqrt((n - 1) / n * float(((jack - jack.mean()) ** 2).sum()))
    half = float(student_t.ppf(0.975, n - 1)) * se
    trace = float(np.einsum("srp,srp->", grads, grads)) / (n * r) - g2
    unit = grads / np.maximum(np.linalg.norm(grads, axis=2, keepdims=True), 1e-30)
    lo, hi = g2 - half, g2 + half
    sq_means = float(np.einsum("sp,sp->", means, means)) / n
    return NoiseScale(
        streams=n,
        rollouts=n * r,
        g2=g2,
        g2_low=lo,
        g2_high=hi,
        trace=trace,
        trace_of_means=r * (sq_means - g2),
        b_simple=trace / g2 if g2 > 0 else math.inf,
        b_low=trace / hi if hi > 0 else math.inf,
        b_high=trace / lo if lo > 0 else math.inf,
        # equal stream lengths: the mean over cross-stream pairs of rollouts is the mean
        # over pairs of streams of their mean unit vectors' inner product
        cos=_cross_mean(unit.mean(axis=1)),
    )


def flat_grads(grads: Sequence[Any], params: Sequence[Any]) -> np.ndarray:
    """Gradients as one vector, in ``params``' order; a parameter without one counts 0."""
    import torch

    return np.concatenate(
        [
            (g if g is not None else torch.zeros_like(p)).detach().numpy().ravel()
            for g, p in zip(grads, params)
        ]
    )


def _gradients(model: BaseAlgorithm) -> tuple[np.ndarray, np.ndarray]:
    """The policy loss's and the entropy term's gradients on the model's full rollout
    buffer, at the model's own weights (PPO's first step, where the ratio is 1)."""
    import torch
    from gymnasium import spaces

    policy = model.policy
    params = [p for p in policy.parameters() if p.requires_grad]
    data = next(model.rollout_buffer.get(batch_size=None))
    actions = data.actions
    if isinstance(model.action_space, spaces.Discrete):
        actions = actions.long().flatten()
    masks = getattr(data, "action_masks", None)
    kw = {"action_masks": masks} if masks is not None else {}
    _, log_prob, entropy = policy.evaluate_actions(data.observations, actions, **kw)
    adv = data.advantages
    if model.normalize_advantage and len(adv) > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg_loss = -(adv * log_prob).mean()
    ent_loss = -(entropy.mean() if entropy is not None else (-log_prob).mean())
    pg = torch.autograd.grad(pg_loss, params, retain_graph=True, allow_unused=True)
    ent = torch.autograd.grad(model.ent_coef * ent_loss, params, allow_unused=True)
    return flat_grads(pg, params), flat_grads(ent, params)


class _EpisodeCount(BaseCallback):
    """Counts the episodes that end while rollouts are collected."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def _on_step(self) -> bool:
        self.n += int(np.sum(self.locals["dones"]))
        return True


def _source(cfg: TrainConfig, model: str | None) -> Path | None:
    """The model to measure at: ``model``, else the config's ``init_from`` for its seed;
    a model whose weights would mean something else under ``cfg`` is refused."""
    from agents.train import (
        _init_source,
        config_differences,
        find_config,
        read_saved_config,
        resolve_model_path,
    )

    if model is None:
        return _init_source(cfg) if cfg.init_from is not None else None
    src = resolve_model_path(model)
    saved = read_saved_config(find_config(src))
    differ = config_differences(cfg, saved)
    if differ:
        raise ValueError(
            f"--model {model} was trained with other {', '.join(differ)} than {cfg.name}"
        )
    return src


def make_clone(cfg: TrainConfig, out: Path) -> Path:
    """The behaviour clone a training run of ``cfg`` starts from, made as ``train`` makes
    it (same seeds, same order), saved as a run folder in ``out`` with the cloning's
    loss and agreement in its ``train_stats.yaml``."""
    import torch

    from agents.train import _new_model, _warm_start, make_vec, seed_everything

    if cfg.pretrain is None:
        raise ValueError(f"--clone: {cfg.name} has no pretrain to make a clone with")
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(), sort_keys=False))
    seed_everything(cfg.seed)
    torch.set_num_threads(cfg.torch_threads)
    venv = make_vec(cfg)
    model = _new_model(cfg, venv, None)
    stats = _warm_start(model, cfg)  # how well it copied, as a run's train_stats.yaml says
    (out / "train_stats.yaml").write_text(yaml.safe_dump(stats, sort_keys=False))
    model.save(str(out / "model.zip"))
    venv.close()
    return out / "model.zip"


def collect_stream(config: str, seed: int, stream: int, rollouts: int, model: str | None) -> Stream:
    """Stream ``stream``'s rollouts at the model (see the module docstring)."""
    import torch
    from stable_baselines3.common.callbacks import CallbackList

    from agents.config import load_train_config
    from agents.train import _init_from, _new_model, make_vec, seed_everything

    cfg = load_train_config(config).model_copy(update={"seed": seed})
    src = _source(cfg, model)
    env_seed = DIAG_SEED0 + stream
    run_cfg = cfg.model_copy(update={"seed": env_seed, "n_envs": 1})
    seed_everything(env_seed)
    torch.set_num_threads(cfg.torch_threads)
    venv = make_vec(run_cfg)
    m = _new_model(run_cfg, venv, None)
    if src is not None:
        # as a fine-tuning copies them; loading reseeds the global generators with the
        # run's seed, here the stream's; its "starting from" line would repeat per stream
        with contextlib.redirect_stderr(io.StringIO()):
            _init_from(m, run_cfg.model_copy(update={"init_from": str(src)}), src)
    count = _EpisodeCount()
    callbacks: list[BaseCallback] = [count]
    if cfg.discount_per == "second":
        from agents.time_discount import SojournCallback

        callbacks.insert(0, SojournCallback())
    # SB3's own rollout collection, outside learn(): _setup_learn makes the logger, the
    # first observation and the callbacks; the huge total keeps the schedules' progress at
    # ~1 (no update is made, so it changes nothing but the logged learning rate)
    _, callback = m._setup_learn(10**12, CallbackList(callbacks), True, "grad_noise", False)
    callback.on_training_start(locals(), globals())
    pg, ent, seconds = [], [], 0.0
    for _ in range(rollouts):
        m.collect_rollouts(m.env, callback, m.rollout_buffer, m.n_steps)
        buf = m.rollout_buffer
        seconds += float(buf.dts.sum()) if hasattr(buf, "dts") else math.nan
        g, e = _gradients(m)
        pg.append(g)
        ent.append(e)
    venv.close()
    decisions = rollouts * m.n_steps
    return Stream(np.stack(pg), np.stack(ent), decisions, count.n, seconds)


def measure(
    config: str,
    seed: int,
    streams: int,
    rollouts: int,
    workers: int = 1,
    model: str | None = None,
    progress: bool = True,
    clone: bool = False,
) -> dict[str, Any]:
    """Collect ``streams`` x ``rollouts`` rollouts and estimate the noise scale."""
    from agents.config import load_train_config

    if streams < 3 or rollouts < 1:
        raise ValueError(f"--streams >= 3 and --rollouts >= 1 expected, got {streams}, {rollouts}")
    if clone and model is not None:
        raise ValueError("--clone and --model: give one")
    cfg = load_train_config(config).model_copy(update={"seed": seed})
    with tempfile.TemporaryDirectory() as tmp:
        label = None
        if clone:
            model = str(make_clone(cfg, Path(tmp) / "clone"))
            label = f"the behaviour clone for seed {seed}"
        src = _source(cfg, model)  # a missing model fails here, before any worker starts
        args = [(config, seed, k, rollouts, model) for k in range(streams)]
        if workers > 1:
            with ProcessPoolExecutor(workers) as pool:
                futures = [pool.submit(collect_stream, *a) for a in args]
                got = [_ticked(f.result(), k, streams, progress) for k, f in enumerate(futures)]
        else:
            got = [_ticked(collect_stream(*a), k, streams, progress) for k, a in enumerate(args)]
    return summarize(got, cfg, label or _label(src))


def _ticked(stream: Stream, k: int, n: int, progress: bool) -> Stream:
    if progress:
        print(f"grad_noise: stream {k + 1}/{n} collected", file=sys.stderr)
    return stream


def summarize(got: list[Stream], cfg: TrainConfig, label: str) -> dict[str, Any]:
    """The estimates of :func:`noise_scale` for the policy loss, per rollout, decision
    and episode, and for the entropy term against it."""
    ns = noise_scale([s.pg for s in got])
    ent = noise_scale([s.ent for s in got])
    decisions = sum(s.decisions for s in got)
    episodes = sum(s.episodes for s in got)
    per_rollout = decisions / ns.rollouts
    per_episode = decisions / episodes if episodes else math.nan
    g = math.sqrt(ns.g2) if ns.g2 > 0 else math.nan
    e = math.sqrt(ent.g2) if ent.g2 > 0 else math.nan
    return {
        "config": cfg.name,
        "seed": cfg.seed,
        "model": label,
        "env_seeds": [DIAG_SEED0, DIAG_SEED0 + ns.streams - 1],
        **asdict(ns),
        "decisions": decisions,
        "decisions_per_rollout": per_rollout,
        "episodes_ended": episodes,
        "decisions_per_episode": per_episode,
        "sim_seconds": float(sum(s.sim_seconds for s in got)),
        # B_simple rollouts' data, counted in decisions and in episodes
        "b_simple_decisions": ns.b_simple * per_rollout,
        "b_simple_episodes": ns.b_simple * per_rollout / per_episode,
        "grad_norm": g,
        "grad_norm_high": math.sqrt(ns.g2_high) if ns.g2_high > 0 else 0.0,
        "noise_norm": math.sqrt(max(ns.trace, 0.0)),  # one rollout's, around G
        "entropy_grad_norm": e,  # the entropy term's expected gradient
        "entropy_over_grad": e / g,
        "entropy_cos": ent.cos,  # of two rollouts' entropy gradients
    }


def _label(src: Path | None) -> str:
    """A model's name for people: a shipped model's or run's folder, else the file."""
    if src is None:
        return "a fresh network"
    return src.parent.name if src.name in ("model.zip", "best_model.zip") else str(src)


def _finite(x: Any) -> Any:
    """JSON has no inf or nan: None stands for both."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def report(r: dict) -> str:
    """The measurement as lines for people."""

    def fmt(x: float) -> str:
        return "inf" if math.isinf(x) else f"{x:.3g}"

    return "\n".join(
        [
            f"{r['config']} seed {r['seed']} at {r['model']}: {r['streams']} streams x "
            f"{r['rollouts'] // r['streams']} rollouts ({r['decisions']:,} decisions, "
            f"{r['episodes_ended']} episodes ended)",
            f"|G|^2 {fmt(r['g2'])} [{fmt(r['g2_low'])}, {fmt(r['g2_high'])}], "
            f"tr(Sigma) per rollout {fmt(r['trace'])}",
            f"R x the variance of a stream's mean {fmt(r['trace_of_means'])} (= tr(Sigma) if a "
            "stream's rollouts are uncorrelated)",
            f"B_simple {fmt(r['b_simple'])} rollouts [{fmt(r['b_low'])}, {fmt(r['b_high'])}]"
            f" from |G|^2's interval; its data: {fmt(r['b_simple_decisions'])} decisions, "
            f"{fmt(r['b_simple_episodes'])} episodes",
            f"mean cosine of two rollouts' gradients (different streams): {r['cos']:.4f}",
            f"norms: |G| {fmt(r['grad_norm'])} (95 % bound {fmt(r['grad_norm_high'])}), one "
            f"rollout's noise {fmt(r['noise_norm'])}, the entropy term's expected gradient "
            f"{fmt(r['entropy_grad_norm'])} ({fmt(r['entropy_over_grad'])} x |G|; two "
            f"rollouts' entropy gradients have cosine {r['entropy_cos']:.3f})",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m agents.analysis.grad_noise", description=__doc__.split("\n")[0]
    )
    p.add_argument("--config", required=True, help="a training config (configs/train/*.yaml)")
    p.add_argument("--seed", type=int, default=0, help="training seed: picks init_from's model")
    p.add_argument("--model", help="measure at this model instead (path or shipped name)")
    p.add_argument(
        "--clone", action="store_true", help="measure at the behaviour clone of pretrain"
    )
    p.add_argument("--streams", type=int, default=8, help="independent streams (>= 3)")
    p.add_argument("--rollouts", type=int, default=6, help="rollouts per stream")
    p.add_argument("--workers", type=int, default=1, help="processes collecting streams")
    p.add_argument("--out", help="also write the numbers to this JSON file")
    a = p.parse_args(argv)
    try:
        r = measure(a.config, a.seed, a.streams, a.rollouts, a.workers, a.model, clone=a.clone)
    except (ValueError, FileNotFoundError) as e:
        print(f"grad_noise: {e}", file=sys.stderr)
        return 2
    print(report(r))
    if a.out:
        clean = {k: _finite(v) for k, v in r.items()}
        Path(a.out).write_text(json.dumps(clean, indent=2, allow_nan=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
