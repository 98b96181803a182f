"""The pieces of a `musclewalk simulate` run, in the sim stage and callable without argparse:
Push.parse, Scenario.for_run, RampTerrain.for_run, load_run_parameters, runner.simulate (OpenSim's
errors as one SimulationError line) and the summary of sim.outputs."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from musclewalk.cli import main
from musclewalk.control.params import ParameterError
from musclewalk.model.meta import load_meta
from musclewalk.sim import runner
from musclewalk.sim.engine import EngineError
from musclewalk.sim.outputs import run_settings, summary_line
from musclewalk.sim.parameters import check_parameter_file, load_run_parameters, parameter_file_speed
from musclewalk.sim.runner import SimulationError, Simulator, simulate
from musclewalk.sim.scenario import PUSH_DURATION, Assist, HeadingPath, Push, Scenario, random_pushes
from musclewalk.sim.terrain import MAX_LENGTH, RampTerrain

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "models" / "optimized" / "HumanLegs-walk-1.3"


# ----------------------------------------------------------------------------- Push.parse
def test_push_parse():
    assert Push.parse("2.0,100,-20") == Push(2.0, (100.0, 0.0, -20.0), PUSH_DURATION)
    assert Push.parse(" 0 , 1e2 ,0") == Push(0.0, (100.0, 0.0, 0.0))


@pytest.mark.parametrize(
    "spec, message",
    [
        ("1,2", "expected START,FX,FZ (s, N, N), got '1,2'"),
        ("1,2,3,4", "expected START,FX,FZ"),
        ("a,2,3", "expected START,FX,FZ"),
        ("", "expected START,FX,FZ"),
        ("-1,2,3", "expected START >= 0 and finite FX, FZ (s, N, N), got '-1,2,3'"),
        ("nan,2,3", "expected START >= 0 and finite FX"),
        ("1,inf,3", "expected START >= 0 and finite FX"),
        ("1,2,-inf", "expected START >= 0 and finite FX"),
    ],
)
def test_push_parse_refuses(spec, message):
    with pytest.raises(ValueError) as info:
        Push.parse(spec)
    assert str(info.value).startswith(message)
    assert "--push" not in str(info.value)  # the option's name is the CLI's to add


# ----------------------------------------------------------------------- Scenario.for_run
def test_scenario_for_run_defaults():
    s = Scenario.for_run(1.3, 10.0)
    assert (s.speed, s.duration, s.pushes, s.terminate) == (1.3, 10.0, [], True)
    assert s.heading_at(0.0) == s.heading_at(7.0) == 0.0


def test_scenario_for_run_pushes_heading_and_seed():
    given = [Push(0.5, (10.0, 0.0, 0.0))]
    s = Scenario.for_run(
        1.2,
        8.0,
        heading_deg=20.0,
        turn_rate_deg=12.0,
        pushes=given,
        n_random_pushes=3,
        push_magnitude=80.0,
        seed=4,
        control_interval=0.0025,
        terminate=False,
    )
    # the given pushes first, then the random ones of the seed; the caller's list untouched
    assert s.pushes == given + random_pushes(3, 80.0, 4)
    assert given == [Push(0.5, (10.0, 0.0, 0.0))]
    assert (s.control_interval, s.terminate) == (0.0025, False)
    expected = HeadingPath(initial=math.radians(20.0), turn_rate=math.radians(12.0), seed=4, duration=8.0)
    times = np.arange(0, 8.0, 0.05)
    assert [s.heading_at(t) for t in times] == [expected(t) for t in times]
    assert s.heading_at(0.0) == pytest.approx(math.radians(20.0), abs=math.radians(0.2))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(speed=0.0, duration=1.0), "speed"),
        (dict(speed=1.0, duration=1e6), "duration"),
        (dict(speed=1.0, duration=1.0, control_interval=0.01), "control interval"),
    ],
)
def test_scenario_for_run_validates(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Scenario.for_run(**kwargs)


# --------------------------------------------------------------------- RampTerrain.for_run
def test_terrain_for_run_length_rule():
    assert RampTerrain.run_length(1.3, 10.0) == 1.3 * 10.0 * 1.5 + 2.0
    t = RampTerrain.for_run(5.0, 1.3, 10.0, seed=3)
    same = RampTerrain(5.0, seed=3, length=1.3 * 10.0 * 1.5 + 2.0)
    assert t.length == same.length and t.n_segments == same.n_segments == 22 + 1
    assert np.array_equal(t.slopes, same.slopes) and t.max_slope_deg == 5.0


def test_terrain_for_run_refuses():
    with pytest.raises(ValueError, match=r"^terrain slope: must be in \[0, 45\)"):
        RampTerrain.for_run(50.0, 1.3, 1.0)
    with pytest.raises(ValueError, match=r"^terrain length: 182 m .*at most 100 m"):
        RampTerrain.for_run(5.0, 1.2, 100.0)
    assert RampTerrain.for_run(0.0, 1.0, 0.5).length == 2.75
    assert RampTerrain.for_run(5.0, 1.0, 64.0).length == 98.0 <= MAX_LENGTH


# ---------------------------------------------------------------------- load_run_parameters
def test_load_run_parameters_without_a_file_is_the_defaults():
    # nothing is read: neither the metadata nor the model are looked at
    assert load_run_parameters(None, None, "missing.osim") == {}


def test_load_run_parameters_checks_against_the_model(tmp_path):
    model, best = COMMITTED / "optimized.osim", COMMITTED / "best.json"
    meta = load_meta(model)
    values = load_run_parameters(best, meta, model)
    data = json.loads(best.read_text())["parameters"]
    assert values == {**data["controller"], **data["initial_state"]}
    # another creature's file: refused naming the file
    data = json.loads(best.read_text())
    data["creature"] = "Ostrich"
    other = tmp_path / "ostrich.json"
    other.write_text(json.dumps(data))
    with pytest.raises(ParameterError, match=f"{other}: creature: the parameters are of 'Ostrich'"):
        load_run_parameters(other, meta, model)
    # missing parameters: refused unless fill_defaults
    del data["parameters"]["controller"][next(iter(data["parameters"]["controller"]))]
    data["creature"] = "HumanLegs"
    half = tmp_path / "half.json"
    half.write_text(json.dumps(data))
    with pytest.raises(ParameterError, match="missing"):
        load_run_parameters(half, meta, model)
    filled = load_run_parameters(half, meta, model, fill_defaults=True)
    assert len(filled) == len(values) - 1
    assert filled == check_parameter_file(half, meta, _tree(model), _control(meta), fill_defaults=True)


def _tree(model):
    from musclewalk.model.vectors import parse_osim

    return parse_osim(model)


def _control(meta):
    from musclewalk.constants import CONTROL_INTERVAL
    from musclewalk.sim.bridge import control_model_from_meta

    return control_model_from_meta(meta, CONTROL_INTERVAL)


# -------------------------------------------------------------------------- runner.simulate
class _FakeSimulator:
    """Stands in for Simulator: records its calls; ``fail`` says where to raise what."""

    fail: dict = {}
    made: list = []

    def __init__(self, model, meta=None, control_interval=None, terrain=None, accuracy=None, fixed_step=None):
        if "init" in self.fail:
            raise self.fail["init"]
        self.calls = [("init", model, meta, control_interval, terrain)]
        _FakeSimulator.made.append(self)

    def split(self, params, source="parameters"):
        self.calls.append(("split", params, source))
        if "split" in self.fail:
            raise self.fail["split"]

    def run(self, scenario, params=None, record=False):
        self.calls.append(("run", scenario, params, record))
        if "run" in self.fail:
            raise self.fail["run"]
        return "result"


@pytest.fixture
def fake_simulator(monkeypatch):
    def make(**fail):
        monkeypatch.setattr(_FakeSimulator, "fail", fail)
        monkeypatch.setattr(_FakeSimulator, "made", [])
        monkeypatch.setattr(runner, "Simulator", _FakeSimulator)
        return _FakeSimulator

    return make


def test_simulate_records_one_run(fake_simulator):
    fake = fake_simulator()
    scenario = Scenario(duration=1.0, control_interval=0.0025)
    sim, result = simulate("m.osim", scenario, {"a": 1.0}, meta="META", terrain="T", source="p.json")
    assert result == "result" and sim is fake.made[0]
    assert sim.calls == [
        ("init", "m.osim", "META", 0.0025, "T"),
        ("split", {"a": 1.0}, "p.json"),
        ("run", scenario, {"a": 1.0}, True),
    ]


def test_simulate_model_opensim_refuses(fake_simulator):
    fake_simulator(init=EngineError("m.osim: OpenSim cannot read the model: bad"))
    with pytest.raises(SimulationError) as info:
        simulate("m.osim", Scenario())
    assert str(info.value) == "m.osim: OpenSim cannot read the model: bad"
    assert isinstance(info.value, ValueError)  # `main` prints it in one line, exit 2


@pytest.mark.parametrize(
    "error, line",
    [
        (
            RuntimeError("SimTK Exception thrown\n  at line 3\n"),
            "m.osim: OpenSim failed while simulating: SimTK Exception thrown",
        ),
        (RuntimeError("  \n"), "m.osim: OpenSim failed while simulating: RuntimeError"),
        (EngineError("no state"), "m.osim: OpenSim failed while simulating: no state"),
    ],
)
def test_simulate_state_opensim_refuses_is_one_line(fake_simulator, error, line):
    fake_simulator(run=error)
    with pytest.raises(SimulationError) as info:
        simulate(Path("m.osim"), Scenario())
    assert str(info.value) == line


@pytest.mark.parametrize(
    "where, error", [("split", ParameterError("p.json: x: unknown")), ("run", KeyboardInterrupt())]
)
def test_simulate_passes_other_errors_on(fake_simulator, where, error):
    fake = fake_simulator(**{where: error})
    with pytest.raises(type(error)):
        simulate("m.osim", Scenario())
    if where == "split":  # bad parameters: nothing simulated
        assert [c[0] for c in fake.made[0].calls] == ["init", "split"]


def test_cli_opensim_failure_is_one_line(built_models, tmp_path, monkeypatch, one_error):
    def refuse(*args, **kwargs):
        raise RuntimeError("SimTK Exception thrown at State.cpp\nmore detail")

    monkeypatch.setattr(Simulator, "run", refuse)
    out = tmp_path / "run"
    line = one_error(
        main(
            [
                "simulate",
                str(built_models["HumanLegs"]),
                "--speed",
                "1.3",
                "--duration",
                "0.02",
                "--out",
                str(out),
            ]
        )
    )
    assert line == (
        f"musclewalk simulate: error: {built_models['HumanLegs']}: OpenSim failed "
        "while simulating: SimTK Exception thrown at State.cpp"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    "content, speed",
    [
        ({"creature": "HumanLegs", "speed": 1.3, "parameters": {}}, 1.3),
        ({"speed": 2}, 2.0),
        ({"parameters": {}}, None),  # a hand-written parameter file: no target speed
        ({"speed": True}, None),
        ({"speed": -1.0}, None),
        ({"speed": "fast"}, None),
        ([1, 2], None),
    ],
)
def test_parameter_file_speed(tmp_path, content, speed):
    path = tmp_path / "best.json"
    path.write_text(json.dumps(content))
    assert parameter_file_speed(path) == speed


def test_parameter_file_speed_names_the_file(tmp_path):
    with pytest.raises(ParameterError, match="missing.json: parameter file not found"):
        parameter_file_speed(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ParameterError, match="bad.json: not valid JSON"):
        parameter_file_speed(bad)


def test_cli_simulate_takes_the_speed_of_its_params(tmp_path, monkeypatch):
    """Without --speed, simulate runs at the target speed the best.json was optimized for."""
    seen = []

    def record(model, scenario, *args, **kwargs):
        seen.append(scenario.speed)
        raise KeyboardInterrupt  # stop before anything is written

    monkeypatch.setattr(runner, "simulate", record)
    best = COMMITTED / "best.json"
    args = ["simulate", str(COMMITTED / "optimized.osim"), "--params", str(best), "--duration", "0.01"]
    main([*args, "--out", str(tmp_path / "a")])
    main([*args, "--speed", "1.1", "--out", str(tmp_path / "b")])
    assert seen == [json.loads(best.read_text())["speed"], 1.1]
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_cli_simulate_without_a_speed_is_one_line(built_models, tmp_path, one_error):
    model = str(built_models["HumanLegs"])
    line = one_error(main(["simulate", model, "--duration", "0.01", "--out", str(tmp_path / "a")]))
    assert line == (
        "musclewalk simulate: error: --speed: required without --params (the template defaults have "
        "no target speed)"
    )
    params = tmp_path / "hand.json"
    params.write_text(json.dumps({"parameters": {}}))
    line = one_error(
        main(["simulate", model, "--params", str(params), "--duration", "0.01", "--out", str(tmp_path / "a")])
    )
    assert line == (
        f"musclewalk simulate: error: --speed: required ({params} has no target speed, key 'speed')"
    )
    assert not (tmp_path / "a").exists()


# ---------------------------------------------------------------------------- the summary
def test_run_settings():
    pushes = [Push(1.0, (10.0, 0.0, 5.0))]
    scenario = Scenario(pushes=pushes)
    assert run_settings(scenario) == {
        "parameters": "defaults",
        "pushes": [{"start": 1.0, "force": (10.0, 0.0, 5.0), "duration": PUSH_DURATION}],
        "heading_deg": 0.0,
        "turn_rate_deg_s": 0.0,
        "seed": 0,
        "terrain_max_slope_deg": None,
        "integrator_accuracy": None,
        "assist": None,
    }
    settings = run_settings(
        Scenario(assist=Assist(upright=0.5)),
        Path("run/best.json"),
        heading_deg=20.0,
        turn_rate_deg=12.0,
        seed=3,
        terrain_slope_deg=5.0,
        integrator_accuracy=0.003,
    )
    assert settings == {
        "parameters": str(Path("run/best.json").absolute()),  # found from any working directory
        "pushes": [],
        "heading_deg": 20.0,
        "turn_rate_deg_s": 12.0,
        "seed": 3,
        "terrain_max_slope_deg": 5.0,
        "integrator_accuracy": 0.003,
        "assist": {"upright": 0.5, "support": 0.0},
    }
    json.dumps(settings)


def test_summary_line():
    summary = {
        "terminated": False,
        "termination_reason": None,
        "simulated_time": 10.0,
        "distance": 12.346,
        "mean_forward_speed": 1.234,
        "wall_time": 31.26,
    }
    assert summary_line("Human", summary, Path("run")) == (
        "Human: ran the full 10.00 s; distance 12.35 m, mean forward speed 1.23 m/s; wall 31.3 s; wrote run"
    )
    summary.update(terminated=True, termination_reason="fall", simulated_time=0.384)
    assert summary_line("Human", summary, "out/x") == (
        "Human: terminated by fall at 0.38 s; distance 12.35 m, mean forward speed 1.23 m/s; "
        "wall 31.3 s; wrote out/x"
    )
