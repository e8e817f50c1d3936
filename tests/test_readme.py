"""The README's Python examples run as written (so they cannot rot again).

Every ```python block of README.md runs, in order, in one namespace.  Budgets are cut
textually: ``range(5)`` seeds -> ``range(1)``, and the environment examples' ``ila72``
becomes ila72 with its 25 jobs shrunk to 150 maps (same cluster, so the same spaces; a
full ila72 episode is thousands of steps, slow for an SB3 model's per-step predict).  A block that needs a trained SB3 ``model`` gets a tiny MaskablePPO
whose untrained policy is made to pick the first legal action (an untrained argmax may
prefer "decline" everywhere and stall the episode until the time cap).
"""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
# (pattern, replacement): smaller budgets, same code paths
SMALL = "_readme_ila72_small"
BUDGET = [
    (r"\brange\(5\)", "range(1)"),
    (r'config="ila72"', f"config={SMALL}"),
    (r'\["ila72"\]', f"[{SMALL}]"),
]
SMALL_OVERRIDES = {"workload.scale_maps_to": 150, "workload.mean_interarrival_s": 2.0}


def python_blocks() -> list[str]:
    return BLOCK.findall(README.read_text(encoding="utf-8"))


def _first_legal_model():
    """A MaskablePPO on MRCluster-v0 (ila72, the README's env) whose deterministic action
    is the lowest-index legal one: zero weights, strictly decreasing biases."""
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO

    env = gym.make("MRCluster-v0", config="ila72", overrides=SMALL_OVERRIDES)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, seed=0, device="cpu")
    head = model.policy.action_net
    with torch.no_grad():
        head.weight.zero_()
        head.bias.copy_(-torch.arange(head.bias.numel(), dtype=head.bias.dtype))
    return model


def test_readme_has_python_examples():
    blocks = python_blocks()
    assert len(blocks) >= 2
    assert any("run_episode" in b for b in blocks)


def test_readme_python_blocks_run_in_order():
    import mrgym

    ns: dict = {"__name__": "__readme__", SMALL: mrgym.load_scenario("ila72", SMALL_OVERRIDES)}
    for i, code in enumerate(python_blocks()):
        for pat, rep in BUDGET:
            code = re.sub(pat, rep, code)
        if re.search(r"\bmodel\b", code) and "model" not in ns:
            ns["model"] = _first_legal_model()
        try:
            exec(compile(code, f"README.md python block {i}", "exec"), ns)
        except Exception as e:  # name the block: the traceback's frames say the line
            raise AssertionError(f"README python block {i} failed: {e!r}\n{code}") from e
    # the examples ran to the end and produced what they promise
    assert ns["r"].metrics["jobs_completed"] == ns["r"].metrics["jobs_submitted"]
    assert {row["policy"] for row in ns["rows"]} >= {"fifo", "fair"}
