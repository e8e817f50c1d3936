"""The job tracker: active jobs, their pending-task indices and every task counter, task
choice, launches and the bookkeeping of attempts that end (success, failure, kill).

All pending/running counters change here and only here.  The heartbeat dispatcher asks
it whether a VM has work; the attempt processes (``attempts.py``) report their ends to
it; dynamics (host loss, control actions) kill and re-queue through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mrgym.sim.choice import TaskChoice
from mrgym.sim.hdfs import Hdfs
from mrgym.sim.jobs import DONE, MAP, PENDING, REDUCE, RUNNING, Attempt, Job, MapOutput, Task
from mrgym.sim.part import Part
from mrgym.sim.scheduler import SPECULATE, Decision
from mrgym.sim.shuffle import record_output
from mrgym.sim.topology import VM

if TYPE_CHECKING:  # pragma: no cover
    from mrgym.sim.simulation import Simulation


class InvalidDecision(ValueError):
    """A scheduler asked for something the cluster cannot do (names the reason)."""


class JobTracker(Part):
    """Active jobs, pending indices, counters, task choice and the task lifecycle."""

    def __init__(self, sim: Simulation):
        super().__init__(sim)
        self.progress = sim.progress
        self.oob = sim.oob
        self.jobs: list[Job] = []  # every job of the episode, in submission order
        self.active: dict[int, Job] = {}
        self.active_list: list[Job] = []
        self.attempts: list[Attempt] = []
        self.n_pending_maps = 0
        self.n_ready_reduces = 0
        self.n_running = 0
        self.n_arrived = 0
        self.n_completed = 0
        self.n_failed = 0  # jobs failed (a task failed max_task_attempts times)
        self.n_reexecuted = 0
        self.n_success = 0
        self.total_maps = 0
        self.job_seconds = 0.0  # integral of the number of active jobs over time
        self._js_t = 0.0
        self.node_speed: dict[int, list] = {}
        self.choice = TaskChoice(sim.params, sim.hdfs, sim.env)

    def bind(self, beats, tasks) -> None:
        """The parts this one calls (built after it)."""
        self.beats = beats
        self.tasks = tasks

    def job_seconds_at(self, now: float) -> float:
        """Integral of the active-job count up to ``now`` (the JCT reward's clock)."""
        return self.job_seconds + len(self.active) * (now - self._js_t)

    def _tick_job_seconds(self) -> None:
        now = self.env.now
        self.job_seconds += len(self.active) * (now - self._js_t)
        self._js_t = now

    def arrive(self, job: Job) -> None:
        self._tick_job_seconds()
        self.n_arrived += 1
        job.arrived_s = self.env.now
        allowed = self.scheduler.place_job(job, self.view)
        job.allowed_pools = frozenset(allowed) if allowed is not None else None
        for t in reversed(job.maps):
            self.index_map(job, t)
        job.pending_reduces = list(reversed(job.reduces))
        job.n_pending_maps = len(job.maps)
        job.n_pending_reduces = len(job.reduces)
        self.n_pending_maps += len(job.maps)
        self.active[job.id] = job
        self.active_list.append(job)
        self.check_ready(job)
        self.beats.wake_all()

    def index_map(self, job: Job, t: Task) -> None:
        b = t.block
        if b is not None:
            hosts_seen, racks_seen = set(), set()
            for r in b.replicas:
                job.pending_by_vm.setdefault(r.id, []).append(t)
                if r.host.id not in hosts_seen:
                    hosts_seen.add(r.host.id)
                    job.pending_by_host.setdefault(r.host.id, []).append(t)
                if r.host.rack.id not in racks_seen:
                    racks_seen.add(r.host.rack.id)
                    job.pending_by_rack.setdefault(r.host.rack.id, []).append(t)
        job.pending_maps.append(t)

    def check_ready(self, job: Job) -> None:
        if not job.ready and job.reduces_ready(self.params.reduce_slowstart):
            job.ready = True
            self.n_ready_reduces += job.n_pending_reduces
            if job.n_pending_reduces:
                self.beats.wake_all()

    def apply(self, vm: VM, d: Decision, slot_kind: str) -> Attempt:
        """Carry out a launch decision on ``vm``'s free ``slot_kind`` slot."""
        job = self.active.get(d.job)
        if job is None:
            raise InvalidDecision(f"decision {d}: job {d.job} is not active")
        if job.allowed_pools is not None and not self.choice.pool_ok(job, vm):
            raise InvalidDecision(
                f"decision {d}: job {job.id} may not run on pool {vm.host.pool!r}"
            )
        if d.kind == SPECULATE:
            task = self.choice.speculation_target_at(job, slot_kind, vm, d.task)
            if task is None:
                raise InvalidDecision(
                    f"decision {d}: job {job.id} has no running {slot_kind} task to speculate on {vm.name}"
                )
            return self.launch(task, vm, speculative=True)
        if d.kind != slot_kind:
            raise InvalidDecision(
                f"decision {d}: a {d.kind} task cannot take a free {slot_kind} slot"
            )
        if d.kind == MAP:
            if d.task is not None:
                task = job.maps[d.task]
                if task.state != PENDING:
                    raise InvalidDecision(
                        f"decision {d}: map {d.task} of job {job.id} is not pending"
                    )
            else:
                best = self.choice.best_map(job, vm)
                if best is None:
                    raise InvalidDecision(f"decision {d}: job {job.id} has no pending map")
                task = best[0]
        elif d.kind == REDUCE:
            if not job.ready:
                raise InvalidDecision(f"decision {d}: job {job.id}'s reduces wait for slow-start")
            if d.task is not None:
                task = job.reduces[d.task]
                if task.state != PENDING:
                    raise InvalidDecision(
                        f"decision {d}: reduce {d.task} of job {job.id} is not pending"
                    )
            else:
                lst = job.pending_reduces
                while lst and lst[-1].state != PENDING:
                    lst.pop()
                if not lst:
                    raise InvalidDecision(f"decision {d}: job {job.id} has no pending reduce")
                task = lst[-1]
        else:
            raise InvalidDecision(
                f"decision {d}: unknown kind {d.kind!r}; expected map, reduce or speculate"
            )
        return self.launch(task, vm)

    def launch(self, task: Task, vm: VM, speculative: bool = False) -> Attempt:
        job = task.job
        now = self.env.now
        att = Attempt(task, len(task.attempts), vm, now, speculative)
        task.attempts.append(att)
        task.running.append(att)
        self.attempts.append(att)
        vm.running[att] = None
        self.n_running += 1
        if task.kind == MAP:
            vm.free_map -= 1
            job.running_maps += 1
        else:
            vm.free_reduce -= 1
            job.running_reduces += 1
        if task.state == PENDING:
            self.unqueue(task)
            task.state = RUNNING
            job.running_set[task] = None
            job.running_of[task.kind][task] = None
        if task.kind == MAP and task.block is not None:
            att.locality = Hdfs.locality(task.block, vm)
        gen = self.tasks.run_map(att) if task.kind == MAP else self.tasks.run_reduce(att)
        att.process = self.env.process(gen)
        return att

    def release(self, att: Attempt) -> None:
        task, vm = att.task, att.vm
        job = task.job
        task.running.remove(att)
        del vm.running[att]
        self.n_running -= 1
        if vm.alive:
            if task.kind == MAP:
                vm.free_map += 1
            else:
                vm.free_reduce += 1
        if task.kind == MAP:
            job.running_maps -= 1
        else:
            job.running_reduces -= 1
        if vm.alive and vm.id not in self.beats._in_heap:
            self.beats.schedule_beat(vm)

    def succeeded(self, att: Attempt, out_mb: float) -> None:
        now = self.env.now
        task, vm = att.task, att.vm
        job = task.job
        att.end_s = now
        att.outcome = "success"
        self.n_success += 1
        self.release(att)
        for other in list(task.running):
            self.kill(other, "killed", requeue=False)
        task.state = DONE
        task.finish_s = now
        job.running_set.pop(task, None)
        job.running_of[task.kind].pop(task, None)
        st = job.stats[task.kind]
        st[0] += 1
        st[1] += now - att.start_s
        st[2] += att.cpu_s
        st[3] += att.read_mb
        st[4] += out_mb
        # node speed score for LATE's SlowNodeThreshold: job's mean task time / this one's
        dur = now - att.start_s
        if dur > 0:
            ns = self.node_speed.setdefault(vm.id, [0, 0.0])
            ns[0] += 1
            ns[1] += (st[1] / st[0]) / dur
        if task.kind == MAP:
            rt = job.rate_by_type.setdefault(vm.host.type.name, [0.0, 0.0])
            rt[0] += now - att.start_s
            rt[1] += task.input_mb
            job.maps_done += 1
            task.output_vm = vm
            if job.reduces:
                out = MapOutput(task.index, vm, out_mb)
                record_output(job, out, self.topo._path_cache.generation)
                if job.output_event is not None:
                    ev, job.output_event = job.output_event, None
                    ev.succeed()
                self.check_ready(job)
            elif job.maps_done == len(job.maps):
                self.job_done(job)
        else:
            job.reduces_done += 1
            if job.reduces_done == len(job.reduces):
                self.job_done(job)
        if (
            vm.alive
            and self.oob
            and not vm.paused
            and not vm.host.evicting
            and self.beats.has_work(vm)
        ):
            self.beats.request_heartbeat(vm)

    def job_done(self, job: Job) -> None:
        self._tick_job_seconds()
        self.n_completed += 1
        job.finish_s = self.env.now
        # Tasks still queued or running were re-executions after an output loss (or
        # backup copies) that the reduces no longer need: stop them, and the earlier
        # successful attempt stands.
        for t in job.maps + job.reduces:
            if t.state == DONE:
                continue
            for a in list(t.running):
                self.kill(a, "killed", requeue=False)
            self.unqueue(t)
            for a in reversed(t.attempts):
                if a.outcome == "lost_output":
                    a.outcome = "success"
                    break
            t.state = DONE
        self.retire(job)

    def unqueue(self, t: Task) -> None:
        """Take a pending task out of the pending counters (it launches, or its job is
        over)."""
        if t.state != PENDING:
            return
        job = t.job
        if t.kind == MAP:
            job.n_pending_maps -= 1
            self.n_pending_maps -= 1
        else:
            job.n_pending_reduces -= 1
            if job.ready:
                self.n_ready_reduces -= 1

    def retire(self, job: Job) -> None:
        """A completed or failed job leaves the active set."""
        job.running_set.clear()
        for running in job.running_of.values():
            running.clear()
        del self.active[job.id]
        self.active_list.remove(job)
        if self.progress is not None:
            self.progress(1)
        if not self.active and self.all_arrived():
            self.sim.end(truncated=False)

    def fail(self, att: Attempt, outcome: str) -> None:
        """The attempt FAILED (counts toward max_task_attempts; a kill does not)."""
        att.outcome = outcome
        att.end_s = self.env.now
        self.release(att)
        task = att.task
        task.failures += 1
        if task.failures >= self.params.max_task_attempts:
            self.job_failed(task.job)
        elif not task.running and task.state == RUNNING:
            self.requeue(task)

    def job_failed(self, job: Job) -> None:
        """A task failed all its attempts: Hadoop kills the job's other tasks and fails
        it.  The job leaves the cluster; the run goes on."""
        self._tick_job_seconds()
        self.n_failed += 1
        job.failed_s = self.env.now
        for t in job.maps + job.reduces:
            for a in list(t.running):
                self.kill(a, "killed", requeue=False)
            self.unqueue(t)
        self.retire(job)

    def kill(self, att: Attempt, outcome: str, requeue: bool = True) -> None:
        """End a running attempt now; re-queue its task when no other copy runs."""
        if att.outcome != "running":
            return
        att.outcome = outcome
        att.end_s = self.env.now
        for w in att.works:
            self.engine.cancel(w)
        w = att.work
        if w is not None:
            if w.absorbed:  # the data not sent yet never reaches those page caches
                unsent = w.remaining_at(self.env.now)
                for cache in w.absorbed:
                    cache.take_back(unsent)
            self.engine.cancel(w)
        att.works = []
        att.work = None
        self.release(att)
        # The attempt's process waits on a cancelled work that never fires: it simply
        # never resumes (no Interrupt, which cannot reach a process not yet started).
        task = att.task
        if requeue and not task.running and task.state == RUNNING:
            self.requeue(task)

    def requeue(self, task: Task) -> None:
        job = task.job
        if job.over:
            return
        task.state = PENDING
        self.n_reexecuted += 1
        job.running_set.pop(task, None)
        job.running_of[task.kind].pop(task, None)
        if task.kind == MAP:
            self.index_map(job, task)
            job.n_pending_maps += 1
            self.n_pending_maps += 1
        else:
            job.pending_reduces.append(task)
            job.n_pending_reduces += 1
            if job.ready:
                self.n_ready_reduces += 1
        self.beats.wake_all()

    def reindex(self, moved: list) -> None:
        """Pending maps whose blocks gained a replica can now be local there."""
        if not moved:
            return
        blocks = {b.id for b, _ in moved}
        for job in self.active_list:
            for t in job.maps:
                if t.state == PENDING and t.block is not None and t.block.id in blocks:
                    self.index_map(job, t)

    def n_unarrived(self) -> int:
        return len(self.jobs) - self.n_arrived

    def all_arrived(self) -> bool:
        return self.n_arrived == len(self.jobs)
