"""`musclewalk robustness`: the protocol's stepping (levels up to the first failure, the median
over seeds), the perturbations of each trial and the heading-error rule, on a fake simulator;
bad input as one error line with nothing written; and one tiny real run on the committed
HumanLegs."""

import json
import math
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from musclewalk.analysis import robustness as rb
from musclewalk.cli import main
from musclewalk.control.rotations import rot_y

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "models" / "optimized" / "HumanLegs-walk-1.3"


class FakeSimulator:
    """Stands in for `Simulator`: a trial "falls" (termination rule com_height at 0.5 s) when
    ``falls(scenario, terrain)`` says so; observers see the trunk at heading
    target - ``heading_error(t)`` (deg) every control step of a run that does not fall."""

    def __init__(self, falls, heading_error=lambda t: 0.0, terrain=None, log=None):
        self.falls, self.heading_error, self.terrain = falls, heading_error, terrain
        self.rules = SimpleNamespace(trunk=1)
        self.log = log if log is not None else []

    def run(self, scenario, params, record=False, observers=()):
        self.log.append((scenario, self.terrain, params))
        fall = self.falls(scenario, self.terrain)
        end = 0.5 if fall else scenario.duration
        dt = scenario.control_interval
        for k in range(int(round(end / dt)) + 1):
            t = k * dt
            R = np.stack([np.eye(3), rot_y(scenario.heading_at(t) - math.radians(self.heading_error(t)))])
            for obs in observers:
                obs(SimpleNamespace(t=t, body_R=R, com_pos=np.zeros(3)), None, None, None)
        return SimpleNamespace(
            terminated=fall,
            reason="com_height" if fall else None,
            simulated_time=end,
            initial_com=np.zeros(3),
            final_com=np.array([1.3 * end, 0.0, 0.0]),
        )


def simulators(falls, heading_error=lambda t: 0.0):
    """simulator_for(terrain) as run_protocol takes it, and the log of every run."""
    log = []
    flat = FakeSimulator(falls, heading_error, log=log)

    def simulator_for(terrain):
        return flat if terrain is None else FakeSimulator(falls, heading_error, terrain, log)

    return simulator_for, log


def push_magnitude(scenario):
    forces = [np.linalg.norm(p.force) for p in scenario.pushes]
    return max(forces) if forces else 0.0


# ------------------------------------------------------------------ the stepping
def test_levels_start_step_and_limits():
    p = rb.Protocol("push", 1.3)
    assert (p.start, p.step, p.duration, p.seeds) == (10.0, 10.0, 10.0, 10)
    assert list(rb.Protocol("push", 1.3, start=50, step=25, maximum=120).levels()) == [50, 75, 100]
    assert list(rb.Protocol("slope", 1.3, start=40, step=2).levels()) == [40, 42, 44]
    levels = list(rb.Protocol("turn", 1.3, start=0.1, step=0.1).levels())
    assert len(levels) == rb.MAX_LEVELS and levels[2] == 0.3  # no floating-point drift
    assert rb.Protocol("turn", 1.3).duration == 20.0


def test_step_seed_stops_at_the_first_failure():
    calls = []

    def trial(level, seed):
        calls.append((level, seed))
        # 70 would be survived again, but stepping ends at the first failure (50)
        return {"level": level, "survived": level < 50 or level == 70}

    result = rb.step_seed(rb.Protocol("push", 1.3), 7, trial)
    assert calls == [(10, 7), (20, 7), (30, 7), (40, 7), (50, 7)]
    assert result["max_survived"] == 40 and result["first_failure"] == 50
    assert not result["capped"] and result["seed"] == 7 and len(result["trials"]) == 5
    first = rb.step_seed(rb.Protocol("push", 1.3), 1, lambda level, seed: {"level": level, "survived": False})
    assert first["max_survived"] is None and first["first_failure"] == 10


def push_protocol_falling_at(falls_at: dict):
    """A push protocol of 2.5 s trials over the seeds of ``falls_at`` (seed -> the push in N at
    which it falls) and the ``falls(scenario, terrain)`` of its fake simulator."""
    protocol = rb.Protocol("push", 1.3, seeds=len(falls_at), duration=2.5)
    # the seed of a trial, told by its push directions (the same at every level of a seed)
    seeds = {s: protocol.trial(1.0, s)[0] for s in protocol.seed_list()}

    def falls(scenario, _):
        seed = next(s for s, ref in seeds.items() if _same_directions(scenario, ref))
        return push_magnitude(scenario) >= falls_at[seed]

    return protocol, falls


def test_run_protocol_per_seed_maxima_median_and_output():
    protocol, falls = push_protocol_falling_at({1: 40, 2: 20, 3: 70, 4: 10, 5: 50})
    simulator_for, log = simulators(falls)
    lines = []
    result = rb.run_protocol(protocol, {"x": 1.0}, simulator_for, progress=lines.append)
    assert all(params == {"x": 1.0} for _, _, params in log)  # the parameters reach every run
    assert result["per_seed_max"] == [30, 10, 60, None, 40]
    assert result["median"] == 30 and result["seeds_below_start"] == 1
    assert result["trials"] == len(log) == 4 + 2 + 7 + 1 + 5 == len(lines)
    assert lines[0] == "push seed 1: 10 N survived" and "failed (com_height at 0.50 s)" in lines[3]
    assert result["protocol"]["pushes"]["first"] == 1.0 and result["unit"] == "N"
    json.dumps(result)  # plain data
    line = rb.summary_line({**result, "creature": "Fake"}, "out.json")
    assert line.startswith("Fake push: median 30 N over 5 seed(s) (per seed: 30, 10, 60, below start, 40")


def _same_directions(scenario, reference):
    a = np.array([np.asarray(p.force) / np.linalg.norm(p.force) for p in scenario.pushes])
    b = np.array([np.asarray(p.force) / np.linalg.norm(p.force) for p in reference.pushes])
    return a.shape == b.shape and np.allclose(a, b)


def _without_wall_times(value):
    """``value`` with every wall_time left out (the one thing a resumed protocol may change)."""
    if isinstance(value, dict):
        return {k: _without_wall_times(v) for k, v in value.items() if k != "wall_time"}
    if isinstance(value, list):
        return [_without_wall_times(v) for v in value]
    return value


class SessionEnd(Exception):
    """A protocol stopped part-way (the session's end kills it)."""


def test_a_stopped_protocol_resumes_from_its_kept_trials(tmp_path):
    """Every finished trial is kept beside the output; the same protocol on the same walker run
    again reuses them (no trial simulated twice) and gives the uninterrupted result; another
    protocol or walker is refused naming the file."""
    protocol, falls = push_protocol_falling_at({1: 40, 2: 20, 3: 70})
    simulator_for, whole = simulators(falls)
    uninterrupted = rb.run_protocol(protocol, {}, simulator_for)
    walker = {"model_sha256": "a", "parameters_sha256": "b"}
    path = rb.partial_path(tmp_path / "push.json")
    assert path == tmp_path / "push.partial.json"

    simulator_for, first = simulators(falls)

    def stopping(terrain):
        if len(first) == 6:  # in the second seed
            raise SessionEnd
        return simulator_for(terrain)

    with pytest.raises(SessionEnd):
        rb.run_protocol(protocol, {}, stopping, log=rb.TrialLog(path, protocol, walker))
    assert len(rb.TrialLog(path, protocol, walker)) == 6

    simulator_for, second = simulators(falls)
    log = rb.TrialLog(path, protocol, walker)
    resumed = rb.run_protocol(protocol, {}, simulator_for, log=log)
    assert len(first) + len(second) == len(whole) == resumed["trials"] == 4 + 2 + 7
    assert [r.pushes for r, _, _ in first + second] == [r.pushes for r, _, _ in whole]
    assert resumed["wall_time"] >= log.earlier_wall_time
    assert _without_wall_times(resumed) == _without_wall_times(uninterrupted)

    other = rb.Protocol("push", 1.3, seeds=3, duration=2.5, step=5)
    with pytest.raises(rb.ProtocolError, match=r"push.partial.json: protocol.step: .*another protocol"):
        rb.TrialLog(path, other, walker)
    with pytest.raises(rb.ProtocolError, match=r"push.partial.json: walker.model_sha256: "):
        rb.TrialLog(path, protocol, {**walker, "model_sha256": "c"})
    log.remove()
    assert not path.exists()
    path.write_text("{")
    with pytest.raises(rb.ProtocolError, match=r"push.partial.json: not a protocol's kept trials"):
        rb.TrialLog(path, protocol, walker)


def test_median_level():
    assert rb.median_level([3, 1, 2]) == 2
    assert rb.median_level([4, 1, 2, 3]) == 2.5
    assert rb.median_level([None, 5, 7]) == 5
    assert rb.median_level([None, None, 7]) is None  # the median seed is below --start
    assert rb.median_level([None, 5, 6, 7]) == 5.5
    assert rb.median_level([None, None, 6, 7]) is None
    assert rb.median_level([]) is None


def test_capped_when_every_level_is_survived():
    simulator_for, log = simulators(lambda sc, _: False)
    protocol = rb.Protocol("push", 1.3, seeds=2, start=100, step=50, maximum=200, duration=2.0)
    result = rb.run_protocol(protocol, {}, simulator_for)
    assert result["per_seed_max"] == [200, 200] and result["median"] == 200
    assert result["seeds_capped"] == 2 and all(s["first_failure"] is None for s in result["seeds"])
    assert len(log) == 6


def test_opensim_error_is_a_failed_trial():
    def falls(scenario, _):
        if push_magnitude(scenario) >= 30:
            raise RuntimeError("SimTK Exception thrown at State.cpp\nmore")
        return False

    simulator_for, _ = simulators(falls)
    result = rb.run_protocol(rb.Protocol("push", 1.3, seeds=1, duration=2.0), {}, simulator_for)
    last = result["seeds"][0]["trials"][-1]
    assert result["per_seed_max"] == [20]
    assert last["failure"] == "opensim_error" and last["message"] == "SimTK Exception thrown at State.cpp"


# ------------------------------------------------------------------ the perturbations
def test_push_trial_schedule_and_directions():
    p = rb.Protocol("push", 1.3, duration=10.0)
    scenario, terrain = p.trial(80.0, seed=3)
    assert terrain is None and scenario.speed == 1.3 and scenario.duration == 10.0
    starts = [q.start for q in scenario.pushes]
    assert starts == pytest.approx([1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert all(q.duration == 0.2 and q.force[1] == 0 for q in scenario.pushes)
    assert [np.linalg.norm(q.force) for q in scenario.pushes] == pytest.approx([80.0] * 9)
    same_seed, _ = p.trial(120.0, seed=3)
    assert _same_directions(scenario, same_seed)  # a higher level: the same pushes, stronger
    assert not _same_directions(scenario, p.trial(80.0, seed=4)[0])
    assert scenario.heading_at(7.0) == 0.0
    assert len(rb.Protocol("push", 1.3, duration=1.2).trial(10, 1)[0].pushes) == 1


def test_slope_trials_build_their_terrain_and_scale_one_pattern():
    simulator_for, log = simulators(lambda sc, terrain: terrain.max_slope_deg >= 3)
    protocol = rb.Protocol("slope", 1.3, seeds=2, duration=4.0)
    result = rb.run_protocol(protocol, {}, simulator_for)
    assert result["per_seed_max"] == [2, 2] and result["median"] == 2
    terrains = [t for _, t, _ in log]
    assert [t.max_slope_deg for t in terrains] == [1, 2, 3, 1, 2, 3]
    assert terrains[0].length == pytest.approx(1.3 * 4.0 * 1.5 + 2.0)
    # one seed, one pattern: level 2 is level 1 twice as steep; another seed, another pattern
    assert np.allclose(np.degrees(terrains[1].slopes), 2 * np.degrees(terrains[0].slopes))
    assert not np.allclose(terrains[0].slopes, terrains[3].slopes)
    assert all(not sc.pushes and sc.heading_at(5.0) == 0.0 for sc, _, _ in log)


def test_turn_rate_and_heading_error_rule():
    protocol = rb.Protocol("turn", 1.3, seeds=1, duration=12.0, start=4, step=4, maximum=12)
    scenario, terrain = protocol.trial(8.0, seed=1)
    assert terrain is None and not scenario.pushes
    path = [math.degrees(scenario.heading_at(t)) for t in np.arange(0, 12, 0.01)]
    rates = np.abs(np.diff(path)) / 0.01
    assert rates.max() == pytest.approx(8.0, rel=1e-6) and path[0] == 0.0

    # a stride-periodic trunk yaw swing of +-17 deg around the target passes; a steady lag
    # that grows with the rate (1.5 s x rate) fails from 8 deg/s on (12 deg of error)
    swing = lambda t: 17.0 * math.sin(2 * math.pi * t / 0.8)  # noqa: E731
    simulator_for, _ = simulators(lambda sc, _: False, swing)
    result = rb.run_protocol(protocol, {}, simulator_for)
    assert result["per_seed_max"] == [12] and result["seeds_capped"] == 1
    trial = result["seeds"][0]["trials"][0]
    assert trial["heading_error_mean_deg"] < 4.0  # the swing is averaged out...
    assert trial["heading_error_raw_mean_deg"] == pytest.approx(17.0 * 2 / math.pi, rel=0.02)  # ...not here

    current = {}

    def lag(t):
        return 1.5 * current["rate"]

    def falls(scenario, _):
        current["rate"] = scenario.heading.turn_rate * 180 / math.pi
        return False

    simulator_for, _ = simulators(falls, lag)
    result = rb.run_protocol(protocol, {}, simulator_for)
    trials = result["seeds"][0]["trials"]
    assert [t["level"] for t in trials] == [4, 8] and result["per_seed_max"] == [4]
    assert trials[0]["heading_error_mean_deg"] == pytest.approx(6.0)
    assert trials[1]["failure"] == "heading_error" and trials[1]["termination_reason"] is None
    assert trials[1]["heading_error_mean_deg"] == pytest.approx(12.0)


def test_heading_error_meter_window_and_settle():
    meter = rb.HeadingErrorMeter(trunk=0, heading=lambda t: 0.0, settle=2.0, window=1.0, control_interval=0.5)
    for k, err in enumerate([0, 0, 0, 0, 10, 20, -30, 30]):  # t = 0, 0.5, ... 3.5 s
        meter(SimpleNamespace(t=0.5 * k, body_R=rot_y(-math.radians(err))[None]), None, None, None)
    # trailing 2-step averages at t = 2, 2.5, 3, 3.5: 5, 15, -5, 0
    assert meter.smoothed() == pytest.approx([5, 15, 5, 0])
    assert meter.summary()["heading_error_mean_deg"] == pytest.approx(6.25)
    assert meter.summary()["heading_error_raw_mean_deg"] == pytest.approx(22.5)
    assert meter.summary()["heading_error_raw_max_deg"] == pytest.approx(30)


def test_speed_trials_ramp_the_target_and_step_up_the_change():
    """faster / slower: the target held to 2 s, then changed linearly by the level's percent by
    8 s and held; deterministic, so one seed by default; slower stops short of 100 %."""
    faster = rb.Protocol("faster", 2.0)
    assert (faster.start, faster.step, faster.duration, faster.seeds, faster.unit) == (5.0, 5.0, 10.0, 1, "%")
    scenario, terrain = faster.trial(15.0, seed=1)
    assert terrain is None and not scenario.pushes and scenario.heading_at(5.0) == 0.0
    assert [scenario.speed_at(t) for t in (0.0, 2.0, 5.0, 8.0, 10.0)] == pytest.approx(
        [2.0, 2.0, 2.15, 2.3, 2.3]
    )
    slower, _ = rb.Protocol("slower", 2.0).trial(15.0, seed=1)
    assert slower.speed_at(9.0) == pytest.approx(1.7)
    assert list(rb.Protocol("slower", 2.0, start=80, step=10).levels()) == [80, 90]
    assert rb.Protocol("faster", 2.0).as_dict()["speed_change"]["start"] == 2.0
    # stepped as any test: the last change walked before the first fall
    simulator_for, log = simulators(lambda sc, terrain: sc.speed_at(10.0) > 2.25)
    result = rb.run_protocol(rb.Protocol("faster", 2.0), {}, simulator_for)
    assert result["per_seed_max"] == [10.0] and result["median"] == 10.0 and len(log) == 3
    # each trial records the target after the change and the speed walked after it (the fake
    # simulator's centre of mass stands still); a seed does not change a trial
    trials = result["seeds"][0]["trials"]
    assert [t["target_after_change"] for t in trials] == pytest.approx([2.1, 2.2, 2.3])
    assert [t["speed_after_change"] for t in trials] == [0.0, 0.0, None]
    assert (
        rb.Protocol("faster", 2.0).trial(10.0, 1)[0].speed_change
        == rb.Protocol("faster", 2.0).trial(10.0, 2)[0].speed_change
    )
    assert list(rb.Protocol("slower", 2.0, start=5, step=5).levels())[-1] == 95


def test_protocol_rejects_bad_settings_naming_the_option():
    cases = [
        (dict(test="jump"), "--test"),
        (dict(speed=0.0), "--speed"),
        (dict(duration=-1.0), "--duration"),
        (dict(duration=1.0), "--duration"),  # no push before the end
        (dict(test="turn", duration=2.0), "--duration"),
        (dict(test="slope", duration=60.0), "--duration"),  # more ramps than RampTerrain allows
        (dict(seeds=0), "--seeds"),
        (dict(first_seed=-1), "--first-seed"),
        (dict(start=-5.0), "--start"),
        (dict(start=math.nan), "--start"),
        (dict(step=0.0), "--step"),
        (dict(start=50.0, maximum=40.0), "--max"),
        (dict(test="slope", start=45.0), "--start"),
        (dict(test="faster", duration=7.0), "--duration"),  # the ramp ends at 8 s
        (dict(test="slower", start=100.0), "--start"),  # a target of 0
    ]
    for kwargs, option in cases:
        args = {"test": "push", "speed": 1.3, **kwargs}
        with pytest.raises(rb.ProtocolError, match=f"^{option}:"):
            rb.Protocol(**args)


# ------------------------------------------------------------------ the command
def _robustness(*args):
    return main(["robustness", *map(str, args)])


def _listing(folder):
    return sorted(p.name for p in folder.iterdir())


def test_missing_run_folder(tmp_path, capfd, one_error):
    line = one_error(_robustness(tmp_path / "nope", "--test", "push", "-o", tmp_path / "r.json"))
    assert str(tmp_path / "nope") in line and "run folder not found" in line
    assert _listing(tmp_path) == []


def test_run_folder_without_best(tmp_path, capfd, one_error):
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(RUN / "optimized.osim", run)
    line = one_error(_robustness(run, "--test", "slope", "-o", tmp_path / "r.json"))
    assert str(run / "best.json") in line and "not found" in line
    assert _listing(tmp_path) == ["run"]


def test_bad_numbers_are_one_line_before_anything(tmp_path, capfd, one_error):
    out = tmp_path / "r.json"
    for extra, option in [
        (["--seeds", "0"], "--seeds"),
        (["--step", "-10"], "--step"),
        (["--start", "50", "--max", "20"], "--max"),
        (["--speed", "-1"], "--speed"),
        (["--speed", "1.3", "--duration", "nan"], "--duration"),
    ]:
        line = one_error(_robustness(RUN, "--test", "push", "-o", out, *extra))
        assert line.startswith("musclewalk robustness: error: " + option), line
    line = one_error(_robustness(RUN, "--test", "slope", "-o", out, "--start", "50"))
    assert "--start" in line and "45" in line
    line = one_error(_robustness(RUN, "--test", "slope", "-o", out, "--duration", "100"))
    assert "--duration" in line and "ramps" in line
    assert _listing(tmp_path) == []


def test_output_checks(tmp_path, capfd, one_error):
    folder = tmp_path / "dir"
    folder.mkdir()
    line = one_error(_robustness(RUN, "--test", "push", "-o", folder))
    assert str(folder) in line and "-o" in line and "directory" in line
    run = tmp_path / "run"
    shutil.copytree(RUN, run, ignore=shutil.ignore_patterns("earlier", "model", "checkpoint.pkl"))
    before = (run / "best.json").read_bytes()
    line = one_error(_robustness(run, "--test", "push", "-o", run / "best.json", "--seeds", "1"))
    assert "-o is an input" in line and (run / "best.json").read_bytes() == before
    # a best.json without a target speed needs --speed
    data = json.loads(before)
    del data["speed"]
    (run / "best.json").write_text(json.dumps(data))
    line = one_error(_robustness(run, "--test", "push", "-o", tmp_path / "r.json"))
    assert (
        line.startswith("musclewalk robustness: error: --speed: required") and str(run / "best.json") in line
    )
    assert not (tmp_path / "r.json").exists()


def test_kept_trials_of_another_protocol_are_one_error_line(tmp_path, capfd, one_error):
    out = tmp_path / "push.json"
    walker = rb.Walker.load(RUN)
    rb.TrialLog(rb.partial_path(out), rb.Protocol("push", 1.3, seeds=2), rb.walker_identity(walker)).add(
        1, {"level": 10.0, "survived": True}, 1.0
    )
    line = one_error(_robustness(RUN, "--test", "push", "-o", out, "--seeds", "3"))
    assert str(rb.partial_path(out)) in line and "protocol.seeds: " in line and "delete it" in line
    assert _listing(tmp_path) == ["push.partial.json"]


def test_real_push_protocol_on_the_committed_humanlegs(tmp_path, capfd):
    """One seed of 1.5 s trials from 600 N in 200 N steps (at most 5 trials, about 2 s each):
    the committed walker survives some and the stepping stops at its first fall or the cap."""
    out = tmp_path / "push.json"
    code = _robustness(
        RUN,
        "--test",
        "push",
        "-o",
        out,
        "--seeds",
        "1",
        "--duration",
        "1.5",
        "--start",
        "600",
        "--step",
        "200",
        "--max",
        "1400",
    )
    captured = capfd.readouterr()
    assert code == 0, captured.err
    result = json.loads(out.read_text())
    assert result["creature"] == "HumanLegs" and result["test"] == "push"
    protocol = result["protocol"]
    assert protocol["speed"] == 1.3 and protocol["duration"] == 1.5 and protocol["seed_list"] == [1]
    (seed,) = result["seeds"]
    trials = seed["trials"]
    levels = [t["level"] for t in trials]
    assert levels == [600, 800, 1000, 1200, 1400][: len(levels)]
    # every trial but the last survived; the last failed unless the stepping hit --max
    assert all(t["survived"] for t in trials[:-1])
    if trials[-1]["survived"]:
        assert seed["capped"] and levels[-1] == 1400
    else:
        assert trials[-1]["termination_reason"] and trials[-1]["termination_time"] <= 1.5
        assert seed["first_failure"] == levels[-1]
    survived = [t["level"] for t in trials if t["survived"]]
    assert seed["max_survived"] == (survived[-1] if survived else None) == result["median"]
    assert not rb.partial_path(out).exists()  # the kept trials go with the output written
    assert all(t["simulated_time"] == 1.5 for t in trials if t["survived"])
    (line,) = captured.out.strip().splitlines()
    assert line.startswith("HumanLegs push: median") and str(out) in line
    assert len(captured.err.strip().splitlines()) == len(trials)  # one progress line per trial
