"""MRCluster-v0 and MRCluster-v1: the Gymnasium environment around the mrgym simulator (v1:
an observation without the future; docs/environment.md, version history)."""

from __future__ import annotations

import copy
import math
import numbers
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mrgym.config import Scenario, load_scenario
from mrgym.envs.actions import ActionCodec
from mrgym.envs.agent_proxy import AgentProxy
from mrgym.envs.observation import feature_names, make_builder
from mrgym.envs.replay import EnvSnapshot, EpisodeReplay  # noqa: F401  (public here too)
from mrgym.envs.rewards import RewardTracker, check_weights
from mrgym.metrics import episode_metrics
from mrgym.reference import reference_jct
from mrgym.sim.heartbeats import Heartbeat
from mrgym.sim.jobs import PENDING
from mrgym.sim.scheduler import DECLINE, MAP, SPECULATE, Decision, DecisionContext, Scheduler
from mrgym.sim.simulation import Simulation
from mrgym.sim.view import ClusterView


class MRClusterEnv(EpisodeReplay, gym.Env):
    """
    ## Description
    A virtualized, heterogeneous Hadoop MapReduce cluster (racks, hosts, VMs, HDFS, map ->
    shuffle -> reduce, interference, spot and failures) simulated by mrgym.  Each step is
    one free slot of one TaskTracker heartbeat: the agent launches a task there or declines.
    Simulated time advances between steps; the workload, block placement and task noise of
    an episode depend only on the seed, so policies can be compared on equal terms.

    ## Action Space
    ``Discrete(3 * job_slots + 1 + wait_actions)``.  The K = ``job_slots`` slots hold the
    first K active jobs that can launch something on the requesting VM for the slot's kind
    (a pending map, a ready reduce, or with ``speculation`` a backup of a running task of
    that kind; jobs whose pools exclude the VM are skipped), in queue order
    (``queue_order="arrival"``,
    ``"deficit"``: furthest below weighted fair share first, or ``"remaining"``: fewest
    unfinished tasks first).  For slot i: ``3i`` launch a map of that job on this VM (the simulator
    picks the job's pending map as Hadoop does: the first node-local one, else the first
    rack-local, else any; ``execution.task_choice`` of the scenario can make it server-aware
    or look ahead), ``3i+1`` launch one of its reduces,
    ``3i+2`` launch a speculative copy of its running task of the slot's kind with the
    longest estimated time left (with a baseline's hooks deciding, ``EnvPolicy``: the task
    its own rule picks, ``Scheduler.pick_task``, e.g. Hadoop's first candidate in launch
    order, so that the baseline plays exactly; see ``launch_of``).  ``3K`` declines the
    rest of this heartbeat for the slot's kind (always legal, unless
    ``work_conserving=True``, which masks it whenever a launch is legal so that an agent
    cannot idle a slot that has work; ``work_conserving="cluster"``
    masks it only while no task runs anywhere, so an agent may hold a slot back, e.g. off a
    thrashing disk, but never idle the whole cluster).  ``3K + w`` (w = 1..``wait_actions``)
    waits: it declines, and the env declines the next w asks of this VM's slot kind without
    asking (``info["held_asks"]``), ending early at an ask where decline is masked.
    ``action_masks()`` and ``info["action_mask"]`` give legality; a masked action declines
    and sets ``info["invalid_action"]`` (``invalid_action="raise"``: ``ValueError``).  An
    action that is not an integer of the space raises ``ValueError``.
    ``speculation=False`` masks every speculate action (and a job then takes a slot only
    for a new task); under ``EnvPolicy`` the baseline's own ``speculates`` decides.

    ## Observation Space
    ``Box(0, 1, (n,), float32)``, every feature normalized: those of the requesting VM
    and its host, those of the cluster, then one block per job slot (zeros when empty);
    n = 191 with the default 8 job slots (``observation.observation_size(job_slots)``).
    Each feature is defined once, with its name, meaning and value, in
    ``mrgym.envs.observation.GROUPS`` (listed in that module's docstring;
    ``env.unwrapped.feature_names`` names every entry).  The locality features are the
    level of the map a launch of that job would take here (``execution.task_choice``),
    not the best level among its pending maps.  ``critic_inputs=True`` appends the
    critic-only features (the workload still to arrive: an input-dependent baseline's
    inputs); a policy must not act on them (``agents.critic_inputs.CriticInputsPolicy``
    hides them from its actor, ``agents.extractors.JobSetPolicy`` gives them to its value
    alone).

    ## Rewards
    Weighted sum (``reward_weights``, default ``{"jct": 1}``) of the terms in
    ``info["reward_terms"]``: ``jct`` (-active jobs x dt / 100: the return is -sum JCT/100),
    ``throughput``, ``locality``, ``fairness``, ``makespan``, ``slowdown``, ``cost`` and
    ``sla``, each defined once in
    ``mrgym.envs.rewards.TERMS`` (listed in that module's docstring).  ``info["dt"]``: the
    simulated seconds the step covered, over which the terms accrued (a semi-MDP's sojourn
    time).

    ## Starting State
    ``reset(seed=s)`` builds the scenario's cluster, draws the workload and every task's luck
    from ``s`` and runs to the first heartbeat with a free slot and work.  A scenario that
    ends before any decision (every job arrives after the time cap, or no VM can take a
    task) raises ``ValueError``.

    ## Episode End
    Terminated when every job of the workload has completed; truncated at the sim-time cap
    (``max_sim_time_s`` or the scenario's ``run.max_sim_time_s``).  The last ``info`` adds
    ``episode_metrics`` (the same dict as ``mrgym.run_sim(...).metrics``).

    ## Arguments
    ``gym.make("MRCluster-v1", config="ila72", overrides=None, job_slots=8,
    queue_order="remaining", reward_weights=None, invalid_action="decline",
    max_sim_time_s=None, speculation=False, work_conserving=True, critic_inputs=False,
    hooks_gate=False, render_mode=None, observation_version=1, wait_actions=0)``;
    ``config`` is a bundled scenario name, a YAML path, a dict or a Scenario.  The defaults
    are the settings that train well (docs/environment.md, "Masks"): with
    ``work_conserving=True`` decline is masked whenever a launch is legal, so a masked
    policy (MaskablePPO, ``mrgym.EnvPolicy``'s fallback) can never idle a slot that has
    work, and an unmasked model's (PPO, A2C, DQN) masked choice takes the first legal
    launch instead of idling (before, a deterministic model that always chose a masked
    decline stepped until the time cap: 864 000 steps on ila72).  ``speculation=False``
    makes VMs heartbeat only while work is pending (a random legal policy needs ~2 700
    steps per ila72 episode against ~44 000 with speculation on: 16x more episodes per
    training step), and ``"remaining"`` puts the jobs that finish soonest (lowest JCT
    cost) in the first slots.  Under ``EnvPolicy`` (``set_hooks``) a baseline decides
    for itself: ``speculation`` follows the baseline and decline stays legal (delay
    scheduling's waits are declines); to replay it exactly also pass its queue order
    (``"arrival"`` for FIFO, ``"deficit"`` for Fair).  Around an agent (``set_hooks(s,
    decides=False)``), ``hooks_gate=True`` answers the slots ``s.gate`` claims without the
    agent (HybridMR: a relaunch Algorithm 3 reserved, no task under SLA pressure, on a
    paused VM or a thrashing disk); no reward term counts those launches.  A model must
    run under the settings it was trained with: ``mrgym.ModelPolicy.load(run)`` carries
    them and refuses another env.

    ## Copying, pickling, snapshots
    ``copy.deepcopy(env)`` (also of the ``gym.make`` wrappers around it) and ``pickle``
    work at any point of an episode, for planners (MCTS, what-if search) and vector-env
    libraries.  The simulator itself (SimPy processes are generators) is not copied: the
    environment records its episode (seed, options, the actions stepped so far and the
    hooks of ``set_hooks`` as they were at reset) and a copy rebuilds the simulator by
    replaying that record, which is exact because the simulator is deterministic.  A copy
    therefore costs as much as the steps taken so far took (one ``reset`` plus, on
    ``ila72``, 0.05-0.2 ms per step: about 0.5 s after 2 700 steps): cheap early in an
    episode, linear in its length.  ``env.unwrapped.snapshot()`` returns that record (cheap: a tuple
    of ints and a copy of the hooks' state); ``env.unwrapped.restore(snap)`` replays it in
    place, e.g. to try several continuations from one point.  The record includes
    ``np_random``, so a later ``reset()`` without a seed also draws the same episode.
    With ``EnvPolicy`` the baseline's ``decide`` is replayed too (before the steps where
    ``decision_context()`` was asked), and ``restore`` loads the snapshot's state into the
    bound baseline (also in an environment never reset, e.g. a worker that receives the
    snapshot), so the policy's choices repeat as well.  Restoring a never-reset
    ``gym.make`` environment: step ``env.unwrapped`` (the order-enforcing wrapper has not
    seen a reset).  Exactness assumes the caller changes the simulation only through
    ``step`` (reading it through this class's methods is fine).

    ## Version History
    * v1 (``observation_version=1``, this class's default): the observation holds only
      what the master knows at that moment: no episode totals, no time cap, a measured GPU
      gain (docs/environment.md, "Version history").
    * v0 (``observation_version=0``): the first observation, which divides by the
      episode's totals (jobs not yet submitted included), reads the time cap and the
      profile's hidden GPU speed-up.  Before any release the job slots changed from "the
      first K active jobs" to "the first K jobs that can launch on this VM" (a baseline's
      choice was often not expressible); models trained before that change need
      retraining.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        config: str | dict | Scenario = "ila72",
        overrides: dict | None = None,
        job_slots: int = 8,
        queue_order: str = "remaining",
        reward_weights: dict[str, float] | None = None,
        invalid_action: str = "decline",
        max_sim_time_s: float | None = None,
        speculation: bool = False,
        work_conserving: bool | str = True,
        critic_inputs: bool = False,
        hooks_gate: bool = False,
        render_mode: str | None = None,
        observation_version: int = 1,
        wait_actions: int = 0,
    ):
        if invalid_action not in ("decline", "raise"):
            raise ValueError(
                f"invalid_action: must be 'decline' or 'raise', got {invalid_action!r}"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode: must be one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        if overrides is not None and not isinstance(overrides, dict):
            raise ValueError(
                f"overrides: must be a dict of scenario keys, got {type(overrides).__name__}"
            )
        over = dict(overrides or {})
        if max_sim_time_s is not None:
            over["run.max_sim_time_s"] = max_sim_time_s
        self.scenario = load_scenario(config, over or None)
        if not isinstance(speculation, (bool, np.bool_)):  # "no" would be truthy: speculation on
            raise ValueError(f"speculation: must be true or false, got {speculation!r}")
        speculation = bool(speculation)
        self.codec = ActionCodec(job_slots, queue_order, speculation, work_conserving, wait_actions)
        if not isinstance(critic_inputs, (bool, np.bool_)):
            raise ValueError(f"critic_inputs: must be true or false, got {critic_inputs!r}")
        self.critic_inputs = bool(critic_inputs)
        if not isinstance(hooks_gate, (bool, np.bool_)):
            raise ValueError(f"hooks_gate: must be true or false, got {hooks_gate!r}")
        self.hooks_gate = bool(hooks_gate)
        if isinstance(observation_version, bool) or observation_version not in (0, 1):
            raise ValueError(
                f"observation_version: must be 0 (MRCluster-v0) or 1 (MRCluster-v1), "
                f"got {observation_version!r}"
            )
        self.observation_version = int(observation_version)
        self.obs_builder = make_builder(job_slots, self.critic_inputs, self.observation_version)
        self.weights = check_weights(reward_weights)
        self.invalid_action = invalid_action
        self.speculation = speculation
        self.work_conserving = work_conserving
        self.render_mode = render_mode
        self.max_time = self.scenario.run.max_sim_time_s
        # what a snapshot must agree on to be replayed here (restore checks it)
        self._settings = (
            ("scenario", self.scenario.model_dump_json()),
            ("job_slots", self.codec.k),
            ("queue_order", queue_order),
            ("speculation", speculation),
            ("work_conserving", work_conserving),
            ("critic_inputs", self.critic_inputs),
            ("hooks_gate", self.hooks_gate),
            ("observation_version", self.observation_version),
            ("wait_actions", self.codec.waits),
            ("invalid_action", invalid_action),
            ("reward_weights", tuple(sorted(self.weights.items()))),
        )
        self.action_space = spaces.Discrete(self.codec.n)
        self.observation_space = spaces.Box(0.0, 1.0, (self.obs_builder.size,), dtype=np.float32)
        self.feature_names = feature_names(job_slots, self.critic_inputs, self.observation_version)
        self._hooks: Scheduler | None = None
        self._hooks_decide = True  # set_hooks: the hooks' scheduler also makes the decisions
        self._no_episode()

    def _no_episode(self) -> None:
        """The state before the first reset: no simulation, no decision, an empty record."""
        self._ep_decides = True  # set_hooks' ``decides`` when this episode began (its record)
        self.sim: Simulation | None = None
        self._vm = None
        self._kind: str | None = None
        self.view: ClusterView | None = None
        self._render_layout = self._render_layout_view = None  # render.py's cache
        self._proxy: AgentProxy | None = None
        self._beat: Heartbeat | None = None  # the heartbeat whose slots are being served
        self._slots: list = []
        self._mask = np.zeros(self.codec.n, dtype=bool)
        self._holds: dict[tuple[int, str], int] = {}  # (VM id, slot kind) -> asks held
        self._n_held = 0  # asks a wait declined since the last step (info["held_asks"])
        # the episode record that copies, pickles and snapshots replay (see the docstring)
        self._ep_seed: int | None = None
        self._options: dict | None = None
        self._actions: list[int] = []
        self._asked: list[int] = []
        self._asked_now = False
        self._hooks0: Scheduler | None = None

    # -- policy support ------------------------------------------------------------------
    def set_hooks(self, scheduler: Scheduler | None, decides: bool = True) -> None:
        """Let a baseline's place_job/control/reset run inside the environment: for the
        baseline's own decisions (EnvPolicy: the slot's speculation and declines are then
        its choice), or with ``decides=False`` around an agent, whose ``speculation`` and
        ``work_conserving`` settings stay (agents/env_hooks.py; with ``hooks_gate`` the
        slots the scheduler's ``gate`` claims are answered without it).  From the next reset."""
        self._hooks, self._hooks_decide = scheduler, decides

    def decision_context(self) -> DecisionContext:
        """The simulator's context for the current slot (what a Scheduler would see)."""
        if self._vm is None:
            raise RuntimeError("no decision pending: call reset() first or the episode is over")
        # EnvPolicy asks for the context and then runs its baseline's decide(): replay
        # repeats that call so that the baseline's state (and its queries) match
        self._asked_now = True
        return self.sim.context(self._vm, self._kind)

    def encode(self, decision: Decision) -> int:
        """The action that expresses a Scheduler's decision for the current slot (strict:
        ``ValueError`` when its job is not among the slots)."""
        return self.codec.encode(decision, self._slots)

    def decode(self, action: int) -> Decision:
        """The Scheduler decision that ``action`` expresses for the current slot (the
        inverse of :meth:`encode`; a wait decodes as a decline)."""
        return self.codec.decode(int(action), self._slots)

    def launch_of(self, action: int) -> Decision:
        """The decision ``step(action)`` carries out for the current slot: ``decode``'s,
        with the task that the hooks' ``Scheduler.pick_task`` names when a baseline's hooks
        decide (EnvPolicy: Hadoop's and LATE's backups); otherwise the simulator picks the
        task (``execution.task_choice`` for a map, the longest-time-left backup)."""
        d = self.codec.decode(int(action), self._slots)
        if d.kind is None or not self._ep_decides or self._proxy.hooks is None:
            return d
        pick = getattr(self._proxy.hooks, "pick_task", None)  # a hooks object may lack it
        if pick is None:
            return d
        task = pick(self.sim.context(self._vm, self._kind), self.view.job(d.job), d.kind)
        return d if task is None else Decision(d.kind, d.job, task)

    def launched_task(self, action: int) -> int | None:
        """The index of the task ``step(action)`` launches now (None: it declines)."""
        d = self.launch_of(action)
        if d.kind is None or d.task is not None:
            return d.task
        view, job, vm = self.view, self.view.job(d.job), self._vm
        if d.kind == SPECULATE:
            t = view.speculation_target(job, self._kind, vm)
        elif d.kind == MAP:
            best = view.best_map(job, vm)
            t = None if best is None else best[0]
        else:  # the tracker's pick: the last pending reduce of its list
            t = next((t for t in reversed(job.pending_reduces) if t.state == PENDING), None)
        return None if t is None else t.index

    def closest_action(self, decision: Decision) -> tuple[int, bool]:
        """The legal action nearest to a Scheduler's decision and whether it is the
        decision's own action (EnvPolicy: never raises; see ActionCodec.closest)."""
        return self.codec.closest(decision, self._slots, self._mask)

    def hooks_action(self) -> tuple[int, bool]:
        """The legal action nearest to the decision the episode's hooks' scheduler
        (``set_hooks``) makes for the current slot, and whether it is that decision's own
        action (as ``closest_action``): for a policy that defers to that scheduler
        (agents/model_policy.py, ``eval.defer_below``) and the warm start's expert.  Where
        the environment has already asked the scheduler's ``gate`` for this slot
        (``hooks_gate``), its ``decide_past_gate``: a second gate call would move the
        gate's state (ILA's IASM thresholds) twice for one slot."""
        hooks = self._proxy.hooks if self.sim is not None else None
        if hooks is None:
            raise RuntimeError(
                "hooks_action: this episode has no hooks' scheduler (set_hooks, then reset)"
            )
        return self.closest_action(self._proxy.hooks_decide(self.decision_context()))

    def action_masks(self) -> np.ndarray:
        return self._mask.copy()

    # -- Gymnasium API -------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        _check_options(options)  # before any state changes: a refused reset changes nothing
        super().reset(seed=seed)
        ep_seed = int(self.np_random.integers(2**31 - 1)) if seed is None else int(seed)
        # the hooks' state before their reset(seed) is part of the episode record: a
        # baseline may keep state across episodes
        hooks0 = copy.deepcopy(self._hooks)
        return self._begin(
            ep_seed, options, self._hooks, hooks0, self._hooks_decide, keep=seed is not None
        )

    @property
    def episode_seed(self) -> int | None:
        """The seed of the episode under way (the one ``reset`` was given, or drew from
        ``np_random`` when given none); None before the first reset."""
        return self._ep_seed

    def _begin(self, ep_seed: int, options, hooks, hooks0, hooks_decide: bool, keep: bool = True):
        """Start the episode of ``ep_seed`` (reset without touching ``np_random``).
        ``keep``: the seed was given, so its reference JCTs are worth keeping on disk (a
        training episode's drawn seed is not met again)."""
        self._ep_seed, self._options, self._hooks0 = ep_seed, copy.deepcopy(options), hooks0
        self._actions, self._asked, self._asked_now = [], [], False
        # set_hooks between resets changes the next episode, not the record of this one
        self._ep_decides = hooks_decide
        decides = hooks is not None and hooks_decide
        proxy = self._proxy = AgentProxy(hooks, self.speculation, decides, self.hooks_gate)
        # speculate actions exist when the simulator heartbeats for them: with a baseline's
        # hooks (EnvPolicy) that is the baseline's choice, so that jobs it could only back
        # up do not take job slots from jobs it would launch
        self.codec.speculation = proxy.speculates
        # and a baseline may decline a slot that has work (delay scheduling's locality waits):
        # work conservation binds the agent, not a baseline replayed through EnvPolicy
        self.codec.work_conserving = self.work_conserving if not decides else False
        self.sim = Simulation(self.scenario, proxy, ep_seed)
        self.view = self.sim.view
        self._render_layout = self._render_layout_view = None
        _check_job_weights([j.spec for j in self.view.all_jobs])
        self._beat = None
        self._holds, self._n_held = {}, 0
        reference = None
        if self.weights["slowdown"]:  # one simulation per job, once per (scenario, seed)
            reference = reference_jct(self.scenario, ep_seed, keep=keep)
        self.rewards = RewardTracker(self.weights, reference)
        self._vm = None
        self._advance()
        if self._vm is None:
            # a dead episode (no decision at all) would hand the agent a terminal state as
            # its first observation, which no Gymnasium loop expects
            raise ValueError(_dead_episode_reason(self.view, ep_seed))
        self.rewards.reset(self.view)
        terms = dict.fromkeys(self.weights, 0.0)
        return self._obs(), self._info(False, terms)

    def step(self, action):
        # an action outside the space is a caller bug, not a masked choice (docs/model.md §3); a
        # ValueError rather than an assert so that it survives ``python -O``
        if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
            action = action.item()
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"action {action!r} is not an integer of {self.action_space}")
        action = int(action)
        if not 0 <= action < self.codec.n:
            raise ValueError(f"action {action} is outside {self.action_space}")
        if self.sim is None:
            raise RuntimeError("call reset() before step()")
        if self._vm is None:
            raise RuntimeError("the episode is over: call reset()")
        invalid = not self._mask[action]
        launched = None
        if invalid and self.invalid_action == "raise":
            raise ValueError(
                f"action {action} ({self.codec.describe(action)}) is not legal for this "
                f"{self._kind} slot of {self._vm.name}: masked out"
            )
        # the action is accepted: record it (replay for copies and snapshots)
        if self._asked_now:
            self._asked_now = False
            if self._proxy.hooks is not None:
                self._asked.append(len(self._actions))
        self._actions.append(action)
        if invalid:
            # a masked choice declines; when declining is masked too (work-conserving and a
            # launch is legal) it takes the first legal launch rather than idle the slot (a
            # deterministic model that always chose a masked action would otherwise step
            # until the time cap)
            decline = self.codec.decline
            action = decline if self._mask[decline] else int(np.flatnonzero(self._mask)[0])
        t0 = self.sim.env.now
        held = self.codec.held_asks(action)
        if held:  # a wait: the next ``held`` asks of this VM's slot kind decline unasked
            self._holds[(self._vm.id, self._kind)] = held
        launched = self._beat.answer(self.launch_of(action))
        self._n_held = 0
        self._advance()
        view = self.view
        reward, terms = self.rewards.step(view, launched)
        terminated = bool(view.finished and not view.truncated)
        truncated = bool(view.truncated)
        info = self._info(invalid, terms)
        info["dt"] = float(view.now - t0)  # simulated seconds to the next decision
        if terminated or truncated:
            info["episode_metrics"] = episode_metrics(self.sim)
        return self._obs(), reward, terminated, truncated, info

    def render(self):
        # imported here so that ``python -m mrgym.envs.render`` (which imports this module)
        # does not find itself already imported
        from mrgym.envs.render import render_ansi, render_rgb

        if self.render_mode == "ansi":
            return render_ansi(self)
        if self.render_mode == "rgb_array":
            return render_rgb(self)
        return None

    # -- internals -----------------------------------------------------------------------
    def _advance(self) -> None:
        """Move to the next free slot that needs a decision (running the simulator)."""
        beat = self._beat
        kind = beat.next_slot() if beat is not None else None
        while True:
            while kind is None:
                vm = self.sim.advance()
                if vm is None:
                    self._beat, self._vm, self._kind = None, None, None
                    self._slots, self._mask = self.codec.select(self.view, None, "map", [])
                    return
                beat = self._beat = self.sim.open_heartbeat(vm)
                kind = beat.next_slot()
            # a slot the hooks' gate claims is answered here: the agent never sees it; so is
            # one that an earlier wait holds
            forced = self._proxy.forced(self.sim, beat.vm, kind)
            if forced is None and self._holds:
                forced = self._held(beat.vm, kind)
            if forced is None:
                break
            beat.answer(forced)
            kind = beat.next_slot()
        self._vm, self._kind = beat.vm, kind
        self._slots, self._mask = self.codec.select(self.view, beat.vm, kind, self.view.jobs)

    def _held(self, vm, kind: str) -> Decision | None:
        """Decline for a wait that holds ``vm``'s ``kind`` slots, while declining is legal
        there (a hold ends early where the mask would refuse a decline: the cluster would
        idle under ``work_conserving``); None: ask the agent."""
        key = (vm.id, kind)
        left = self._holds.get(key, 0)
        if not left:
            return None
        del self._holds[key]
        _, mask = self.codec.select(self.view, vm, kind, self.view.jobs)
        if not mask[self.codec.decline]:
            return None
        if left > 1:
            self._holds[key] = left - 1
        self._n_held += 1
        return DECLINE

    def _obs(self) -> np.ndarray:
        return self.obs_builder.build(
            self.view, self._vm, self._kind, self._slots, self.max_time, self._mask
        )

    def _info(self, invalid: bool, terms: dict[str, float]) -> dict[str, Any]:
        view = self.view
        return {
            "sim_time": float(view.now),
            "decision_vm": -1 if self._vm is None else int(self._vm.id),
            "slot_kind": self._kind or "",
            "pending_tasks": int(view.n_pending_maps + view.n_ready_reduces),
            "running_tasks": int(view.n_running),
            "jobs_completed": int(view.n_completed),
            "invalid_action": bool(invalid),
            "held_asks": self._n_held,
            "reward_terms": terms,
            "action_mask": self._mask.astype(np.int8),
        }


def _check_options(options) -> None:
    """reset's ``options``: None or a dict the episode record can deep-copy."""
    if options is not None and not isinstance(options, dict):
        raise ValueError(f"options: must be a dict or None, got {type(options).__name__}")
    try:
        copy.deepcopy(options)
    except Exception as e:  # a lock, a socket, a generator: what deepcopy refuses
        why = f"{type(e).__name__}: {str(e)[:80]}".replace("\n", " ")
        raise ValueError(f"options: every value must be deep-copyable, got {why}") from None


def _check_job_weights(specs) -> None:
    """Job weights divide fair shares (queue order "deficit", observation, fairness reward):
    the scenario schema checks them, but a workload built elsewhere (traces) may not."""
    for spec in specs:
        w = spec.weight
        if (
            isinstance(w, bool)
            or not isinstance(w, numbers.Real)
            or not (math.isfinite(w) and w > 0)
        ):
            raise ValueError(f"job {spec.name!r}: weight must be a finite number > 0, got {w!r}")


def _dead_episode_reason(view, seed: int) -> str:
    """One line saying why an episode ended before its first decision."""
    sc = view.scenario
    cap = sc.run.max_sim_time_s
    head = f"scenario {sc.name!r} (seed {seed}) ends before the first decision: "
    if not view.all_jobs:
        return head + "the workload has no jobs"
    if view.n_completed == len(view.all_jobs):
        return head + "every job completed without needing a slot (no tasks)"
    if view.n_arrived == 0:
        first = min(j.spec.submit_s for j in view.all_jobs)
        return head + f"no job arrives before run.max_sim_time_s={cap:g} (the first at {first:g} s)"
    return (
        head + f"{view.n_arrived} job(s) arrived but no VM could take any of their tasks "
        f"before run.max_sim_time_s={cap:g} (check the VMs' map/reduce slots and pools)"
    )
