"""A target speed that changes within a run (sim.scenario.SpeedChange, a task's speed_change,
simulate --speed-change), beyond the paper: the target it gives at each time and the distance it
covers, the measures that read it at the time, the task key that carries it into an optimization,
and a real run whose controller follows it; a scenario without it, or with a change that changes
nothing, simulates exactly as before."""

import json
import math

import numpy as np
import pytest
import yaml

from musclewalk.cli import main
from musclewalk.measures.gait import DistanceShortfall, MeasureContext, ProgressShortfall
from musclewalk.optimize.task import Task, TaskError
from musclewalk.sim.runner import Simulator
from musclewalk.sim.scenario import Scenario, SpeedChange

RAMP = SpeedChange(start=2.0, duration=4.0, factor=1.5)


def test_the_target_holds_ramps_and_holds_again():
    speeds = [RAMP.speed_at(2.0, t) for t in (0.0, 2.0, 3.0, 4.0, 6.0, 9.0)]
    assert speeds == [2.0, 2.0, 2.25, 2.5, 3.0, 3.0]
    step = SpeedChange(start=1.0, duration=0.0, factor=0.5)
    assert [step.speed_at(2.0, t) for t in (0.5, 1.0, 1.0 + 1e-9, 5.0)] == [2.0, 2.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "change",
    [RAMP, SpeedChange(0.0, 10.0, 0.8), SpeedChange(1.0, 0.0, 1.2), SpeedChange(3.0, 1.5, 1.0)],
)
@pytest.mark.parametrize("t0, t1", [(0.0, 10.0), (0.0, 2.5), (2.5, 7.0), (6.5, 8.0), (1.0, 1.0)])
def test_the_distance_is_the_integral_of_the_target(change, t0, t1):
    times = np.linspace(t0, t1, 200_001)
    speeds = np.array([change.speed_at(1.7, t) for t in times])
    numeric = float(np.sum((speeds[1:] + speeds[:-1]) / 2 * np.diff(times)))
    assert change.distance(1.7, t0, t1) == pytest.approx(numeric, rel=1e-6, abs=1e-9)


def test_the_held_target_is_the_factor_times_the_speed_exactly():
    for factor in (0.05, 0.1, 0.15, 1.1, 1.7):
        change = SpeedChange(1.0, 2.0, factor)
        assert change.speed_at(2.3, 3.0) == change.speed_at(2.3, 9.0) == 2.3 * factor


def test_a_scenario_without_a_change_is_its_constant_speed():
    plain = Scenario(speed=1.3, duration=10.0)
    assert plain.speed_at(7.0) == 1.3 and plain.top_speed == 1.3
    assert plain.target_distance(0.5, 3.5) == 1.3 * (3.5 - 0.5)
    ramp = Scenario(speed=2.0, duration=10.0, speed_change=RAMP)
    assert ramp.speed_at(4.0) == 2.5 and ramp.top_speed == 3.0
    assert Scenario(speed=2.0, duration=10.0, speed_change=SpeedChange(1, 1, 0.5)).top_speed == 2.0
    # a change that has not ended by t_max: the target at t_max; one that starts after it: none
    assert Scenario(speed=2.0, duration=4.0, speed_change=RAMP).top_speed == 2.5
    assert Scenario(speed=2.0, duration=1.0, speed_change=RAMP).top_speed == 2.0


@pytest.mark.parametrize(
    "spec, message",
    [
        ("2,4", "expected START,DURATION,FACTOR"),
        ("a,4,1.1", "expected START,DURATION,FACTOR"),
        ("-1,4,1.1", "expected START >= 0 s, got -1.0"),
        ("1,-4,1.1", "expected DURATION >= 0 s, got -4.0"),
        ("1,4,0", "expected FACTOR > 0, got 0.0"),
        ("1,nan,1.1", "expected DURATION >= 0 s, got nan"),
    ],
)
def test_a_bad_speed_change_is_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        SpeedChange.parse(spec)
    assert SpeedChange.parse("2,4,1.5") == RAMP
    with pytest.raises(ValueError, match="speed change: expected START"):
        Scenario(speed=1.0, duration=1.0, speed_change=SpeedChange(-1.0, 1.0, 1.0)).validate()


# ------------------------------------------------------------------ the measures
class Sample:
    def __init__(self, t, forward_speed):
        self.t = t
        self.forward = np.array([1.0, 0.0, 0.0])
        self.sensors = type("S", (), {"com_vel": np.array([forward_speed, 0.0, 0.0])})()


def context(scenario):
    return MeasureContext(
        body_mass=70.0,
        dt=0.005,
        target_speed=scenario.speed,
        heading_at=scenario.heading_at,
        head_body=0,
        head_offset=np.zeros(3),
        head_base_R=np.eye(3),
        muscle_mass=np.zeros(0),
        contact_velocities=None,
        speed_at=scenario.speed_at if scenario.speed_change else None,
        distance_between=scenario.target_distance if scenario.speed_change else None,
    )


def test_a_walker_that_keeps_up_with_a_changing_target_falls_short_of_nothing():
    """distance_shortfall reads the target at the time; progress_shortfall compares the distance
    walked with the distance the target covered, not the start speed times the time."""
    scenario = Scenario(speed=2.0, duration=10.0, speed_change=RAMP)
    ctx = context(scenario)
    distance, progress = DistanceShortfall(ctx), ProgressShortfall(ctx)
    values = []
    for k in range(2000):
        t = k * ctx.dt
        sample = Sample(t, scenario.speed_at(t + ctx.dt / 2))  # the midpoint: exact distance per step
        values.append((distance.value(sample), progress.value(sample)))
    d, p = np.array(values).T
    assert np.abs(d[1:]).max() < 1e-3  # the half-step lag of the midpoint speed on the ramp
    assert p[1:].max() < 1e-9
    # held at the start speed the walker falls behind on the ramp: 1 - 2 / 3 after it
    assert distance.value(Sample(9.0, 2.0)) == pytest.approx(1.0 - 2.0 / 3.0)


class Stepper:
    """Sensors of a walker in single support on alternating feet, a touch-down every ``period``
    s, both feet where the target has got to at the touch-down."""

    def __init__(self, scenario, period=0.5):
        self.scenario, self.period = scenario, period

    def sample(self, t):
        k = int(t / self.period + 1e-9)
        sample = Sample(t, 0.0)
        grf = [700.0 if k % 2 == 0 else 0.0, 700.0 if k % 2 else 0.0]
        sample.sensors.foot_grf = np.array([[0.0, grf[0], 0.0], [0.0, grf[1], 0.0]])
        foot = self.scenario.target_distance(0.0, k * self.period)
        sample.sensors.foot_pos = np.array([[foot, 0.0, 0.1], [foot, 0.0, -0.1]])
        return sample


def test_a_walker_that_keeps_up_with_a_ramp_is_charged_no_speed_error():
    """speed_error compares v_base, measured over the last step, with the target averaged over
    that step: a walker whose steps keep up with the ramp scores 0 on it, where the target of the
    moment would charge the half step by which v_base lags."""
    from musclewalk.measures.gait import SpeedError

    scenario = Scenario(speed=2.0, duration=10.0, speed_change=SpeedChange(2.0, 6.0, 2.0))
    measure, stepper = SpeedError(context(scenario)), Stepper(scenario)
    values = [measure.value(stepper.sample(k * 0.005)) for k in range(2000)]
    after_two_steps = np.array(values[200:])
    assert after_two_steps.max() < 1e-9
    lagging = abs(1.0 - measure.v_base / scenario.speed_at(5.0 - 0.005))
    assert lagging > 0.01  # what the target of the moment would charge on the ramp


def test_without_a_change_the_context_reads_the_constant_as_before():
    ctx = context(Scenario(speed=1.3, duration=10.0))
    assert ctx.target_speed_at(5.0) == 1.3
    assert ctx.target_distance(0.0, 2.345) == 1.3 * 2.345
    assert ctx.mean_target_speed(0.4, 0.9) == 1.3


# ------------------------------------------------------------------ the task key
def test_a_task_carries_the_change_into_every_scenario(tmp_path):
    path = tmp_path / "faster.yaml"
    path.write_text(
        yaml.safe_dump({"description": "faster", "speed_change": {"start": 2, "duration": 4, "factor": 1.5}})
    )
    task = Task.load(path)
    assert task.speed_change == RAMP and not task.randomized and not task.eased_or_perturbed
    # stop_when_walking "unperturbed" takes away pushes and aid but keeps the speed change
    pushed_aided = Task.from_dict(
        {"pushes": {"magnitude": 10}, "assist": {"upright": 0.5}, "speed_change": RAMP.as_dict()}, "pa"
    )
    assert pushed_aided.eased_or_perturbed
    plain = pushed_aided.unperturbed()
    assert plain.speed_change == RAMP and not plain.eased_or_perturbed and plain.pushes is None
    assert Task.load("push").unperturbed() is None
    assert task.as_dict()["speed_change"] == {"start": 2.0, "duration": 4.0, "factor": 1.5}
    assert Task.from_dict(task.as_dict(), "faster").speed_change == RAMP
    assert "the target speed changes to 1.5 x the speed from 2 s over 4 s" in task.summary()
    assert task.scenario(1.2, 10.0)[0].speed_change == RAMP
    pushed = Task.from_dict({"pushes": {"magnitude": 10}, "speed_change": RAMP.as_dict()}, "p")
    assert pushed.scenario(1.2, 10.0, seed=3)[0].speed_change == RAMP
    # none: no key, so the checkpoints of runs from before it stay equal to their files
    assert "speed_change" not in Task.load("walk").as_dict() and not Task.load("walk").eased_or_perturbed


def test_a_task_that_extends_another_changes_only_its_factor(tmp_path):
    (tmp_path / "base.yaml").write_text(yaml.safe_dump({"speed_change": RAMP.as_dict()}))
    (tmp_path / "more.yaml").write_text(
        yaml.safe_dump({"extends": "base.yaml", "description": "more", "speed_change": {"factor": 2}})
    )
    assert Task.load(tmp_path / "more.yaml").speed_change == SpeedChange(2.0, 4.0, 2.0)


@pytest.mark.parametrize(
    "section, key",
    [
        ({"start": 2, "duration": 4}, "speed_change.factor"),
        ({"start": -1, "duration": 4, "factor": 1.1}, "speed_change.start"),
        ({"start": 1, "duration": 4, "factor": 0}, "speed_change.factor"),
        ({"start": 1, "duration": "long", "factor": 1.1}, "speed_change.duration"),
        ({"start": 1, "duration": 4, "factor": 1.1, "to": 2}, "speed_change.to"),
        (1.1, "speed_change"),
    ],
)
def test_a_bad_speed_change_in_a_task_names_file_and_key(tmp_path, section, key):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"speed_change": section}))
    with pytest.raises(TaskError) as info:
        Task.load(path)
    assert str(info.value).startswith(f"{path}: {key}: ")


# ------------------------------------------------------------------ real runs
@pytest.fixture(scope="module")
def humanlegs(built_models):
    return Simulator(built_models["HumanLegs"])


def test_a_change_that_changes_nothing_is_the_plain_run_to_the_bit(humanlegs):
    plain = humanlegs.run(Scenario(speed=1.3, duration=0.3))
    same = humanlegs.run(Scenario(speed=1.3, duration=0.3, speed_change=SpeedChange(0.1, 0.1, 1.0)))
    other = humanlegs.run(Scenario(speed=1.3, duration=0.3, speed_change=SpeedChange(0.05, 0.1, 1.5)))
    np.testing.assert_array_equal(same.final_com, plain.final_com)
    assert not np.array_equal(other.final_com, plain.final_com)


def test_simulate_follows_the_change_and_records_it(built_models, tmp_path, capsys):
    args = ["simulate", str(built_models["HumanLegs"]), "--speed", "1.2", "--duration", "0.2"]
    out = tmp_path / "ramp"
    assert main([*args, "--out", str(out), "--speed-change", "0.05,0.1,1.5"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["target_speed"] == 1.2
    assert summary["speed_change"] == {"start": 0.05, "duration": 0.1, "factor": 1.5}
    import pandas as pd

    log = pd.read_csv(out / "controller.csv")
    expected = [1.2 * (1 + 0.5 * min(max(t - 0.05, 0) / 0.1, 1)) for t in log["t"]]
    np.testing.assert_allclose(log["target_speed"], expected, rtol=1e-12)
    assert math.isclose(log["target_speed"].iloc[-1], 1.8)
    capsys.readouterr()
    bad = tmp_path / "bad"
    assert main([*args, "--out", str(bad), "--speed-change", "0.05,0.1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--speed-change: expected START,DURATION,FACTOR" in err[0]
    assert not bad.exists()
    plain = tmp_path / "plain"
    assert main([*args, "--out", str(plain)]) == 0
    assert "speed_change" not in json.loads((plain / "summary.json").read_text())
