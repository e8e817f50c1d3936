"""What a trained agent's margin is made of: its declines, its job choice, or both together.

In the agent's action space a decision is two choices at once: launch or decline the slot
that asks, and, on a launch, which job.  ``hostcap`` (``baselines/hostcap.py``) makes the
first by a fixed cap on the tasks a host runs and the second uniformly at random.  Each
variant here plays a model's own environment (its hooks and gate included) and takes one or
both choices from the model, the other from ``hostcap``:

- ``agent``: the model itself, sampled (``ModelPolicy``'s ``decode="sample"``, seeded by
  the episode seed as ``mrgym compare --models`` plays it);
- ``agent-declines``: the model's probability of declining (decline and any waits) decides
  launch or decline, by a draw (a decline is then the model's own decline or wait); a
  launch is drawn uniformly among the legal launch actions, as ``random`` draws a job;
- ``cap-declines``: decline where ``hostcap``'s cap does; elsewhere launch, the job drawn
  from the model's probabilities of the legal launches, renormalized;
- ``either-declines``: decline where the cap does, or where the model's draw declines;
  launch as ``cap-declines``;
- ``cap-held``: as ``cap-declines``, but the job the model last drew for this kind of slot
  (map or reduce) launches again wherever it can, on any VM, and the model is asked only
  when it cannot: a job priority held across slots, as an action space that decides more
  than one slot would hold it;
- ``cap-held-share``: as ``cap-held``, with a parallelism limit: the held job launches only
  while it runs fewer tasks of the slot's kind than its equal share of the cluster's slots
  of that kind (the slots / the active jobs, rounded up); past it the model draws afresh
  (and may draw the same job);
- ``hostcap``: the cap declines, a uniform launch: ``<gater>-gate+hostcap`` (``hostcap``
  for a model without a gate) played in the model's environment.

Departures from the baselines as ``mrgym benchmark`` runs them, shared by all variants: a
launch draws among the model's ``job_slots`` visible jobs (the first K in its queue order),
not among all, and with speculation on among launch actions (backups included), not jobs;
the cap is ``hostcap``'s fraction tuned for the scenario under the model's gater
(:func:`cap_gater`; ``--frac`` sets another).  A variant declines only where declining is
legal and launches where only launches are (under ``work_conserving: true`` the cap never
binds where a launch is legal).

Each (model, variant, seed) is one episode, cut at the model's decision cap
(``eval.max_steps``) as ``mrgym compare`` cuts it; draws are seeded by the episode seed,
and ``agent`` draws exactly as ``ModelPolicy`` does, so its numbers equal ``mrgym compare
--models`` on the same seeds.  The table gives each variant's mean JCT, p95, node+server
locality, decisions per episode and how often the model was asked, the episodes cut with
jobs unfinished, and its paired per-seed difference (95 % interval) to the model and to
``hostcap``.  The test seeds are refused: they choose nothing.

    python -m agents.analysis.ablate --models ila72-gate-ft-v1-s0 --seeds 2010-2019 --workers 2
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm import tqdm

from mrgym import registry
from mrgym.benchmark.leaderboard import pct
from mrgym.benchmark.protocol import TEST_SEEDS
from mrgym.benchmark.stats import paired_difference
from mrgym.runner import run_episode
from mrgym.seeds import parse_seeds
from mrgym.sim.scheduler import MAP, Decision

if TYPE_CHECKING:  # pragma: no cover
    import gymnasium as gym

    from agents.model_policy import ModelPolicy

#: the variants, in the table's order (module docstring)
VARIANTS = (
    "agent",
    "agent-declines",
    "cap-declines",
    "either-declines",
    "cap-held",
    "cap-held-share",
    "hostcap",
)
#: the references every variant is compared with
REFERENCES = ("agent", "hostcap")


def _check_variants(variants: Sequence[str]) -> list[str]:
    bad = [v for v in variants if v not in VARIANTS]
    if bad or not variants:
        raise ValueError(f"--variants: expected a list of {VARIANTS}, got {list(variants)!r}")
    return list(dict.fromkeys(variants))  # each once, in the order given


def _check_seeds(seeds: Sequence[int]) -> list[int]:
    test = sorted(set(seeds) & set(TEST_SEEDS))
    if test:
        raise ValueError(
            f"--seeds: {test} are test seeds, which choose nothing; use validation seeds "
            "(2000-2019)"
        )
    if not seeds:
        raise ValueError("--seeds: expected at least one seed")
    return list(dict.fromkeys(seeds))


def cap_gater(model: Any) -> str | None:
    """The gater under which ``hostcap``'s cap was tuned for ``model``'s environment: the
    gater of its hooks when their gate answers slots (``hooks_gate``; a composition's
    hooks, e.g. ``hybridmr-gate+srpt``, name it first), else None (tuned alone)."""
    hooks = model.hooks
    if hooks is None or not model.env_kwargs.get("hooks_gate", False):
        return None
    parts = registry.composition(hooks)
    gater = parts[0] if parts else hooks
    return gater if gater in registry.GATERS else None


@lru_cache(maxsize=8)
def _load(model: str) -> Any:
    """A model, loaded once per process (each episode then takes a shallow copy)."""
    from mrgym.policy import ModelPolicy

    return ModelPolicy.load(model, decode="sample")


class AblatedPolicy:
    """A model's environment, with its launch-or-decline choice, its job choice, or both
    taken from ``hostcap`` (``variant``: one of :data:`VARIANTS`)."""

    def __init__(self, model: str | ModelPolicy, variant: str, frac: float | None = None):
        from baselines.hostcap import HostCapScheduler, check_frac

        _check_variants([variant])
        if isinstance(model, str):
            # a copy: the episode's seeded draws and decision cap are its own
            model = copy.copy(_load(model))
        elif model.decode != "sample":
            raise ValueError(f"model: expected decode='sample', got {model.decode!r}")
        self.model = model
        self.variant = variant
        self.name = f"{model.name}:{variant}"
        self.cap = HostCapScheduler(frac=check_frac(frac, "--frac"), gater=cap_gater(model))
        self.env: Any = None
        self._rng = np.random.default_rng(0)
        self._held: dict[str, int] = {}  # cap-held: slot kind -> the job id it holds
        self.asks = 0  # how often the model was asked this episode

    def make_env(self) -> gym.Env:
        return self.model.make_env()

    def bind(self, env: gym.Env) -> None:
        self.model.bind(env)
        self.env = env.unwrapped
        self._decline = int(self.env.codec.decline)

    def start_episode(self, seed: int) -> None:
        self.model.start_episode(seed)
        self.cap.reset(seed)
        # the variants' own draws: apart from the model's, so that "agent" draws as it does
        self._rng = np.random.default_rng([int(seed), 0xAB1A7E])
        self._held, self.asks = {}, 0

    def predict(self, obs: np.ndarray, info: dict[str, Any]) -> int:
        if self.variant == "agent":
            self.asks += 1
            return self.model.predict(obs, info)
        mask = info["action_mask"].astype(bool)
        kind = info["slot_kind"]
        first = self._decline
        launches = np.flatnonzero(mask[:first])
        can_decline = bool(mask[first])
        if len(launches) == 0:
            return first
        if can_decline and self._cap_declines():
            return first
        if self.variant == "hostcap":
            return int(self._rng.choice(launches))
        if self.variant in ("cap-held", "cap-held-share"):
            held = self._held_action(kind, mask)
            if held is not None and (self.variant == "cap-held" or self._below_share(kind)):
                return held
        self.asks += 1
        probs = self.model._probs(obs, mask)
        if self.variant in ("agent-declines", "either-declines") and can_decline:
            declines = probs[first:]  # decline, then any waits: the model's own choice
            if self._rng.random() < declines.sum() / probs.sum():
                if len(declines) == 1:  # no waits: nothing more to draw
                    return first
                return first + int(self._rng.choice(len(declines), p=declines / declines.sum()))
        launch = probs[:first]
        if self.variant == "agent-declines" or launch.sum() <= 0:
            # uniform; or every legal launch's probability underflowed to 0
            return int(self._rng.choice(launches))
        action = int(self._rng.choice(first, p=launch / launch.sum()))
        if self.variant in ("cap-held", "cap-held-share"):
            self._held[kind] = self.env.decode(action).job
        return action

    def _held_action(self, kind: str, mask: np.ndarray) -> int | None:
        """The held job's launch of this slot's kind where it is legal, else None."""
        job = self._held.get(kind)
        if job is None:
            return None
        try:
            a = self.env.encode(Decision(kind, job))
        except ValueError:  # not among the job slots here
            return None
        return a if mask[a] else None

    def _below_share(self, kind: str) -> bool:
        """Whether the held job runs fewer tasks of ``kind`` than its equal share of the
        cluster's slots of that kind (cap-held-share's parallelism limit)."""
        view = self.env.decision_context().view
        job = view.job(self._held[kind])
        running = job.running_maps if kind == MAP else job.running_reduces
        slots = sum(w.map_slots if kind == MAP else w.reduce_slots for w in view.topology.workers)
        return running < math.ceil(slots / max(len(view.jobs), 1))

    def _cap_declines(self) -> bool:
        """Whether ``hostcap``'s cap declines this slot (only the variants that use it)."""
        if self.variant == "agent-declines":
            return False
        return self.cap.gate(self.env.decision_context()) is not None


def play(model: str, variant: str, seed: int, frac: float | None = None) -> dict[str, Any]:
    """One episode of ``variant`` on ``seed``: its metrics that the table reads."""
    pol = AblatedPolicy(model, variant, frac)
    # the model's decision cap, as mrgym compare --models plays it (its eval.max_steps)
    r = run_episode(pol.make_env(), pol, seed=seed, max_steps=pol.model.eval_max_steps)
    m = r.metrics
    loc = m["map_locality"]
    return {
        "model": model,
        "variant": variant,
        "seed": seed,
        "mean_jct_s": m["mean_jct_s"],
        "p95_jct_s": m["p95_jct_s"],
        "node_server_locality": loc.get("node", 0.0) + loc.get("server", 0.0),
        "decisions": r.steps,
        "model_asks": pol.asks,
        "truncated": bool(m["truncated"]),
    }


def _play(args: tuple[str, str, int, float | None]) -> dict[str, Any]:
    return play(*args)


def run(
    models: list[str],
    seeds: list[int],
    variants: Sequence[str] = VARIANTS,
    workers: int = 1,
    frac: float | None = None,
) -> list[dict[str, Any]]:
    """Every (model, variant, seed) episode, in that order."""
    from agents.train import resolve_model_path
    from baselines.hostcap import check_frac

    variants = _check_variants(variants)
    seeds = _check_seeds(seeds)
    check_frac(frac, "--frac")
    if not models:
        raise ValueError("--models: expected at least one model path or short name")
    if workers < 1:
        raise ValueError(f"--workers: expected an integer >= 1, got {workers}")
    for m in models:  # a bad name fails before any episode runs
        resolve_model_path(m)
    jobs = [(m, v, s, frac) for m in models for v in variants for s in seeds]
    if workers <= 1:
        return [play(*j) for j in tqdm(jobs, desc="ablate", unit="ep")]
    with ProcessPoolExecutor(workers) as ex:
        return list(tqdm(ex.map(_play, jobs), total=len(jobs), desc="ablate", unit="ep"))


def table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (model, variant): means over its seeds and its paired differences."""
    by: dict[tuple[str, str], dict[int, dict]] = {}
    for r in rows:
        by.setdefault((r["model"], r["variant"]), {})[r["seed"]] = r
    out = []
    for (model, variant), eps in by.items():
        seeds = sorted(eps)
        jct = [eps[s]["mean_jct_s"] for s in seeds]
        row: dict[str, Any] = {"model": model, "variant": variant, "seeds": len(seeds)}
        for key in ("mean_jct_s", "p95_jct_s", "node_server_locality", "decisions", "model_asks"):
            row[key] = float(np.mean([eps[s][key] for s in seeds]))
        row["truncated"] = sum(eps[s]["truncated"] for s in seeds)
        for ref in REFERENCES:
            other = by.get((model, ref))
            if other is None:
                continue
            d = paired_difference(jct, [other.get(s, {}).get("mean_jct_s") for s in seeds])
            row[f"vs_{ref}"] = [d.mean_pct, d.low_pct, d.high_pct]
        out.append(row)
    return out


def _pct(d: list | None) -> str:
    # the leaderboard's formatter: a bound that rounds to zero but is not keeps its side
    if d is None or d[0] is None:
        return ""
    if d[1] is None:
        return f"{pct(d[0])} %"
    return f"{pct(d[0])} % [{pct(d[1])}, {pct(d[2])}]"


def markdown(tab: list[dict[str, Any]]) -> str:
    """The table; "cut": episodes that ended with jobs unfinished (the time cap or the
    model's decision cap), whose mean JCT counts only the jobs that finished."""
    head = (
        "| model | variant | seeds | cut | mean JCT (s) | p95 (s) | node+server local | "
        "decisions | model asked | vs agent | vs hostcap |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = [
        f"| `{r['model']}` | {r['variant']} | {r['seeds']} | {r['truncated']} | "
        f"{r['mean_jct_s']:.1f} | {r['p95_jct_s']:.1f} | "
        f"{r['node_server_locality']:.3f} | {r['decisions']:.0f} | {r['model_asks']:.0f} | "
        f"{'' if r['variant'] == 'agent' else _pct(r.get('vs_agent'))} | "
        f"{'' if r['variant'] == 'hostcap' else _pct(r.get('vs_hostcap'))} |"
        for r in tab
    ]
    return head + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m agents.analysis.ablate", description=__doc__.split("\n")[0]
    )
    p.add_argument("--models", required=True, help="comma-separated model paths or short names")
    p.add_argument("--seeds", default="2010-2019", help="episode seeds (validation: 2000-2019)")
    p.add_argument("--variants", default=",".join(VARIANTS), help=f"any of {VARIANTS}")
    p.add_argument("--frac", type=float, help="hostcap's fraction (default: its tuned value)")
    p.add_argument("--workers", type=int, default=1, help="processes playing episodes")
    p.add_argument("--out", help="also write the episodes and the table to this JSON file")
    a = p.parse_args(argv)
    try:
        seeds = parse_seeds(a.seeds)
        models = [m for m in a.models.split(",") if m]
        rows = run(models, seeds, a.variants.split(","), a.workers, a.frac)
    except (ValueError, FileNotFoundError) as e:
        print(f"ablate: {e}", file=sys.stderr)
        return 2
    tab = table(rows)
    print(markdown(tab), end="")
    if a.out:
        Path(a.out).write_text(json.dumps({"episodes": rows, "table": tab}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
