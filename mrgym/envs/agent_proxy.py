"""The simulator's scheduler inside ``MRCluster-v0``: the agent decides through ``step``;
a baseline's ``place_job``/``control``/``reset`` (and, around an agent, its ``gate``) may
run beside it (``MRClusterEnv.set_hooks``)."""

from __future__ import annotations

from mrgym.sim.scheduler import Scheduler


class AgentProxy(Scheduler):
    """The simulator's scheduler inside the environment: decisions come from ``step``;
    ``place_job``/``control``/``reset`` may be delegated to a baseline (EnvPolicy)."""

    name = "agent"

    def __init__(
        self, hooks: Scheduler | None, speculation: bool, decides: bool = True, gate: bool = False
    ):
        self.hooks = hooks
        # a hooks object that is not a Scheduler may lack gate(): it then gates nothing
        self.gates = gate and not decides and getattr(hooks, "gate", None) is not None
        self.speculates = hooks.speculates if hooks is not None and decides else speculation
        self.control_period_s = hooks.control_period_s if hooks is not None else None

    def reset(self, seed):
        if self.hooks is not None:
            self.hooks.reset(seed)

    def place_job(self, job, view):
        return self.hooks.place_job(job, view) if self.hooks is not None else None

    def control(self, view):
        return self.hooks.control(view) if self.hooks is not None else []

    def forced(self, sim, vm, kind: str):
        """The hooks' ``gate`` decision for this slot around an agent (None: the agent's)."""
        return self.hooks.gate(sim.context(vm, kind)) if self.gates else None

    def hooks_decide(self, ctx):
        """The hooks' decision for ``ctx``'s slot, for a policy that defers to them
        (``MRClusterEnv.hooks_action``) and for its replay: past the gate where ``forced``
        already asked it for this slot, so that the gate's state (ILA's IASM thresholds)
        moves once per slot (``Scheduler.decide_past_gate``)."""
        if self.gates:
            return getattr(self.hooks, "decide_past_gate", self.hooks.decide)(ctx)
        return self.hooks.decide(ctx)

    def decide(self, ctx):  # pragma: no cover - never called: step() decides
        raise RuntimeError("in MRCluster-v0 the agent decides through step()")
