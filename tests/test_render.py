"""render_mode "rgb_array" and "ansi": fixed frame shape, readable content, the script."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from mrgym.envs.render import FRAME_PX, main


def _play(env, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    for _ in range(n):
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            break
    return info


@pytest.mark.parametrize("name", ["ila72", "hybrid48"])
def test_rgb_frames_have_a_fixed_shape_and_change_with_the_state(name):
    env = gym.make("MRCluster-v0", config=name, render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    assert first.dtype == np.uint8
    assert first.shape == (FRAME_PX[1], FRAME_PX[0], 3)
    _play(env, 300)
    later = env.render()
    assert later.shape == first.shape and later.dtype == np.uint8
    assert not np.array_equal(first, later)
    # not a blank canvas: several colours (jobs, hosts, legend)
    assert len(np.unique(later.reshape(-1, 3), axis=0)) > 20


def test_rgb_before_reset_and_after_the_end():
    env = gym.make(
        "MRCluster-v0",
        config="lee-gpu",
        overrides={"run.max_sim_time_s": 200},
        render_mode="rgb_array",
    )
    assert env.unwrapped.render().shape == (FRAME_PX[1], FRAME_PX[0], 3)
    info = _play(env, 100_000)
    assert env.unwrapped.view.finished  # the episode is over: no decision pending
    assert info["decision_vm"] == -1 and info["slot_kind"] == ""
    assert env.render().shape == (FRAME_PX[1], FRAME_PX[0], 3)


def test_ansi_names_the_racks_and_the_decision():
    env = gym.make("MRCluster-v0", config="ila72", render_mode="ansi")
    env.reset(seed=0)
    _play(env, 50)
    text = env.render()
    assert isinstance(text, str)
    for rack in env.unwrapped.sim.topo.racks:
        assert f"{rack.name}:" in text
    assert "decision:" in text


def test_script_writes_the_readme_frame(tmp_path, capsys):
    out = tmp_path / "frame.png"
    main(["--config", "lee-gpu", "--steps", "50", "--out", str(out)])
    assert out.stat().st_size > 10_000
    import matplotlib.image

    img = matplotlib.image.imread(out)
    assert img.shape[:2] == (FRAME_PX[1], FRAME_PX[0])
    assert "wrote" in capsys.readouterr().out
