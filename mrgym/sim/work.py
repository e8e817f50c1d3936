"""A :class:`Work`: an amount of MB (a flow) or reference core-seconds (a compute phase)
that the fluid model (execution.py) runs at the rate it sets."""

from __future__ import annotations

import simpy

from mrgym.sim.topology import Clock, Host, Link


class Work:
    """An amount of work (MB or core-seconds) progressing at a rate set by the model."""

    __slots__ = (
        "kind",
        "total",
        "remaining",
        "event",
        "links",
        "host",
        "vm",
        "factor",
        "cf",
        "active",
        "dom0_hosts",
        "tag",
        "write",
        "absorbed",
        "clk",
        "clks",
        "vfin",
        "vseq",
        "mp",
        "ms",
    )

    def __init__(self, kind: str, total: float, event: simpy.Event, factor: float):
        self.kind = kind
        self.total = total
        self.remaining = total  # MB or core-seconds left when it last stopped
        self.event = event
        self.links: tuple[Link, ...] = ()
        self.host: Host | None = None
        self.vm = None
        self.factor = factor
        # the factor on its clock's rate: a flow's own; a compute phase's times its share of
        # a core (the pool's clock runs per whole core)
        self.cf = factor
        self.active = False
        self.dom0_hosts: tuple[Host, ...] = ()
        self.tag = None
        self.write = False  # tag in WRITE_TAGS (kept with the tag by FluidEngine.flow)
        self.absorbed: tuple = ()  # page caches that took this write (writeback.py)
        # a running work: the clock it follows (a flow: its bottleneck link's; a compute
        # phase: its host's CpuPool's), and the clock's reading at which it
        # finishes (what is left is (vfin - clock) * cf)
        self.clk: Clock | None = None
        self.clks: tuple[Clock, ...] = ()  # its class's clock on each of its links
        self.vfin = 0.0
        self.vseq = 0  # the sequence number of its live entry in the clock's heap
        # mp, ms: a compute phase's memory pressure and sensitivity (cpu.py), set only
        # while memory contention is on

    def remaining_at(self, now: float) -> float:
        if not self.active:
            return self.remaining
        c = self.clk
        if c is not None:
            return max(0.0, (self.vfin - c.v - c.rate * (now - c.t)) * self.cf)
        return self.remaining

    def rate_now(self) -> float:
        """MB/s (a flow) or reference core-seconds/s (a compute phase) right now."""
        c = self.clk
        if c is not None:
            return c.rate * self.cf
        return 0.0

    @property
    def cores(self) -> float:
        """A running compute phase's granted cores (what Xentop would show); 0 otherwise."""
        if self.kind != "compute" or self.clk is None:
            return 0.0
        return self.host.cpu.cores_of(self.vm)
