"""Random control actions (HybridMR phase II's pause, resume, kill, migrate) at any time,
with host failures: the simulator never breaks and every job still ends."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import lee_cloud_small

import mrgym
from baselines.classic import FairScheduler
from mrgym.runner import build_simulation
from mrgym.sim.scheduler import Kill, Migrate, Pause, Resume


class Chaos(FairScheduler):
    """Fair scheduling plus two random control actions every 7 s: pauses and resumes of
    random VMs, kills of running tasks, migrations of paused or migrating VMs included."""

    name = "chaos"
    control_period_s = 7.0

    def __init__(self, seed: int):
        super().__init__()
        self.rng = np.random.default_rng(seed)
        self.actions = 0

    def control(self, view):
        acts = []
        vms = [v for v in view.topology.workers if v.alive]
        hosts = [h for h in view.topology.hosts if h.alive]
        for _ in range(2):
            if not vms:
                break
            vm = vms[int(self.rng.integers(len(vms)))]
            x = self.rng.random()
            if x < 0.3:
                acts.append(Pause(vm.id))
            elif x < 0.6:
                acts.append(Resume(vm.id))
            elif x < 0.75:
                for j in view.jobs:
                    running = view.running_attempts(j)
                    if running:
                        t = running[0].task
                        acts.append(Kill(j.id, t.kind, t.index))
                        break
            elif len(hosts) > 1:
                h = hosts[int(self.rng.integers(len(hosts)))]
                acts.append(Migrate(vm.id, h.id, float(self.rng.uniform(0.5, 10.0))))
        self.actions += len(acts)
        return acts


@pytest.mark.parametrize("scenario,over", [("ila72", {}), ("lee-cloud", lee_cloud_small())])
def test_random_control_actions_with_failures_never_break_the_run(scenario, over):
    over = {**over, "dynamics.failures": {"mtbf_hours": 0.5, "repair_s": 120}}
    sched = Chaos(1)
    sim = build_simulation(mrgym.load_scenario(scenario, over), sched, 0)
    # at the end nobody is paused for ever: resume everything once the chaos stops
    sim.run()
    m = mrgym.metrics.episode_metrics(sim)
    assert sched.actions > 50
    assert m["jobs_completed"] + m["jobs_failed"] == m["jobs_submitted"] or m["truncated"]
    for h in sim.topo.hosts:  # every compute phase sits on its VM's current host
        for w in h.cpu.works:
            assert w.vm.host is h
