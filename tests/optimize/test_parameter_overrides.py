"""The search space as data: an experiment file's `parameters:` narrows a parameter's bounds or
fixes it (name or fnmatch pattern); a fixed parameter leaves the CMA-ES vector and keeps its value
in every evaluation, in best.json and in optimized.osim; the overrides belong to the run's
settings, so a resume uses the same space and refuses another one."""

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from musclewalk.model.meta import load_meta
from musclewalk.model.vectors import ModelVectors, parse_osim
from musclewalk.optimize.driver import CHECKPOINT, OptimizationError, Settings, load_checkpoint
from musclewalk.optimize.experiment import Experiment, ExperimentError
from musclewalk.optimize.runs import run_experiment, stage_settings, start_run
from musclewalk.optimize.space import SCALE_DIVISOR, OverrideError, ParameterSpace, without_starts

REPO = Path(__file__).resolve().parents[2]
COMMITTED_BEST = REPO / "models" / "optimized" / "HumanLegs-walk-1.3" / "best.json"
ABLATION = {"routing.*": {"fixed": 0.5}, "knee.theta": {"lower": 0.0}}


def write(path, data):
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def experiment(tmp_path, parameters, **extra):
    return write(
        tmp_path / "ablation.yaml",
        {"creature": "HumanLegs", "speed": 1.3, "parameters": parameters, **extra},
    )


@pytest.fixture(scope="module")
def full_space():
    return ParameterSpace.of_creature("HumanLegs")


# ---------------------------------------------------------------- the experiment file


@pytest.mark.parametrize(
    "parameters, key, message",
    [
        ([1], "parameters", "expected a mapping"),
        ({"routing.*": 0.5}, "parameters[routing.*]", "expected {lower"),
        ({"routing.*": {}}, "parameters[routing.*]", "expected {lower"),
        ({"routing.*": {"fixd": 0.5}}, "parameters[routing.*].fixd", "unknown key"),
        ({"routing.*": {"fixed": True}}, "parameters[routing.*].fixed", "expected a finite number"),
        ({"routing.*": {"fixed": ".5"}}, "parameters[routing.*].fixed", "expected a finite number"),
        (
            {"routing.*": {"fixed": 0.5, "lower": 0.1}},
            "parameters[routing.*].fixed",
            "takes no other field",
        ),
        ({"routing.*": {"hold": 1}}, "parameters[routing.*].hold", "expected true"),
        ({"routing.*": {"hold": True, "start": 0.5}}, "parameters[routing.*].hold", "takes no other field"),
        ({"knee_overextension.*": {"free": 1}}, "parameters[knee_overextension.*].free", "expected true"),
        ({"knee.thetaa": {"lower": 0.0}}, "parameters[knee.thetaa]", "matches no parameter"),
        ({"nothing.*": {"fixed": 0.5}}, "parameters[nothing.*]", "matches no parameter"),
        ({"knee.theta": {"lower": -1.0}}, "parameters[knee.theta].lower", "-1 is outside the bounds"),
        ({"knee.theta": {"upper": 2.0}}, "parameters[knee.theta].upper", "2 is outside the bounds"),
        ({"knee.theta": {"lower": 0.5, "upper": 0.2}}, "parameters[knee.theta].lower", "lower 0.5 >= upper"),
        ({"knee.theta": {"lower": 1.5}}, "parameters[knee.theta].lower", "lower 1.5 >= upper 1.5"),
        ({"routing.*": {"fixed": 1.5}}, "parameters[routing.*].fixed", "1.5 is outside the bounds [0, 1]"),
        (
            {"knee.*": {"lower": 0.0}, "knee.theta": {"upper": 1.0}},
            "parameters[knee.theta]",
            "also matched by parameters[knee.*]",
        ),
    ],
)
def test_a_bad_parameters_key_names_file_and_key(tmp_path, parameters, key, message):
    path = experiment(tmp_path, parameters)
    with pytest.raises(ExperimentError) as info:
        Experiment.load(path)
    text = str(info.value)
    assert text.startswith(f"{path}: {key}: "), text
    assert message in text and "\n" not in text


def test_parameters_of_an_unknown_creature_name_the_creature(tmp_path):
    path = write(tmp_path / "e.yaml", {"creature": "NoSuch", "speed": 1.3, "parameters": ABLATION})
    with pytest.raises(ExperimentError, match=rf"^{path}: creature: .*unknown creature 'NoSuch'"):
        Experiment.load(path)


def test_the_overrides_are_stored_as_floats_and_reach_every_stage(tmp_path):
    path = experiment(
        tmp_path,
        {"routing.*": {"fixed": 0.5}, "knee.theta": {"lower": 0}},
        stages=[{"name": "a"}, {"name": "b"}],
    )
    exp = Experiment.load(path)
    assert exp.parameters == ABLATION
    assert all(isinstance(v, float) for spec in exp.parameters.values() for v in spec.values())
    assert [stage_settings(exp, i).parameters for i in (0, 1)] == [ABLATION, ABLATION]
    # no key, or an empty one: the full space, as every committed experiment file
    for parameters in (None, {}):
        assert Experiment.load(experiment(tmp_path, parameters)).parameters == {}
    for committed in sorted((REPO / "config" / "experiments").glob("*.yaml")):
        exp = Experiment.load(committed)
        # the first stage runs in its space: the file's with the stage's own over them
        assert stage_settings(exp, 0).parameters == exp.stages[0].parameters, committed


# ---------------------------------------------------------------- the space


def test_fixed_parameters_leave_the_cma_vector(full_space):
    space = ParameterSpace.of_creature("HumanLegs", ABLATION)
    routing = [n for n in full_space.names if n.startswith("routing.")]
    assert len(routing) == 33
    assert list(space.fixed) == routing and set(space.fixed.values()) == {0.5}
    assert len(space) == len(full_space) - len(routing)
    assert space.names == full_space.names  # every parameter is still named
    assert [e.name for e in space.optimized] == [
        e.name for e in full_space.optimized if e.name not in space.fixed
    ]
    for arr in (space.initial, space.scale, space.lower_x, space.upper_x):
        assert arr.shape == (len(space),)
    assert "muscle_geometry" not in space.group_counts()
    assert sum(space.group_counts().values()) == len(space)
    rng = np.random.default_rng(1)
    for x in (np.zeros(len(space)), rng.uniform(space.lower_x, space.upper_x), np.full(len(space), 50.0)):
        values = space.values(x)
        assert list(values) == space.names
        assert all(values[n] == 0.5 for n in routing)
    # a fixed name in a values dict does not move the vector
    x = space.x_from_values({routing[0]: 0.9, "knee.theta": 0.3})
    assert np.count_nonzero(x) == 1
    assert space.values(x)["knee.theta"] == pytest.approx(0.3)


def test_narrowed_bounds_are_the_parameters_bounds(full_space):
    space = ParameterSpace.of_creature("HumanLegs", {"knee.theta": {"lower": 0.1, "upper": 1.0}})
    assert len(space) == len(full_space) and not space.fixed
    assert space.narrowed == {"knee.theta": (0.1, 1.0)}
    i = [e.name for e in space.optimized].index("knee.theta")
    own = full_space.optimized[i]
    assert (own.lower, own.upper, own.default) == (pytest.approx(-0.3), pytest.approx(1.5), 0.0)
    e = space.optimized[i]
    assert (e.lower, e.upper) == (0.1, 1.0)
    assert e.default == 0.1  # the default lies below: the run starts at the nearest bound
    # the scale follows the narrowed range, so sigma explores the same fraction of it
    assert space.scale[i] == pytest.approx(0.9 / SCALE_DIVISOR)
    assert space.upper_x[i] - space.lower_x[i] == pytest.approx(SCALE_DIVISOR)
    assert space.values(np.zeros(len(space)))["knee.theta"] == 0.1
    assert space.values(np.full(len(space), -100.0))["knee.theta"] == 0.1
    assert space.values(np.full(len(space), 100.0))["knee.theta"] == pytest.approx(1.0)
    # every other coordinate is the full space's
    others = np.arange(len(space)) != i
    for name in ("initial", "scale", "lower_x", "upper_x"):
        assert np.array_equal(getattr(space, name)[others], getattr(full_space, name)[others]), name


def test_without_overrides_the_space_is_unchanged(full_space):
    meta_space = ParameterSpace.of_creature("HumanLegs", {})
    x = np.random.default_rng(2).uniform(full_space.lower_x, full_space.upper_x)
    assert meta_space.values(x) == full_space.values(x)
    assert len(full_space) == len(full_space.names) - len(full_space.off) == 125
    assert not full_space.fixed and not full_space.narrowed and full_space.describe_overrides() == []


def test_nothing_left_to_optimize_is_refused(full_space):
    everything = {n: {"fixed": e.default} for n, e in zip(full_space.names, full_space.entries)}
    with pytest.raises(OverrideError, match="^parameters: every parameter is fixed"):
        ParameterSpace.of_creature("HumanLegs", everything)


def test_bad_overrides_in_settings_are_refused_before_anything_is_built(humanlegs_osim, tmp_path):
    out = tmp_path / "run"
    settings = Settings(model="", speed=1.3, parameters={"knee.theta": {"lower": "0"}})
    with pytest.raises(OptimizationError, match=r"parameters\[knee.theta\].lower: expected a finite"):
        start_run(str(humanlegs_osim), out, settings)
    settings = Settings(model="", speed=1.3, parameters={"kne.theta": {"lower": 0.0}})
    with pytest.raises(OptimizationError, match=r"parameters\[kne.theta\]: matches no parameter"):
        start_run(str(humanlegs_osim), out, settings)
    assert not out.exists()


# ---------------------------------------------------------------- a real run


def test_an_ablation_run_holds_its_fixed_values_and_resumes_with_them(tmp_path):
    """routing fixed at the centre of its region and the knee target kept in flexion, warm-started
    from the committed HumanLegs (routing off-centre, knee.theta at -0.3)."""
    committed = json.loads(COMMITTED_BEST.read_text())["parameters"]
    assert committed["controller"]["knee.theta"] < 0
    path = experiment(
        tmp_path,
        ABLATION,
        warm_start=str(COMMITTED_BEST),
        defaults={"duration": 0.2, "generations": 1, "popsize": 2, "sigma": 0.3, "seed": 2},
    )
    exp = Experiment.load(path)
    out = tmp_path / "out"
    options = {"evaluator": "serial", "workers": 1}
    # the committed knee.theta lies below the narrowed bound: refused unless --clip-init
    with pytest.raises(OptimizationError, match=r"knee.theta: -0.29\d* is outside the bounds \[0, 1.5\] "):
        run_experiment(exp, out, options, progress=False, report=lambda line: None)
    assert not out.exists()
    lines = []
    options["clip_init"] = True
    state = run_experiment(exp, out, options, progress=False, report=lines.append)
    assert state.generation == 1
    assert lines[1].startswith("HumanLegs: 92 parameters ") and lines[1].endswith(
        "(33 fixed, 1 narrowed by the run's parameters)"
    )
    assert state.es.N == 92  # CMA-ES never sees the fixed coordinates

    def check_outputs():
        best = json.loads((out / "best.json").read_text())["parameters"]
        assert set(best["model"]["routing"].values()) == {0.5}
        assert 0.0 <= best["controller"]["knee.theta"] <= 1.5
        # the other parameters were optimized from the warm start
        assert best["model"]["properties"].keys() == committed["model"]["properties"].keys()
        meta = load_meta(out / "optimized.osim")
        written = ModelVectors(meta).read_values(parse_osim(out / "optimized.osim"), "routing")
        assert written == pytest.approx(best["model"]["routing"], abs=1e-9)
        assert list(written.values()) == pytest.approx([0.5] * 33, abs=1e-9)

    check_outputs()
    log = (out / "log.txt").read_text()
    assert "parameters: 92 " in log and "(92 of 125 parameters optimized)" in log
    assert "fixed parameters (not optimized): 33: routing.hip_flexor_medial.P1.x = 0.5, " in log
    assert "narrowed parameters: 1: knee.theta [0, 1.5]" in log
    assert "warm start: fixed parameters take their fixed value, not the warm start's: 33: routing." in log
    assert "warm start: clipped into narrowed bounds (--clip-init): 1: knee.theta -0.29" in log
    saved, _ = load_checkpoint(out / CHECKPOINT)
    assert saved.parameters == ABLATION
    assert json.loads((out / "settings.json").read_text())["parameters"] == ABLATION

    # running the file again with a larger budget resumes in the same 92-dimensional space
    data = yaml.safe_load(path.read_text())
    data["defaults"]["generations"] = 2
    write(path, data)
    state = run_experiment(Experiment.load(path), out, options, progress=False, report=lines.append)
    assert state.generation == 2 and state.es.N == 92
    check_outputs()
    assert "generations: 2, evaluations: 4" in (out / "log.txt").read_text()
    # ... and another search space is refused, the run left as it was
    before = (out / CHECKPOINT).read_bytes()
    data["parameters"] = {"routing.*": {"fixed": 0.4}, "knee.theta": {"lower": 0.0}}
    data["defaults"]["generations"] = 3
    write(path, data)
    with pytest.raises(OptimizationError, match=r"checkpoint.pkl: parameters: the run's search space"):
        run_experiment(Experiment.load(path), out, options, progress=False, report=lines.append)
    assert (out / CHECKPOINT).read_bytes() == before


def test_held_parameters_keep_the_value_the_run_starts_from(full_space):
    """{hold: true}: fixed at the given hold value (the warm start's), the default without one,
    clipped to the parameter's own bounds; the log names them apart from the fixed ones."""
    routing = [n for n in full_space.names if n.startswith("routing.")]
    overrides = {"routing.*": {"hold": True}, "knee.theta": {"fixed": 0.1}}
    at_defaults = ParameterSpace.of_creature("HumanLegs", overrides)
    assert at_defaults.hold_names == frozenset(routing)
    defaults = dict(zip(full_space.names, (e.default for e in full_space.entries)))
    assert {n: at_defaults.fixed[n] for n in routing} == {n: defaults[n] for n in routing}
    assert len(at_defaults) == len(full_space) - 34
    hold_values = {routing[0]: 0.8, routing[1]: 7.0}  # the second outside [0, 1]
    space = ParameterSpace(full_space.meta, full_space.control_model, overrides, hold_values)
    values = space.values(np.zeros(len(space)))
    assert (values[routing[0]], values[routing[1]]) == (0.8, 1.0)
    assert values[routing[2]] == defaults[routing[2]]
    assert values["knee.theta"] == 0.1
    lines = space.describe_overrides()
    assert lines[0] == "fixed parameters (not optimized): 1: knee.theta = 0.1"
    assert lines[1].startswith(
        f"held parameters (not optimized, at the value the run started from): {len(routing)}: "
        f"{routing[0]} = 0.8, {routing[1]} = 1, "
    )


def test_a_run_holds_the_warm_starts_routing_and_properties_and_resumes_with_them(tmp_path):
    """A fine-tuning run: routing and muscle properties held at the committed HumanLegs' values,
    the controller optimized (125 - 63 = 62 coordinates); a resume holds the same values."""
    committed = json.loads(COMMITTED_BEST.read_text())["parameters"]["model"]
    held = {"routing.*": {"hold": True}, "properties.*": {"hold": True}}
    path = experiment(
        tmp_path,
        held,
        warm_start=str(COMMITTED_BEST),
        defaults={"duration": 0.2, "generations": 1, "popsize": 2, "sigma": 0.3, "seed": 2},
    )
    out = tmp_path / "out"
    options = {"evaluator": "serial", "workers": 1}
    state = run_experiment(Experiment.load(path), out, options, progress=False, report=lambda line: None)
    assert state.es.N == 125 - 33 - 30

    def check_outputs():
        best = json.loads((out / "best.json").read_text())["parameters"]["model"]
        for kind in ("routing", "properties"):
            assert best[kind] == pytest.approx(committed[kind], abs=0.0), kind
        meta = load_meta(out / "optimized.osim")
        written = ModelVectors(meta).read_values(parse_osim(out / "optimized.osim"), "routing")
        assert written == pytest.approx(committed["routing"], abs=1e-9)

    check_outputs()
    log = (out / "log.txt").read_text()
    assert "held parameters (not optimized, at the value the run started from): 63: " in log
    assert "fixed parameters take their fixed value" not in log
    saved, _ = load_checkpoint(out / CHECKPOINT)
    assert saved.parameters == held and len(saved.hold_values) == 63
    assert {n[len("routing.") :]: v for n, v in saved.hold_values.items() if n.startswith("routing.")} == (
        committed["routing"]
    )
    data = yaml.safe_load(path.read_text())
    data["defaults"]["generations"] = 2
    write(path, data)
    state = run_experiment(Experiment.load(path), out, options, progress=False, report=lambda line: None)
    assert state.generation == 2 and state.es.N == 62
    check_outputs()


def test_a_later_stage_keeps_the_features_a_start_value_named_on(full_space):
    """without_starts: the search space of a later stage (it continues the stage before, so no
    start values); a key that only gave a start names its feature parameters as free, each by
    name when the pattern also matched paper parameters (free is refused for those)."""
    specs = full_space.entries
    assert without_starts({"knee.theta": {"lower": 0.0, "start": 0.1}}, specs) == {
        "knee.theta": {"lower": 0.0}
    }
    assert without_starts({"knee.theta": {"start": 0.1}}, specs) == {}
    assert without_starts({"knee_overextension.*": {"start": 1.0}}, specs) == {
        "knee_overextension.*": {"free": True}
    }
    mixed = without_starts({"knee*": {"start": 0.2}}, specs)
    assert mixed == {
        "knee_overextension.gain": {"free": True},
        "knee_overextension.theta_off": {"free": True},
    }
    assert len(ParameterSpace(full_space.meta, full_space.control_model, mixed)) == len(full_space) + 2
