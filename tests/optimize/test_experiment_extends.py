"""An experiment file that ``extends`` another: the extended file's values with its own over them
(defaults key by key, parameters parameter by parameter, everything else whole), relative paths
resolved against the file that names them, and one clear error for a bad chain."""

from pathlib import Path

import pytest
import yaml

from musclewalk.optimize.experiment import Experiment, ExperimentError, is_experiment_file

REPO = Path(__file__).resolve().parents[2]


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def base(folder: Path) -> Path:
    objective = folder / "objectives" / "mine.yaml"
    objective.parent.mkdir(parents=True, exist_ok=True)
    objective.write_text((REPO / "models" / "objectives" / "geijtenbeek2013.yaml").read_text())
    warm = write(folder / "runs" / "best.json", {})
    return write(
        folder / "base.yaml",
        {
            "description": "the previous try",
            "creature": "HumanLegs",
            "variant": "previous",
            "speed": 1.3,
            "objective": "objectives/mine.yaml",
            "warm_start": str(warm.relative_to(folder)),
            "parameters": {"knee.theta": {"lower": 0.0}, "prep.theta0": {"lower": 0.2}},
            "defaults": {"duration": 2, "sigma": 0.1, "popsize": 8},
            "stages": [{"name": "only", "seed": 5, "generations": 3}],
        },
    )


def test_an_extending_file_is_the_extended_one_with_its_own_values_over_it(tmp_path):
    write_base = base(tmp_path / "experiments")
    child = write(
        tmp_path / "elsewhere" / "next.yaml",
        {
            "extends": "../experiments/base.yaml",
            "description": "the next try: one bound more",
            "variant": "next",
            "parameters": {"prep.theta0": {"lower": 0.3}, "gain.knee.kq": {"upper": 0.3}},
            "defaults": {"sigma": 0.05},
            "stages": [{"name": "a", "seed": 7, "generations": 2}, {"name": "b", "seed": 8}],
        },
    )
    assert is_experiment_file(child)
    exp, previous = Experiment.load(child), Experiment.load(write_base)
    assert exp.name == "next" and exp.variant == "next" and exp.description.startswith("the next try")
    assert (exp.path, *exp.extends) == (child.resolve(), write_base.resolve()) and not previous.extends
    assert exp.files[:2] == (child.resolve(), write_base.resolve())
    # paths of the extended file resolve against its own folder, not the extending file's
    assert exp.objective == previous.objective == str(tmp_path / "experiments" / "objectives" / "mine.yaml")
    assert exp.warm_start == previous.warm_start == tmp_path / "experiments" / "runs" / "best.json"
    assert exp.creature == "HumanLegs" and exp.speed == 1.3
    # parameters and defaults key by key, stages whole
    assert exp.parameters == {**previous.parameters, **Experiment.load(child).parameters}
    assert exp.parameters["knee.theta"] == previous.parameters["knee.theta"]
    assert exp.parameters["prep.theta0"] != previous.parameters["prep.theta0"]
    assert "gain.knee.kq" in exp.parameters and "gain.knee.kq" not in previous.parameters
    assert [s.name for s in exp.stages] == ["a", "b"]
    assert [(s.sigma, s.popsize, s.duration) for s in exp.stages] == [(0.05, 8, 2.0)] * 2
    assert [s.seed for s in exp.stages] == [7, 8]


def test_an_extending_key_takes_its_parameters_from_an_extended_pattern(tmp_path):
    """The thirty-third issue-14 try's case: the extended file holds every muscle property, the
    extending one narrows the hamstrings' and keeps the rest held, without copying the space."""
    from musclewalk.optimize.space import ParameterSpace

    first = base(tmp_path)
    child = write(
        tmp_path / "child.yaml",
        {
            "extends": "base.yaml",
            "description": "free one muscle's properties",
            "parameters": {
                "properties.hamstrings.*": {"lower": 0.1, "upper": 0.3},
                "knee.theta": {"lower": 0.1},
            },
        },
    )
    data = yaml.safe_load(first.read_text())
    data["parameters"]["properties.*"] = {"hold": True}
    write(first, data)
    exp = Experiment.load(child)
    names = ParameterSpace.of_creature("HumanLegs").names
    hamstrings = [n for n in names if n.startswith("properties.hamstrings.")]
    held = [n for n in names if n.startswith("properties.") and n not in hamstrings]
    assert hamstrings and held
    assert exp.parameters["properties.hamstrings.*"] == {"lower": 0.1, "upper": 0.3}
    assert "properties.*" not in exp.parameters
    assert all(exp.parameters[n] == {"hold": True} for n in held)
    assert exp.parameters["knee.theta"] == {"lower": 0.1}  # the same key: replaced
    assert exp.parameters["prep.theta0"] == {"lower": 0.2}
    assert exp.stages[0].parameters == exp.parameters
    space = ParameterSpace.of_creature("HumanLegs", exp.parameters)
    assert set(held) <= set(space.hold_names) and not set(hamstrings) & set(space.fixed)
    assert all(space.narrowed[n] == (0.1, 0.3) for n in hamstrings)


def test_overlapping_keys_of_one_file_are_still_refused(tmp_path):
    base(tmp_path)
    child = write(
        tmp_path / "child.yaml",
        {
            "extends": "base.yaml",
            "description": "two keys of its own on one parameter",
            "parameters": {"lift.h*": {"upper": 0.9}, "lift.hip": {"upper": 0.8}},
        },
    )
    message = r"child.yaml: parameters\[lift.hip\]: lift.hip is also matched"
    with pytest.raises(ExperimentError, match=message):
        Experiment.load(child)


def test_a_chain_of_two_resolves_each_level(tmp_path):
    first = base(tmp_path)
    second = write(
        tmp_path / "second.yaml",
        {"extends": "base.yaml", "description": "second", "parameters": {"gain.knee.kq": {"upper": 0.5}}},
    )
    third = write(
        tmp_path / "sub" / "third.yaml",
        {"extends": "../second.yaml", "description": "third", "parameters": {"gain.knee.kq": {"upper": 0.4}}},
    )
    exp = Experiment.load(third)
    assert exp.files[:3] == (third.resolve(), second.resolve(), first.resolve())
    assert (
        exp.parameters["gain.knee.kq"]
        == Experiment.load(
            write(
                tmp_path / "flat.yaml",
                {
                    "extends": "base.yaml",
                    "description": "flat",
                    "parameters": {"gain.knee.kq": {"upper": 0.4}},
                },
            )
        ).parameters["gain.knee.kq"]
    )
    assert "knee.theta" in exp.parameters and exp.stages[0].name == "only"


@pytest.mark.parametrize(
    "child, message",
    [
        ({"extends": "base.yaml"}, "description: required"),
        ({"extends": "missing.yaml", "description": "x"}, "no such experiment file"),
        ({"extends": 3, "description": "x"}, "extends: expected an experiment .yaml file"),
        ({"extends": "base.yaml", "description": "x", "speeed": 2}, "speeed: unknown key"),
        (
            {"extends": "base.yaml", "description": "x", "parameters": {"no.such": {"lower": 0}}},
            "parameters[no.such]",
        ),
    ],
)
def test_bad_extending_files_name_the_file_and_key(tmp_path, child, message):
    base(tmp_path)
    path = write(tmp_path / "child.yaml", child)
    with pytest.raises(ExperimentError) as info:
        Experiment.load(path)
    assert str(info.value).startswith(str(path)) and message in str(info.value)


def test_an_error_in_the_extended_file_names_that_file(tmp_path):
    broken = write(tmp_path / "base.yaml", {"description": "b", "creature": "HumanLegs", "speed": -1})
    child = write(tmp_path / "child.yaml", {"extends": "base.yaml", "description": "c"})
    with pytest.raises(ExperimentError, match=rf"^{broken}: speed: expected a speed > 0"):
        Experiment.load(child)


def test_a_cycle_is_refused(tmp_path):
    write(tmp_path / "a.yaml", {"extends": "b.yaml", "description": "a"})
    write(tmp_path / "b.yaml", {"extends": "a.yaml", "description": "b"})
    with pytest.raises(ExperimentError, match="a cycle"):
        Experiment.load(tmp_path / "a.yaml")


def test_a_committed_try_written_as_an_extension_resumes_its_checkpoint():
    """The seventeenth issue-14 try, once a full file, now extends the sixteenth: its last stage
    has the search space, objective, task and start its run folder's settings were made with (a
    resumed run is refused when they change)."""
    import json

    path = REPO / "config" / "experiments" / "human-walk-1.3-human-gastrocnemius.yaml"
    exp = Experiment.load(path)
    assert (path, *exp.extends) == (
        path,
        REPO / "config" / "experiments" / "human-walk-1.3-human-kneegain.yaml",
    )
    run = REPO / "models" / "optimized" / "in-progress" / "Human-walk-1.3-human-gastrocnemius"
    saved = json.loads((run / "settings.json").read_text())
    last = exp.stages[-1]
    assert last.parameters == saved["parameters"]
    assert (exp.speed, last.duration, last.seed, last.sigma, last.popsize) == (
        saved["speed"],
        saved["duration"],
        saved["seed"],
        saved["sigma"],
        saved["popsize"],
    )
    assert Path(exp.objective).stem == Path(saved["objective"]).stem == "human-landing"
    assert Path(exp.task).stem == Path(saved["task"]).stem == "gentlepush"
    assert exp.warm_start.parent.name == "Human-walk-1.3-human-kneegain"


def test_inherit_starts_false_leaves_the_extended_start_values_to_the_warm_start(tmp_path):
    """A continuation from another run's best: the extended files' start values (one farther up
    the chain, one in the nearer file, one on a feature beyond the paper) would replace the best's
    own; ``inherit_starts: false`` drops them and keeps their bounds and the file's own starts."""
    from musclewalk.optimize.space import ParameterSpace

    first = base(tmp_path)
    data = yaml.safe_load(first.read_text())
    data["parameters"]["prep.theta0"] = {"lower": 0.2, "start": 0.25}
    data["parameters"]["properties.*"] = {"hold": True}
    write(first, data)
    write(
        tmp_path / "second.yaml",
        {
            "extends": "base.yaml",
            "description": "second",
            "parameters": {
                "gain.knee.kq": {"upper": 0.5, "start": 0.4},
                "gain.knee.kw": {"start": 0.1},
                "properties.hamstrings.max_isometric_force": {"start": 0.3},
            },
        },
    )
    warm = write(tmp_path / "runs" / "other.json", {})
    child = {
        "extends": "second.yaml",
        "description": "from another run's best",
        "warm_start": "runs/other.json",
        "parameters": {"lift.hip": {"start": 0.7}},
        "stages": [
            {"name": "a", "seed": 1},
            {"name": "b", "seed": 2, "parameters": {"knee.theta": {"start": 0.1}}},
        ],
    }
    inheriting = Experiment.load(write(tmp_path / "inheriting.yaml", child))
    assert inheriting.parameters["prep.theta0"] == {"lower": 0.2, "start": 0.25}
    assert inheriting.parameters["gain.knee.kq"] == {"upper": 0.5, "start": 0.4}
    exp = Experiment.load(write(tmp_path / "own.yaml", {**child, "inherit_starts": False}))
    assert exp.warm_start == warm
    assert exp.parameters["prep.theta0"] == {"lower": 0.2}
    assert exp.parameters["gain.knee.kq"] == {"upper": 0.5}
    assert exp.parameters["gain.knee.kw"] == {"free": True}  # the feature stays on, started at the best's
    assert exp.parameters["knee.theta"] == {"lower": 0.0}
    # named for its start only, the muscle property stays out of the held pattern: optimized
    hamstrings = "properties.hamstrings.max_isometric_force"
    assert hamstrings not in exp.parameters
    space = ParameterSpace.of_creature("HumanLegs", exp.parameters)
    assert hamstrings not in space.hold_names and hamstrings not in space.fixed
    assert "properties.vasti.max_isometric_force" in space.hold_names
    assert exp.parameters["lift.hip"] == {"start": 0.7}
    assert exp.stages[0].parameters == exp.parameters
    assert exp.stages[1].parameters["knee.theta"] == {"start": 0.1}
    assert "start" not in exp.stages[1].parameters.get("lift.hip", {})
    # a file extending this one keeps its choice only by saying so itself
    again = Experiment.load(write(tmp_path / "again.yaml", {"extends": "own.yaml", "description": "again"}))
    assert again.parameters["prep.theta0"] == {"lower": 0.2}  # dropped below it for good
    assert again.parameters["lift.hip"] == {"start": 0.7}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"extends": "base.yaml", "description": "x", "inherit_starts": "no"},
            "inherit_starts: expected true or false",
        ),
        (
            {"description": "x", "creature": "HumanLegs", "speed": 1.3, "inherit_starts": False},
            "inherit_starts: only for a file that extends another",
        ),
    ],
)
def test_a_bad_inherit_starts_is_one_error_naming_the_file(tmp_path, data, message):
    base(tmp_path)
    path = write(tmp_path / "bad.yaml", data)
    with pytest.raises(ExperimentError, match=rf"bad.yaml: {message}"):
        Experiment.load(path)
