"""An explicit job list in the scenario (``workload.kind: jobs``), for small setups and tests.

Each item: ``{profile, maps, reduces?, submit_s?, input_mb?, name?, user?, weight?,
deadline_s?, repeat?, every_s?}``; ``input_mb`` defaults to ``maps x block_mb`` and
``reduces`` to the profile's default.  The items are validated by the scenario schema
(:class:`mrgym.config.JobItem`: types, ranges, known profile), so this only expands them.
"""

from __future__ import annotations

from mrgym.sim.jobs import JobSpec, get_profile
from mrgym.workloads.paper_mixes import default_reduces


def explicit_jobs(w, block_mb: float) -> list[JobSpec]:
    out = []
    for i, item in enumerate(w.jobs):
        prof = get_profile(item.profile)
        maps = item.maps
        reduces = item.reduces if item.reduces is not None else default_reduces(prof, maps)
        input_mb = item.input_mb if item.input_mb is not None else maps * block_mb
        name = item.name if item.name is not None else f"{prof.name}-{i}"
        user = item.user if item.user is not None else "default"
        # a repeated job's copies are name.0, name.1, ... (also with an explicit repeat: 1)
        for r in range(item.repeat or 1):
            out.append(
                JobSpec(
                    name + (f".{r}" if item.repeat is not None else ""),
                    prof,
                    item.submit_s + r * item.every_s,
                    maps,
                    reduces,
                    input_mb,
                    user=user,
                    pool=user,
                    weight=item.weight,
                    deadline_s=item.deadline_s,
                )
            )
    return out
