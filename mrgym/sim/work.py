"""A :class:`Work`: an amount of MB (a flow) or reference core-seconds (a compute phase)
that the fluid model (execution.py) runs at the rate it sets."""

from __future__ import annotations

import math

import simpy

from mrgym.sim.topology import Clock, Host, Link

INF = math.inf


class Work:
    """An amount of work (MB or core-seconds) progressing at a rate set by the model."""

    __slots__ = (
        "kind",
        "total",
        "remaining",
        "rate",
        "t_last",
        "version",
        "event",
        "links",
        "cores",
        "due",
        "host",
        "vm",
        "factor",
        "active",
        "dom0_hosts",
        "tag",
        "write",
        "absorbed",
        "clk",
        "clks",
        "vfin",
        "vseq",
    )

    def __init__(self, kind: str, total: float, event: simpy.Event, factor: float):
        self.kind = kind
        self.total = total
        self.remaining = total
        self.rate = 0.0
        self.t_last = 0.0
        self.version = 0
        self.event = event
        self.links: tuple[Link, ...] = ()

        self.cores = 0.0  # a compute phase's granted cores (what Xentop would show)
        self.due = INF  # time of its live completion-heap entry
        self.host: Host | None = None
        self.vm = None
        self.factor = factor
        self.active = False
        self.dom0_hosts: tuple[Host, ...] = ()
        self.tag = None
        self.write = False  # tag in WRITE_TAGS (kept with the tag by FluidEngine.flow)
        self.absorbed: tuple = ()  # page caches that took this write (writeback.py)
        # a running flow: the clock of its bottleneck link, and the clock's reading at
        # which it finishes (its remaining MB are (vfin - clock) * factor)
        self.clk: Clock | None = None
        self.clks: tuple[Clock, ...] = ()  # its class's clock on each of its links
        self.vfin = 0.0
        self.vseq = 0  # the sequence number of its live entry in the clock's heap

    def remaining_at(self, now: float) -> float:
        if not self.active:
            return self.remaining
        c = self.clk
        if c is not None:
            return max(0.0, (self.vfin - c.v - c.rate * (now - c.t)) * self.factor)
        return max(0.0, self.remaining - self.rate * (now - self.t_last))

    def rate_now(self) -> float:
        """MB/s (a flow) or reference core-seconds/s (a compute phase) right now."""
        c = self.clk
        if c is not None:
            return c.rate * self.factor
        return self.rate
