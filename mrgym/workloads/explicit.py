"""An explicit job list in the scenario (``workload.kind: jobs``), for small setups and tests.

Each item: ``{profile, maps, reduces?, submit_s?, input_mb?, name?, user?, weight?,
deadline_s?}``; ``input_mb`` defaults to ``maps x block_mb``.
"""

from __future__ import annotations

from mrgym.sim.jobs import JobSpec, get_profile
from mrgym.workloads.paper_mixes import default_reduces

KEYS = {
    "profile",
    "maps",
    "reduces",
    "submit_s",
    "input_mb",
    "name",
    "user",
    "weight",
    "deadline_s",
    "repeat",
    "every_s",
}


def explicit_jobs(w, block_mb: float) -> list[JobSpec]:
    out = []
    for i, item in enumerate(w.jobs):
        unknown = set(item) - KEYS
        if unknown:
            raise ValueError(
                f"workload.jobs.{i}: unknown key {sorted(unknown)[0]!r}; expected one of {sorted(KEYS)}"
            )
        if "profile" not in item or "maps" not in item:
            raise ValueError(f"workload.jobs.{i}: 'profile' and 'maps' are required")
        prof = get_profile(item["profile"])
        maps = int(item["maps"])
        if maps < 1:
            raise ValueError(f"workload.jobs.{i}.maps: must be >= 1, got {maps}")
        reduces = int(item.get("reduces", default_reduces(prof, maps)))
        if reduces < 0:
            raise ValueError(f"workload.jobs.{i}.reduces: must be >= 0, got {reduces}")
        for r in range(int(item.get("repeat", 1))):
            out.append(
                JobSpec(
                    str(item.get("name", f"{prof.name}-{i}"))
                    + (f".{r}" if item.get("repeat") else ""),
                    prof,
                    float(item.get("submit_s", 0.0)) + r * float(item.get("every_s", 0.0)),
                    maps,
                    reduces,
                    float(item.get("input_mb", maps * block_mb)),
                    user=str(item.get("user", "default")),
                    pool=str(item.get("user", "default")),
                    weight=float(item.get("weight", 1.0)),
                    deadline_s=item.get("deadline_s"),
                )
            )
    return out
