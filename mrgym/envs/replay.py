"""Copies, pickles and snapshots of MRCluster-v0 by replay (the simulator's SimPy processes
are generators, which cannot be copied): an episode is its record — seed, options, the
actions taken, the hooks' state — and replaying the record rebuilds it exactly.  See
"Copying, pickling, snapshots" in MRClusterEnv's docstring."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from mrgym.sim.scheduler import Scheduler


@dataclass(frozen=True)
class EnvSnapshot:
    """What ``MRClusterEnv.snapshot()`` returns: the record of an episode, from which
    ``restore`` rebuilds it by replay.  Plain data (picklable); treat it as opaque."""

    ep_seed: int | None  # the episode's seed (drawn from np_random when reset had none)
    options: dict | None
    actions: tuple[int, ...]  # every action stepped since reset, in order
    asked: tuple[int, ...]  # steps before which the hooks' decide() ran (EnvPolicy)
    hooks0: Scheduler | None  # the hooks as they were at reset (never mutated)
    hooks: Scheduler | None  # a copy of the hooks' state at the snapshot
    np_random_state: dict | None  # gym.Env's generator, which draws seeds for reset(None)
    settings: tuple = ()  # the environment's construction settings (restore checks them)
    hooks_decide: bool = True  # set_hooks' decides: the hooks' scheduler made the decisions


# per-episode attributes that hold simulator objects: dropped by __getstate__ and rebuilt
# by replay (the simulator's SimPy processes are generators, which cannot be copied)
_EPISODE_ATTRS = (
    "sim",
    "view",
    "_proxy",
    "rewards",
    "_beat",
    "_vm",
    "_kind",
    "_slots",
    "_mask",
    "_render_layout",
    "_render_layout_view",
)


class EpisodeReplay:
    """MRClusterEnv's snapshot / restore / copy / pickle support (a mixin)."""

    # -- copies, pickles and snapshots (see "Copying, pickling, snapshots" above) ------------
    def snapshot(self) -> EnvSnapshot:
        """The record of the episode so far, for ``restore`` (cheap: no simulator copy)."""
        live = self._proxy.hooks if self.sim is not None else None
        rng = self._np_random
        return EnvSnapshot(
            ep_seed=self._ep_seed,
            options=copy.deepcopy(self._options),
            actions=tuple(self._actions),
            asked=tuple(self._asked),
            hooks0=self._hooks0,
            hooks=copy.deepcopy(live),
            np_random_state=None if rng is None else copy.deepcopy(rng.bit_generator.state),
            settings=self._settings,
            hooks_decide=self._ep_decides if self.sim is not None else self._hooks_decide,
        )

    def restore(self, snap: EnvSnapshot) -> None:
        """Put the environment back to ``snap`` (of this environment or of a copy of it)
        by replaying its record: costs as much as its steps.  The hooks scheduler in use
        (EnvPolicy's baseline) gets the snapshot's state in place, so a bound policy
        keeps working."""
        if not isinstance(snap, EnvSnapshot):
            raise TypeError(f"restore: expected an EnvSnapshot, got {type(snap).__name__}")
        recorded = dict(snap.settings)
        for key, mine in self._settings:
            if key not in recorded:
                raise ValueError(
                    f"restore: the snapshot does not record {key} (taken by another version "
                    "of MRCluster-v0)"
                )
            theirs = recorded[key]
            if mine != theirs:
                shown = "another scenario" if key == "scenario" else repr(theirs)
                raise ValueError(
                    f"restore: the snapshot was taken with {key}={shown}, this environment "
                    f"has {'a different one' if key == 'scenario' else repr(mine)}"
                )
        if snap.np_random_state is not None:
            self.np_random.bit_generator.state = copy.deepcopy(snap.np_random_state)
        # the hooks object a bound EnvPolicy holds: in use by the episode, or (an env never
        # reset, e.g. in a worker that receives the snapshot) the one set_hooks was given
        live = self._proxy.hooks if self.sim is not None else self._hooks
        if live is not None and snap.hooks is not None and type(live) is type(snap.hooks):
            # load the state into the object a bound EnvPolicy holds, rather than swap it
            state = copy.deepcopy(snap.hooks)
            if hasattr(live, "__dict__") and hasattr(state, "__dict__"):
                vars(live).clear()
                vars(live).update(vars(state))
            else:  # pragma: no cover - a scheduler with __slots__
                live = state
        else:
            live = copy.deepcopy(snap.hooks)
        self._hooks_decide = snap.hooks_decide
        rec = (snap.ep_seed, snap.options, snap.actions, snap.asked, snap.hooks0)
        self._replay(*rec, live, snap.hooks_decide)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in _EPISODE_ATTRS:
            state.pop(name, None)
        # the hooks object in use: copied or pickled with the rest, so that a policy copied
        # together with the environment (deepcopy((env, policy))) still shares it
        state["_live_hooks"] = self._proxy.hooks if self.sim is not None else None
        state["_actions"] = list(self._actions)
        state["_asked"] = list(self._asked)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        live = state.pop("_live_hooks", None)
        self.__dict__.update(state)
        # environments pickled before these settings existed
        self.__dict__.setdefault("hooks_gate", False)
        if not hasattr(self.codec, "waits"):  # pickled before wait actions existed
            self.codec.waits = 0
        self.__dict__.setdefault("_ep_decides", self._hooks_decide)
        rec = (self._ep_seed, self._options, self._actions, self._asked, self._hooks0)
        self._replay(*rec, live, self._ep_decides)

    def _replay(
        self,
        ep_seed: int | None,
        options: dict | None,
        actions,
        asked,
        hooks0: Scheduler | None,
        live: Scheduler | None,
        decides: bool,
    ) -> None:
        """Rebuild the episode from its record (``decides``: set_hooks' as the episode
        began): start it, then step every action."""
        self.sim, self.view, self._beat, self._vm, self._kind = None, None, None, None, None
        self._proxy = self._render_layout = self._render_layout_view = None
        self._slots = []
        self._mask = np.zeros(self.codec.n, dtype=bool)
        if ep_seed is None:  # no episode yet
            self._ep_seed, self._options, self._hooks0 = None, None, None
            self._actions, self._asked, self._asked_now = [], [], False
            return
        actions, asked = list(actions), set(asked)
        # a throwaway copy of the reset-time hooks drives the replay (the record keeps
        # hooks0 untouched for later copies); afterwards the simulator uses ``live``
        hooks = copy.deepcopy(hooks0)
        self._begin(ep_seed, options, hooks, hooks0, decides)
        for i, a in enumerate(actions):
            if hooks is not None and i in asked:  # as the step asked them (hooks_action)
                self._proxy.hooks_decide(self.decision_context())
            self.step(a)
        if live is not None:
            self._proxy.hooks = live
