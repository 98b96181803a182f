"""Experiments as data: an experiment file runs its stages in order, each warm-started from the
best of the one before, and running it again resumes instead of starting over."""

import json
from pathlib import Path

import pytest
import yaml

from musclewalk.model.meta import load_meta
from musclewalk.optimize.experiment import Experiment, ExperimentError
from musclewalk.optimize.runs import stage_settings

REPO_EXPERIMENTS = __import__("pathlib").Path(__file__).resolve().parents[2] / "config" / "experiments"


REPO = Path(__file__).resolve().parents[2]


def write(path, data):
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def tiny(tmp_path, **extra):
    return write(
        tmp_path / "tiny.yaml",
        {
            "description": "two tiny stages",
            "creature": "HumanLegs",
            "speed": 1.3,
            "defaults": {"duration": 0.3, "generations": 1, "popsize": 4, "sigma": 0.2},
            "stages": [
                {"name": "soft_hips", "scale_passive": {"hip_axial": 1.5}, "seed": 3},
                {"name": "final", "seed": 4},
            ],
            **extra,
        },
    )


def test_two_stages_chain_and_a_second_run_resumes(tmp_path, optimize_cli):
    exp = tiny(tmp_path)
    out = tmp_path / "out"
    r = optimize_cli(exp, "--out", out, "--workers", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    first = out / "stages" / "soft_hips"
    assert (first / "best.json").is_file() and (out / "best.json").is_file()
    # the stage's model has the passive bounds scaled; the final stage is the plain preset
    assert load_meta(first / "model" / "HumanLegs.meta.json").passive_scale == {"hip_axial": 1.5}
    log = (out / "log.txt").read_text()
    assert f"warm start: {first / 'best.json'}" in log
    assert "seed: 4, population: 4, sigma0: 0.2" in log
    assert "objective: geijtenbeek2013" in log
    best = json.loads((out / "best.json").read_text())
    assert best["objective_name"] == "geijtenbeek2013" and best["duration"] == 0.3
    # a second run with more generations in the file resumes the last stage only
    data = yaml.safe_load(exp.read_text())
    data["stages"][1]["generations"] = 2
    write(exp, data)
    mtime = (first / "checkpoint.pkl").stat().st_mtime_ns
    r = optimize_cli(exp, "--out", out, "--workers", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    assert (first / "checkpoint.pkl").stat().st_mtime_ns == mtime
    assert "generations: 2, evaluations: 8" in (out / "log.txt").read_text()


@pytest.mark.parametrize(
    "change, key",
    [
        ({"speed": 0}, "speed"),
        ({"creature": 3}, "creature"),
        ({"stages": [{"name": "a"}, {"name": "a"}]}, "stages[1].name"),
        ({"stages": [{"name": "a", "duration": -1}]}, "stages[0].duration"),
        ({"stages": [{"name": "a", "generatons": 3}]}, "stages[0].generatons"),
        ({"defaults": {"seed": 0}}, "defaults.seed"),
        ({"warm_start": "missing.json"}, "warm_start"),
        ({"creature": "creatures/missing.yaml"}, "creature"),
        ({"tempo": 1}, "tempo"),
        ({"defaults": {"speed": 1.0}}, "defaults.speed"),
        ({"stages": [{"name": "a", "speed": 1.0}, {"name": "b", "speed": 1.1}]}, "stages[1].speed"),
        ({"stages": [{"name": "a", "stop_when_walking": "maybe"}]}, "stages[0].stop_when_walking"),
        ({"stages": [{"name": "a", "stop_when_met": "speed"}]}, "stages[0].stop_when_met"),
        ({"stages": [{"name": "a", "stop_when_met": [3]}]}, "stages[0].stop_when_met"),
        ({"objective": "nothing", "stages": [{"name": "a", "stop_when_met": ["speed"]}]}, "objective"),
        ({"stages": [{"name": "a", "stop_when_met": ["sped"]}]}, "stages[0].stop_when_met: sped: not a term"),
        ({"stages": [{"name": "a", "stop_when_met": ["effort"]}]}, "stages[0].stop_when_met: effort: has no"),
        (
            {"stages": [{"name": "a", "stop_when_met": ["speed"], "stop_when_walking": True}]},
            "stages[0].stop_when_met: a stage stops either",
        ),
    ],
)
def test_a_bad_experiment_file_names_file_and_key(tmp_path, change, key, optimize_cli):
    path = tiny(tmp_path, **change)
    with pytest.raises(ExperimentError, match=rf"{path}: {key}".replace("[", r"\[").replace("]", r"\]")):
        Experiment.load(path)
    r = optimize_cli(path, "--out", tmp_path / "out")
    assert r.returncode == 2 and str(path) in r.stderr and not (tmp_path / "out").exists()


def test_a_stage_has_its_own_search_space_over_the_files(tmp_path):
    """The file's overrides in every stage (its start values in the first only: a later stage
    continues the best of the one before), each stage's own over them: a constraint continuation
    is data."""
    exp = Experiment.load(
        tiny(
            tmp_path,
            parameters={
                "stance_tibialis.stretch_gain": {"start": 1.0},
                "knee.theta": {"lower": -0.2},
                "lift.hip": {"start": 0.6},
            },
            stages=[
                {"name": "first"},
                {"name": "second", "parameters": {"knee.theta": {"lower": -0.1, "start": -0.1}}},
            ],
        )
    )
    first, second = (stage.parameters for stage in exp.stages)
    assert first == exp.parameters
    assert second == {
        "stance_tibialis.stretch_gain": {"free": True},  # the feature stays on
        "knee.theta": {"lower": -0.1, "start": -0.1},
    }
    # each stage runs in its own space (its start values replace the warm start's)
    assert stage_settings(exp, 1, "first/best.json").parameters == second


@pytest.mark.parametrize(
    "stage_parameters, key",
    [
        ({"knee.thetta": {"lower": 0.0}}, "stages[1].parameters[knee.thetta]"),
        ({"knee.theta": {"lowr": 0.0}}, "stages[1].parameters[knee.theta].lowr"),
        ({"knee.theta": {"lower": 9.0}}, "stages[1].parameters[knee.theta].lower"),
        ({"lift.*": {"fixed": 0.0}}, "stages[1].parameters[lift.*]: lift.hip is also matched by parameters"),
    ],
)
def test_a_bad_stage_search_space_names_the_stage_and_key(tmp_path, stage_parameters, key):
    path = tiny(
        tmp_path,
        parameters={"lift.hip": {"upper": 0.9}},
        stages=[{"name": "a"}, {"name": "b", "parameters": stage_parameters}],
    )
    with pytest.raises(ExperimentError, match=rf"{path}: {key}".replace("[", r"\[").replace("]", r"\]")):
        Experiment.load(path)


def test_an_experiment_sets_what_it_sets(tmp_path, optimize_cli):
    r = optimize_cli(tiny(tmp_path), "--out", tmp_path / "out", "--speed", "2")
    assert r.returncode == 2 and "--speed: an experiment file sets it" in r.stderr


@pytest.mark.parametrize("path", sorted(REPO_EXPERIMENTS.glob("*.yaml")), ids=lambda p: p.name)
def test_the_committed_experiments_load(path):
    exp = Experiment.load(path)
    assert exp.stages and exp.speed > 0
    assert exp.warm_start is None or exp.warm_start.is_file()


def test_the_human_chain_re_runs_from_its_experiment_file(tmp_path, optimize_cli):
    """config/experiments/human-walk-1.3.yaml end to end, shrunk to 1 generation of 4 candidates
    of 0.3 s per stage: every stage runs on its own scaled model, warm-started from the stage
    before."""
    data = yaml.safe_load((REPO_EXPERIMENTS / "human-walk-1.3.yaml").read_text())
    data["warm_start"] = str((REPO_EXPERIMENTS / data["warm_start"]).resolve())
    data["defaults"].update(duration=0.3, generations=1, popsize=4)
    for stage in data["stages"]:
        stage.pop("duration", None)
    exp = write(tmp_path / "human-walk-1.3.yaml", data)
    out = tmp_path / "out"
    r = optimize_cli(exp, "--out", out, "--workers", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    previous = data["warm_start"]
    for stage in data["stages"]:
        folder = out if stage["name"] == "final" else out / "stages" / stage["name"]
        log = (folder / "log.txt").read_text()
        assert f"warm start: {previous}" in log and f"seed: {stage['seed']}," in log
        meta = load_meta(folder / "model" / "Human.meta.json")
        assert meta.passive_scale == stage.get("scale_passive")
        previous = folder / "best.json"


def test_a_target_speed_continuation_runs_each_stage_at_its_speed(tmp_path):
    from musclewalk.optimize.runs import stage_settings

    path = tiny(tmp_path, stages=[{"name": "slower", "speed": 1.0}, {"name": "target"}])
    exp = Experiment.load(path)
    assert [stage_settings(exp, i).speed for i in (0, 1)] == [1.0, exp.speed]


def test_an_experiment_may_name_a_creature_file_beside_it(tmp_path, optimize_cli):
    """creature: a creature .yaml relative to the experiment file (e.g. a preset with other
    physics): the stages build it, named by its own name, and its parameters check the file's."""
    preset = yaml.safe_load((REPO / "models/creatures/human_legs.yaml").read_text())
    (tmp_path / "creatures").mkdir()
    write(
        tmp_path / "creatures" / "legs_wide.yaml",
        {
            **preset,
            "name": "LegsWide",
            "physics": {"muscle_properties": "working_range", "standing_fiber_length": [0.4, 1.6]},
        },
    )
    exp_path = tiny(
        tmp_path,
        creature="creatures/legs_wide.yaml",
        parameters={"properties.hamstrings.standing_fiber_length": {"upper": 0.5}},
    )
    exp = Experiment.load(exp_path)
    assert exp.creature == str((tmp_path / "creatures" / "legs_wide.yaml").resolve())
    out = tmp_path / "out"
    r = optimize_cli(exp_path, "--out", out, "--workers", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    meta = load_meta(out / "model" / "LegsWide.meta.json")
    assert meta.physics.standing_fiber_length == [0.4, 1.6]
    assert (
        "narrowed parameters: 1: properties.hamstrings.standing_fiber_length [0, 0.5]"
        in (out / "log.txt").read_text()
    )


def test_a_stage_may_run_its_own_task_and_the_last_runs_the_files(tmp_path):
    """A task continuation as data: a stage's task (a name or a file beside the experiment) is
    what its evaluations simulate; the last stage runs the file's task, which names the run."""
    (tmp_path / "tasks").mkdir()
    write(
        tmp_path / "tasks" / "push-30.yaml",
        {"description": "30 N", "pushes": {"magnitude": 30, "start": 1.0, "interval": 1.0}},
    )
    path = tiny(
        tmp_path,
        task="push",
        stages=[
            {"name": "light", "task": "lightpush"},
            {"name": "thirty", "task": "tasks/push-30.yaml"},
            {"name": "full"},
        ],
    )
    exp = Experiment.load(path)
    tasks = [stage_settings(exp, i).task for i in range(3)]
    assert tasks == ["lightpush", str((tmp_path / "tasks" / "push-30.yaml").resolve()), "push"]

    assert_stage_own_file_refused(tmp_path, "task", "lightpush")


def assert_stage_own_file_refused(tmp_path, key, name):
    """A stage's own ``key`` (task or objective) ``name`` is refused on the last stage, which runs
    the file's; a missing file there is refused naming the stage's key."""
    only_stage = tiny(tmp_path, stages=[{"name": "only", key: name}])
    with pytest.raises(ExperimentError, match=rf"tiny.yaml: stages\[0\].{key}: the last stage runs"):
        Experiment.load(only_stage)
    missing = tiny(tmp_path, stages=[{"name": "a", key: f"{key}s/none.yaml"}, {"name": "b"}])
    with pytest.raises(ExperimentError, match=rf"tiny.yaml: stages\[0\].{key}: "):
        Experiment.load(missing)


def test_a_stage_may_stop_when_a_walker_also_walks_unperturbed(tmp_path):
    path = tiny(
        tmp_path,
        task="gentlepush",
        stages=[{"name": "first", "stop_when_walking": "unperturbed"}, {"name": "final"}],
    )
    exp = Experiment.load(path)
    assert [stage_settings(exp, i).stop_when_walking for i in range(2)] == ["unperturbed", False]


def test_a_target_speed_stage_may_stop_when_its_speed_term_is_met(tmp_path):
    path = tiny(
        tmp_path,
        stages=[{"name": "first", "speed": 1.1, "stop_when_met": ["speed", "slide"]}, {"name": "final"}],
    )
    exp = Experiment.load(path)
    assert [stage_settings(exp, i).stop_when_met for i in range(2)] == [("speed", "slide"), ()]
    # set in the defaults, the last stage (which runs on) clears it
    path = tiny(
        tmp_path,
        defaults={"duration": 0.3, "generations": 1, "stop_when_met": ["speed"]},
        stages=[{"name": "first", "speed": 1.1}, {"name": "final", "stop_when_met": []}],
    )
    exp = Experiment.load(path)
    assert [stage.stop_when_met for stage in exp.stages] == [("speed",), ()]


def test_defaults_name_only_their_own_keys_when_one_is_unknown(tmp_path):
    path = tiny(tmp_path, defaults={"name": "x"})
    with pytest.raises(ExperimentError) as caught:
        Experiment.load(path)
    message = str(caught.value)
    assert "defaults.name: unknown key (known: speed," in message and "scale_passive" not in message
    path = tiny(tmp_path, stages=[{"name": "a", "tempo": 1}])
    known = r"known: name, scale_passive, task, objective, parameters, speed"
    with pytest.raises(ExperimentError, match=known):
        Experiment.load(path)


def test_a_stage_may_run_its_own_objective_and_the_last_runs_the_files(tmp_path):
    """A bootstrap stage as data: a stage's objective (a name or a file beside the experiment) is
    what its evaluations are scored by and what its stop rule reads; the last stage runs the
    file's objective, the run's."""
    (tmp_path / "objectives").mkdir()
    mine = tmp_path / "objectives" / "mine.yaml"
    mine.write_text((REPO / "models" / "objectives" / "geijtenbeek2013-survive.yaml").read_text())
    path = tiny(
        tmp_path,
        stages=[
            {"name": "survive", "objective": "geijtenbeek2013-survive", "stop_when_met": ["speed"]},
            {"name": "mine", "objective": "objectives/mine.yaml"},
            {"name": "walk"},
        ],
    )
    exp = Experiment.load(path)
    objectives = [stage_settings(exp, i).objective for i in range(3)]
    assert objectives == ["geijtenbeek2013-survive", str(mine.resolve()), "geijtenbeek2013"]

    assert_stage_own_file_refused(tmp_path, "objective", "geijtenbeek2013-survive")
    # a stop rule names the stage's own objective's terms: the paper's has no `fallen`
    wrong = tiny(tmp_path, stages=[{"name": "a", "stop_when_met": ["fallen"]}, {"name": "b"}])
    with pytest.raises(ExperimentError, match=r"tiny.yaml: stages\[0\].stop_when_met: "):
        Experiment.load(wrong)
