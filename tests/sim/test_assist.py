"""The balance aid of bootstrap tasks (sim.scenario.Assist): its torque turns the trunk toward
its base-pose orientation at the target heading and damps it, its force carries a share of the
body weight, and on the real model it holds a creature up that falls without it; a scenario
without it simulates exactly as before."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from musclewalk.cli import main
from musclewalk.constants import GRAVITY
from musclewalk.sim.runner import Simulator
from musclewalk.sim.scenario import ASSIST_DAMPING_TIME, Assist, Scenario

M, L = 80.0, 0.9


def test_the_aid_turns_the_trunk_back_toward_upright_at_the_target_heading():
    aid = Assist(upright=1.0)
    stiffness = M * GRAVITY * L
    force, torque = aid.wrench(np.eye(3), np.zeros(3), 0.0, M, L)
    np.testing.assert_array_equal(force, 0.0)
    np.testing.assert_allclose(torque, 0.0, atol=1e-12)
    # pitched forward by 0.3 rad (about -z: the trunk's x axis toward the ground): +z back
    pitched = Rotation.from_rotvec([0.0, 0.0, -0.3]).as_matrix()
    _, torque = aid.wrench(pitched, np.zeros(3), 0.0, M, L)
    np.testing.assert_allclose(torque, [0.0, 0.0, 0.3 * stiffness], atol=1e-9)
    # any tilt or turn: the torque is the rotation vector back to the target, times the stiffness
    for rotvec, heading in (([0.2, -0.1, 0.4], 0.0), ([0.0, 0.5, 0.0], 0.5), ([0.1, 1.0, -0.2], -1.0)):
        R = Rotation.from_rotvec(rotvec).as_matrix()
        target = Rotation.from_rotvec([0.0, heading, 0.0])
        back = (target * Rotation.from_matrix(R).inv()).as_rotvec()
        _, torque = aid.wrench(R, np.zeros(3), heading, M, L)
        np.testing.assert_allclose(torque, back * stiffness, rtol=1e-9, atol=1e-9)
    # damping against the trunk's angular velocity
    _, torque = aid.wrench(np.eye(3), np.array([1.0, -2.0, 0.5]), 0.0, M, L)
    np.testing.assert_allclose(torque, -ASSIST_DAMPING_TIME * stiffness * np.array([1.0, -2.0, 0.5]))
    # support: an upward share of body weight, no torque without upright
    force, torque = Assist(support=0.25).wrench(pitched, np.ones(3), 0.0, M, L)
    np.testing.assert_allclose(force, [0.0, 0.25 * M * GRAVITY, 0.0])
    np.testing.assert_array_equal(torque, 0.0)
    assert not Assist() and Assist(support=0.1) and Assist(upright=0.1)


def test_an_aid_that_leaves_the_heading_free_has_no_yaw_torque():
    """hold_heading False: the same torque about the horizontal axes, none about the vertical,
    on the plain gains and on the capped ones of a light trunk alike."""
    held, free = Assist(upright=1.0), Assist(upright=1.0, hold_heading=False)
    R = Rotation.from_rotvec([0.2, -0.6, 0.3]).as_matrix()
    omega = np.array([1.0, -2.0, 0.5])
    for gains in (None, held.held_gains(M, L, np.diag([0.084, 0.084, 0.049]), 0.005)):
        _, full = held.wrench(R, omega, 0.4, M, L, held_gains=gains)
        force, torque = free.wrench(R, omega, 0.4, M, L, held_gains=gains)
        assert abs(full[1]) > 10.0 and torque[1] == 0.0
        np.testing.assert_array_equal(torque[[0, 2]], full[[0, 2]])
    # a pure turn away from the heading: nothing holds it
    _, torque = free.wrench(Rotation.from_rotvec([0.0, 0.5, 0.0]).as_matrix(), np.zeros(3), 0.0, M, L)
    np.testing.assert_allclose(torque, 0.0, atol=1e-9)
    assert "heading left free" in free.describe() and "free" not in held.describe()
    # stored aids read the same as before the option existed
    assert held.as_dict() == {"upright": 1.0, "support": 0.0}
    assert free.as_dict() == {"upright": 1.0, "support": 0.0, "hold_heading": False}


def _held_map_radius(k, c, inertia, dt):
    """Spectral radius of one control interval of a spring-damper torque held constant over dt on
    an inertia (exact integration of the held torque): below 1 the held aid is stable."""
    a, b = k * dt**2 / inertia, c * dt / inertia
    step = np.array([[1.0 - a / 2.0, dt * (1.0 - b / 2.0)], [-a / dt, 1.0 - b]])
    return max(abs(np.linalg.eigvals(step)))


def test_the_aid_is_capped_on_a_trunk_too_light_for_it():
    """Held over a 5 ms control interval, the aid's damping on a Human's pelvis (I 0.05-0.08
    kg m²) makes c dt/I 4-7, and the held map diverges; capped per principal axis it converges.
    A heavy trunk (the Ostrich's, 1.4-2.5 kg m²) keeps the plain gains (None: the plain path)."""
    dt = 0.005
    aid = Assist(upright=1.0)
    k = M * GRAVITY * L
    heavy = np.diag([1.39, 2.38, 2.46])
    assert aid.held_gains(M, L, heavy, dt) is None
    light = np.diag([0.084, 0.084, 0.049])
    axes, stiffness, damping = aid.held_gains(M, L, light, dt)
    moments = np.diag(light)[np.argmax(np.abs(axes), axis=0)]
    for inertia, ka, ca in zip(moments, stiffness, damping):
        assert _held_map_radius(k, ASSIST_DAMPING_TIME * k, inertia, dt) > 1.0
        assert _held_map_radius(ka, ca, inertia, dt) < 1.0
        assert ca == pytest.approx(inertia / dt) and ka <= k
    # the capped torque: per principal axis, on the axes turned with the trunk
    R = Rotation.from_rotvec([0.1, 0.2, -0.3]).as_matrix()
    omega = np.array([1.0, -2.0, 0.5])
    _, torque = aid.wrench(R, omega, 0.0, M, L, held_gains=(axes, stiffness, damping))
    back = Rotation.from_matrix(R).inv().as_rotvec()
    world_axes = R @ axes
    expected = world_axes @ (stiffness * (world_axes.T @ back) - damping * (world_axes.T @ omega))
    np.testing.assert_allclose(torque, expected, rtol=1e-9)


def test_the_aid_holds_a_humans_light_pelvis_without_shaking_it(built_models):
    """The Human's trunk feature is its pelvis: at upright 1 the plain held damping spun it up to
    290 rad/s within 0.17 s (a fall); capped, its angular speed stays that of a stumble."""
    sim = Simulator(built_models["Human"])
    rates = []

    def trunk_rate(sensors, u, engine, raw):
        rates.append(np.abs(raw.body_omega[sim._trunk]).max())

    sim.run(Scenario(speed=1.3, duration=0.3, assist=Assist(upright=1.0)), observers=[trunk_rate])
    assert max(rates) < 10.0


@pytest.mark.parametrize("bad", [Assist(upright=-1.0), Assist(support=1.0), Assist(upright=math.nan)])
def test_a_bad_aid_is_refused_by_the_scenario(bad):
    with pytest.raises(ValueError, match="assist"):
        Scenario(speed=1.3, duration=1.0, assist=bad).validate()


@pytest.fixture(scope="module")
def humanlegs(built_models):
    return Simulator(built_models["HumanLegs"])


def test_the_aid_holds_up_a_creature_that_falls_without_it(humanlegs):
    """HumanLegs at its template defaults falls within a second; half its weight carried and
    its trunk held upright, it stays up longer. Without an aid (or with a zero one) the run is
    the plain one to the bit."""
    plain = humanlegs.run(Scenario(speed=1.3, duration=2.0))
    zero = humanlegs.run(Scenario(speed=1.3, duration=2.0, assist=Assist()))
    aided = humanlegs.run(Scenario(speed=1.3, duration=2.0, assist=Assist(upright=1.0, support=0.5)))
    assert plain.terminated and plain.simulated_time < 1.0
    assert (zero.simulated_time, zero.reason) == (plain.simulated_time, plain.reason)
    np.testing.assert_array_equal(zero.final_com, plain.final_com)
    assert aided.simulated_time > plain.simulated_time + 0.2


def test_simulate_takes_the_aid_and_records_it(built_models, tmp_path, capsys):
    out = tmp_path / "aided"
    args = ["simulate", str(built_models["HumanLegs"]), "--speed", "1.3", "--duration", "0.05"]
    assert main([*args, "--out", str(out), "--assist-upright", "1", "--assist-support", "0.3"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["assist"] == {"upright": 1.0, "support": 0.3}
    capsys.readouterr()
    bad = tmp_path / "bad"
    assert main([*args, "--out", str(bad), "--assist-support", "1.5"]) == 2
    err = capsys.readouterr().err
    assert "--assist-support: expected a fraction of body weight in [0, 0.9], got 1.5" in err
    assert not bad.exists()
    free = tmp_path / "free"
    assert main([*args, "--out", str(free), "--assist-upright", "0.5", "--assist-free-heading"]) == 0
    assert json.loads((free / "summary.json").read_text())["assist"] == {
        "upright": 0.5,
        "support": 0.0,
        "hold_heading": False,
    }
    capsys.readouterr()
    assert main([*args, "--out", str(bad), "--assist-support", "0.2", "--assist-free-heading"]) == 2
    assert "--assist-free-heading: only with an upright torque" in capsys.readouterr().err
    assert not bad.exists()
    # a tightened heading rule, as a task's termination.max_heading_error, is recorded; the
    # paper's is not
    assert "max_heading_error_deg" not in summary
    strict = tmp_path / "strict"
    assert main([*args, "--out", str(strict), "--max-heading-error", "20"]) == 0
    assert json.loads((strict / "summary.json").read_text())["max_heading_error_deg"] == 20.0
    capsys.readouterr()
    assert main([*args, "--out", str(bad), "--max-heading-error", "0"]) == 2
    assert "--max-heading-error: expected an angle in (0, 180] (deg), got 0.0" in capsys.readouterr().err
    assert not bad.exists()


def test_a_tightened_heading_rule_ends_the_run_where_the_walker_turns_past_it(humanlegs):
    """The runner applies the scenario's heading limit: HumanLegs at its template defaults, which
    falls by another rule under the paper's 45 degrees, ends by the heading rule first with a
    limit of half a degree; the run before that moment is the same."""
    plain = humanlegs.run(Scenario(speed=1.3, duration=2.0))
    strict = humanlegs.run(Scenario(speed=1.3, duration=2.0, max_heading_error=math.radians(0.5)))
    assert plain.reason != "heading"
    assert strict.reason == "heading" and strict.simulated_time < plain.simulated_time


def test_simulate_as_scored_runs_what_the_best_was_scored_under(tmp_path, capsys):
    """--as-scored: the task in the best.json (an aid step's scaled aid, pushes drawn from its
    perturbation seed), else the one in the settings.json beside it; the best's speed and t_max
    unless given; every other scenario option refused; one line for a best it cannot read."""
    from musclewalk.optimize.task import Task

    committed = Path(__file__).resolve().parents[2] / "models" / "optimized" / "HumanLegs-walk-1.3"
    best = json.loads((committed / "best.json").read_text())
    definition = {
        "description": "aided, pushed",
        "assist": {"upright": 0.12, "support": 0.06, "hold_heading": False},
        "pushes": {"magnitude": 5.0, "start": 0.05, "interval": 0.25, "jitter": 0.02},
    }
    folder = tmp_path / "stage"
    folder.mkdir()
    scored = {**best, "task": "aid-pushed.yaml", "task_definition": definition, "perturbation_seed": 7}
    (folder / "best.json").write_text(json.dumps(scored))
    model = str(committed / "optimized.osim")
    run = ["simulate", model, "--params", str(folder / "best.json"), "--as-scored"]
    out = tmp_path / "as-scored"
    assert main([*run, "--duration", "0.35", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    task = Task.from_dict(definition, "aid-pushed")
    scenario, _ = task.scenario(best["speed"], 0.35, 7)
    assert summary["assist"] == {"upright": 0.12, "support": 0.06, "hold_heading": False}
    assert [p["start"] for p in summary["pushes"]] == [p.start for p in scenario.pushes]
    assert len(summary["pushes"]) == 2 and summary["as_scored"]["perturbation_seed"] == 7
    assert summary["as_scored"]["task"] == "aid-pushed" and summary["target_speed"] == best["speed"]
    # an older best: the task the run stored in its settings.json
    del scored["task_definition"]
    (folder / "best.json").write_text(json.dumps({**scored, "duration": 0.2}))
    (folder / "settings.json").write_text(json.dumps({"task_definition": definition}))
    older = tmp_path / "older"
    assert main([*run, "--out", str(older)]) == 0
    summary = json.loads((older / "summary.json").read_text())
    assert summary["simulated_time"] == pytest.approx(0.2) and summary["assist"]["upright"] == 0.12
    capsys.readouterr()
    bad = tmp_path / "bad"
    assert main([*run, "--out", str(bad), "--assist-upright", "1"]) == 2
    assert "--assist-upright: not with --as-scored" in capsys.readouterr().err
    assert main([*run, "--out", str(bad), "--control-interval", "0.002"]) == 2
    assert "--control-interval: not with --as-scored" in capsys.readouterr().err
    (folder / "settings.json").unlink()
    assert main([*run, "--out", str(bad)]) == 2
    assert (
        "best.json: task_definition: missing here and in a settings.json beside it" in capsys.readouterr().err
    )
    assert main(["simulate", model, "--as-scored", "--out", str(bad)]) == 2
    assert "--as-scored: needs --params" in capsys.readouterr().err
    assert main(["simulate", model, "--params", str(committed / "best.json"), "--out", str(bad)]) == 2
    assert "--duration: required (without --as-scored)" in capsys.readouterr().err
    assert not bad.exists()


def test_scored_conditions_of_a_best_name_the_file_and_key(tmp_path):
    """optimize.task.scored_conditions: straight walking for a best of the default task without a
    stored definition; a randomized task needs the best's perturbation seed; a bad definition or
    seed is one error naming the file and key."""
    from musclewalk.optimize.task import TaskError, scored_conditions

    best = tmp_path / "best.json"

    def write(**values):
        best.write_text(json.dumps({"speed": 1.3, "duration": 5.0, "task": "walk", **values}))

    write(task_definition=None)
    scored = scored_conditions(best)
    assert not scored.task.randomized and scored.task.assist is None and scored.perturbation_seed is None
    assert (scored.speed, scored.duration) == (1.3, 5.0)
    pushed = {"pushes": {"magnitude": 5.0}}
    write(task="push", task_definition=pushed)
    with pytest.raises(TaskError, match="best.json: perturbation_seed: missing, and its task push draws"):
        scored_conditions(best)
    write(task="push", task_definition=pushed, perturbation_seed=-1)
    with pytest.raises(TaskError, match="best.json: perturbation_seed: expected an integer >= 0, got -1"):
        scored_conditions(best)
    write(task_definition={"assist": {"upright": -1}})
    with pytest.raises(TaskError, match="best.json: task_definition: assist.upright"):
        scored_conditions(best)
    write(task_definition=None, speed=0)
    with pytest.raises(TaskError, match="best.json: speed: expected the run's positive speed, got 0"):
        scored_conditions(best)
    best.write_text("[1, 2]")
    with pytest.raises(TaskError, match="best.json: expected a JSON object"):
        scored_conditions(best)
