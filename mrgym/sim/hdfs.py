"""HDFS: files split into blocks, replica placement, and the locality of a map on a VM.

Placement policies:

* ``hadoop-default`` (Hadoop 1 ``BlockPlacementPolicyDefault``): first replica on the
  writer when it is a DataNode, else on a random DataNode; second on a random node of a
  different rack; third on another node of the second's rack; further replicas random.
* ``random``: ``replication`` distinct DataNodes uniformly at random (lsap §III.B model).

Without rack awareness (``cluster.rack_aware: false``, Hadoop's default when no topology
script is configured) every node is in /default-rack: ``hadoop-default`` then places the
second and third replicas on random other nodes, whatever their racks, and a reader with
no replica on its own server takes the first replica in the block's list (Hadoop 0.20's
``NetworkTopology.pseudoSortByDistance``: every remote node is "rack-local", so the list
keeps its order), not the nearest on the real racks.

Only VMs with ``datanode=True`` hold data, so pools of data-less workers (Lee ch. 4's
accelerator and spot pools) and the split architecture (HybridMR §II: DataNodes on their
own VMs beside the TaskTracker VMs of a host) fall out of the topology.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mrgym.sim.topology import VM, Topology

LEVELS = ("node", "server", "rack", "off_rack")
NODE, SERVER, RACK, OFF_RACK = 0, 1, 2, 3


@dataclass(eq=False)
class Block:
    id: int
    file_id: int
    size_mb: float
    replicas: list[VM] = field(default_factory=list)  # live replicas; empty: missing
    offline: list[VM] = field(default_factory=list)  # failed holders of a missing block


@dataclass(eq=False)
class HdfsFile:
    id: int
    name: str
    blocks: list[Block]


class Hdfs:
    def __init__(
        self,
        topo: Topology,
        block_mb: float,
        replication: int,
        placement: str,
        rack_aware: bool = True,
    ):
        self.topo = topo
        self.block_mb = block_mb
        self.replication = replication
        self.placement = placement
        # False: Hadoop without a topology script, every node in /default-rack (placement
        # and task choice see one rack; ``locality`` still measures the real one)
        self.rack_aware = rack_aware
        self.files: list[HdfsFile] = []
        self.blocks: list[Block] = []
        self._alive_cache: list[VM] | None = None
        self._racks_of_nodes: dict[int, list[VM]] = {}
        for v in topo.datanodes:
            self._racks_of_nodes.setdefault(v.host.rack.id, []).append(v)

    # -- writing -------------------------------------------------------------------------
    def create_file(
        self,
        name: str,
        size_mb: float,
        rng: np.random.Generator,
        writer: VM | None = None,
        replication: int | None = None,
        n_blocks: int | None = None,
    ) -> HdfsFile:
        """Split ``size_mb`` into blocks and place their replicas.  ``n_blocks`` fixes the
        count (a per-file block size, as HDFS allows), so a job keeps its trace's map count."""
        fid = len(self.files)
        n = n_blocks or max(1, int(np.ceil(size_mb / self.block_mb - 1e-9)))
        block = size_mb / n if n_blocks else self.block_mb
        blocks = []
        left = size_mb
        for _ in range(n):
            size = min(block, left) if left > 0 else 0.0
            left -= size
            b = Block(len(self.blocks), fid, size, self.place(rng, writer, replication))
            self.blocks.append(b)
            blocks.append(b)
        f = HdfsFile(fid, name, blocks)
        self.files.append(f)
        return f

    def _alive(self) -> list[VM]:
        if self._alive_cache is None:
            self._alive_cache = [v for v in self.topo.datanodes if v.alive]
        return self._alive_cache

    def invalidate(self) -> None:
        """Forget cached DataNode lists (after a failure or eviction)."""
        self._alive_cache = None

    def place(
        self,
        rng: np.random.Generator,
        writer: VM | None = None,
        replication: int | None = None,
        exclude: tuple[VM, ...] = (),
    ) -> list[VM]:
        """Choose replica locations for one block (rejection sampling keeps it O(r))."""
        nodes = self._alive()
        n = len(nodes)
        avail = n - sum(1 for v in exclude if v.alive and v.datanode)
        r = min(replication or self.replication, avail)
        if r <= 0:
            return []
        if self.placement == "random":
            chosen: list[VM] = []
            while len(chosen) < r:
                v = nodes[int(rng.integers(n))]
                if v not in chosen and v not in exclude:
                    chosen.append(v)
            return chosen
        multi_rack = self.rack_aware and len(self._racks_of_nodes) > 1

        def pick(ok) -> VM:
            for _ in range(64 * n):
                v = nodes[int(rng.integers(n))]
                if v not in chosen and v not in exclude and ok(v):
                    return v
            # the constraint cannot be met (e.g. one rack): relax it
            return next(v for v in nodes if v not in chosen and v not in exclude)

        chosen = []
        if writer is not None and writer.datanode and writer.alive and writer not in exclude:
            chosen.append(writer)
        else:
            chosen.append(pick(lambda v: True))
        if r >= 2:
            first_rack = chosen[0].host.rack
            chosen.append(pick(lambda v: v.host.rack is not first_rack or not multi_rack))
        if r >= 3 and not multi_rack:  # one rack: the third on any other node
            chosen.append(pick(lambda v: True))
        elif r >= 3:
            second_rack = chosen[1].host.rack
            # two live nodes there are enough (a rack holds hundreds: stop counting)
            same = 0
            for v in self._racks_of_nodes.get(second_rack.id, ()):
                if v.alive:
                    same += 1
                    if same > 1:
                        break
            if same > 1:
                chosen.append(pick(lambda v: v.host.rack is second_rack))
            else:
                chosen.append(pick(lambda v: True))
        while len(chosen) < r:
            chosen.append(pick(lambda v: True))
        return chosen

    # -- reading -------------------------------------------------------------------------
    @staticmethod
    def locality(block: Block, vm: VM) -> int:
        """Best locality level (NODE..OFF_RACK) of reading ``block`` on ``vm``."""
        best = OFF_RACK
        host, rack = vm.host, vm.host.rack
        for r in block.replicas:
            if r is vm:
                return NODE
            if r.host is host:
                best = SERVER
            elif best > RACK and r.host.rack is rack:
                best = RACK
        return best

    def nearest_replica(self, block: Block, vm: VM) -> VM | None:
        """The replica a reader on ``vm`` fetches: the closest, ties to the emptiest path
        (None when the block is missing).  Without rack awareness, one on the reader's own
        server if any, else the first in the block's list (module docstring)."""
        if not self.rack_aware:  # min keeps the first of equals: the list's order
            host = vm.host
            return min(
                block.replicas,
                key=lambda r: 0 if r is vm else 1 if r.host is host else 2,
                default=None,
            )
        topo = self.topo
        best, best_key = None, None
        for r in block.replicas:
            key = (topo.hops(vm, r), -topo.path_bandwidth(r.host, vm.host), r.id)
            if best_key is None or key < best_key:
                best, best_key = r, key
        return best

    def rereplicate(
        self, lost: VM, rng: np.random.Generator, durable: bool = True
    ) -> list[tuple[Block, VM]]:
        """Replace the replicas a lost DataNode held, copying from the surviving replicas
        (HDFS re-replication).

        A block whose last live replica was on ``lost`` has nothing to copy from: it is
        *missing* (no replicas) and a map that reads it fails (Hadoop's
        BlockMissingException).  When the node's disk survives (a failure, ``durable``), its
        replicas come back with the node (:meth:`restore`, the DataNode's block report); an
        evicted instance's disk is gone for good.  Returns the (block, new replica) pairs so
        pending maps can be re-indexed.  Deviation: the copy is instantaneous and free.
        """
        moved = []
        for b in self.blocks:
            if lost in b.replicas:
                b.replicas.remove(lost)
                if durable:
                    b.offline.append(lost)
                if not b.replicas:
                    continue
                new = self.place(rng, replication=1, exclude=tuple(b.replicas) + (lost,))
                if new:
                    b.replicas.append(new[0])
                    moved.append((b, new[0]))
        return moved

    def restore(self, back: VM, rng: np.random.Generator) -> list[tuple[Block, VM]]:
        """A repaired DataNode reports its blocks: under-replicated ones take its replica
        back (HDFS would delete the excess of the others), and a missing block is readable
        again and re-replicated from it up to the replication factor."""
        moved = []
        for b in self.blocks:
            if back not in b.offline:
                continue
            b.offline.remove(back)
            if len(b.replicas) >= self.replication:
                continue
            was_missing = not b.replicas
            b.replicas.append(back)
            moved.append((b, back))
            more = self.replication - len(b.replicas)
            if was_missing and more > 0:
                for v in self.place(rng, replication=more, exclude=tuple(b.replicas)):
                    b.replicas.append(v)
                    moved.append((b, v))
        return moved

    def forget(self, gone: VM) -> None:
        """An evicted node's disk is gone: blocks only it held stay missing for good."""
        for b in self.blocks:
            if gone in b.offline:
                b.offline.remove(gone)
