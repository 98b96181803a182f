"""Experiments as data: an experiment file runs its stages in order, each warm-started from the
best of the one before, and running it again resumes instead of starting over."""

import json
import re
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
    line = next(x for x in log.splitlines() if x.startswith("best at a bound (within 1 % of its range): "))
    assert re.fullmatch(
        r"best at a bound \(within 1 % of its range\): \d+ of \d+ optimized"
        r"(: .+ \((lower|upper) [-0-9.e]+\).*)?",
        line,
    ), line
    # and the best's fibres standing outside the working range, as analysis/standing_lengths.py
    # gives them for its optimized.osim
    from musclewalk.model.meta import meta_path
    from musclewalk.model.vectors import ModelVectors, parse_osim

    lengths = ModelVectors(load_meta(meta_path(out / "optimized.osim"))).standing_lengths(
        parse_osim(out / "optimized.osim")
    )
    outside = [f"{n} {v:.2f}" for n, v in lengths.items() if not 0.5 <= v <= 1.2 and n.endswith("_r")]
    prefix = "best's fibres standing outside 0.5-1.2 optimal lengths (base pose; right side): "
    assert prefix + (f"{len(outside)}: {', '.join(outside)}" if outside else "none") in log
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
    with pytest.raises(ExperimentError, match=re.escape(f"{path}: {key}")):
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
        (
            {"lift.*": {"fixed": 0.0}, "lift.h*": {"upper": 0.5}},
            "stages[1].parameters[lift.h*]: lift.hip is also matched by parameters[lift.*]",
        ),
    ],
)
def test_a_bad_stage_search_space_names_the_stage_and_key(tmp_path, stage_parameters, key):
    path = tiny(
        tmp_path,
        parameters={"lift.hip": {"upper": 0.9}},
        stages=[{"name": "a"}, {"name": "b", "parameters": stage_parameters}],
    )
    with pytest.raises(ExperimentError, match=re.escape(f"{path}: {key}")):
        Experiment.load(path)


def test_a_stage_key_takes_its_parameters_from_the_file_pattern(tmp_path):
    """A stage frees one parameter under the file's pattern that fixes all of its kind: the
    file's pattern keeps the others, each by name; the other stages keep the file's space."""
    path = tiny(
        tmp_path,
        parameters={"lift.*": {"fixed": 0.0}},
        stages=[{"name": "a"}, {"name": "b", "parameters": {"lift.hip": {"upper": 0.9}}}],
    )
    exp = Experiment.load(path)
    first, second = (stage.parameters for stage in exp.stages)
    assert first == exp.parameters == {"lift.*": {"fixed": 0.0}}
    assert second["lift.hip"] == {"upper": 0.9} and "lift.*" not in second
    others = [n for n in second if n != "lift.hip"]
    assert others and all(n.startswith("lift.") and second[n] == {"fixed": 0.0} for n in others)


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


def soft_legs(tmp_path, name="legs_soft.yaml"):
    """HumanLegs with softer foot contact: a creature variant of its physics only."""
    data = yaml.safe_load((REPO / "models/creatures/human_legs.yaml").read_text())
    data["name"] = "HumanLegsSoft"
    data["physics"] = {"contact": {"exponential_shape": [0.0073541, 0.5336, 1000]}}
    return write(tmp_path / name, data)


def test_a_stage_may_run_its_own_creature_a_physics_variant(tmp_path, optimize_cli):
    """A physics continuation as data: a stage's creature (a variant with the same parameters)
    builds its model; the stage after it, on another creature, carries the warm start over."""
    soft_legs(tmp_path)
    path = tiny(
        tmp_path, stages=[{"name": "soft", "creature": "legs_soft.yaml", "seed": 3}, {"name": "final"}]
    )
    exp = Experiment.load(path)
    assert (
        exp.stages[0].creature == str((tmp_path / "legs_soft.yaml").resolve())
        and exp.stages[1].creature is None
    )
    assert [stage_settings(exp, i).init_other_creature for i in range(2)] == [False, True]
    out = tmp_path / "out"
    r = optimize_cli(path, "--out", out, "--workers", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    soft = load_meta(out / "stages" / "soft" / "model" / "HumanLegsSoft.meta.json")
    assert soft.physics.contact.exponential_shape == (0.0073541, 0.5336, 1000.0)
    assert load_meta(out / "optimized.meta.json").physics.contact.exponential_shape is None
    assert f"warm start: {out / 'stages' / 'soft' / 'best.json'}" in (out / "log.txt").read_text()
    # its creature file edited since (the same name, other physics): the stage's checkpoint is refused
    creature = yaml.safe_load((tmp_path / "legs_soft.yaml").read_text())
    creature["physics"]["contact"]["exponential_shape"][2] = 900
    write(tmp_path / "legs_soft.yaml", creature)
    again = optimize_cli(path, "--out", out, "--workers", "1", "--quiet")
    assert again.returncode != 0 and "tiny.yaml: stages[0].creature: the stage's checkpoint" in again.stderr


def test_a_stage_creature_with_other_parameters_is_refused(tmp_path):
    soft_legs(tmp_path)
    path = tiny(tmp_path, stages=[{"name": "other", "creature": "Human"}, {"name": "final"}])
    with pytest.raises(
        ExperimentError, match=r"tiny.yaml: stages\[0\].creature: it differs from the experiment's"
    ):
        Experiment.load(path)
    # the same parameters on another body: longer legs
    data = yaml.safe_load((REPO / "models/creatures/human_legs.yaml").read_text())
    data["parts"]["legs"]["upper"] = 0.52
    write(tmp_path / "legs_long.yaml", data)
    longer = tiny(tmp_path, stages=[{"name": "a", "creature": "legs_long.yaml"}, {"name": "b"}])
    with pytest.raises(
        ExperimentError, match=r"stages\[0\].creature: it differs .* in .*bodies.*physics only"
    ):
        Experiment.load(longer)
    unknown = tiny(
        tmp_path,
        creature="NoSuchCreature",
        stages=[{"name": "a", "creature": "legs_soft.yaml"}, {"name": "b"}],
    )
    with pytest.raises(ExperimentError, match=r"tiny.yaml: creature: "):
        Experiment.load(unknown)
    last = tiny(tmp_path, stages=[{"name": "a"}, {"name": "b", "creature": "legs_soft.yaml"}])
    with pytest.raises(ExperimentError, match=r"tiny.yaml: stages\[1\].creature: the last stage runs"):
        Experiment.load(last)
    missing = tiny(tmp_path, stages=[{"name": "a", "creature": "creatures/none.yaml"}, {"name": "b"}])
    with pytest.raises(
        ExperimentError, match=r"tiny.yaml: stages\[0\].creature: .*none.yaml: file not found"
    ):
        Experiment.load(missing)


def test_a_stage_creature_spelled_as_the_file_s_is_the_file_s(tmp_path):
    """A preset named by its name in one place and by its file in the other is one creature: the
    stage runs the file's creature (nothing to check, no warm start carried over as if it were
    another), and the last stage may spell it either way."""
    preset = str(REPO / "models/creatures/human_legs.yaml")
    path = tiny(tmp_path, stages=[{"name": "a", "creature": preset}, {"name": "b", "creature": preset}])
    exp = Experiment.load(path)
    assert [stage.creature for stage in exp.stages] == [None, None]
    assert [stage_settings(exp, i).init_other_creature for i in range(2)] == [False, False]
    by_file = tiny(tmp_path, creature=preset, stages=[{"name": "a", "creature": "HumanLegs"}, {"name": "b"}])
    assert Experiment.load(by_file).stages[0].creature is None


def test_an_experiment_depends_on_every_file_that_defines_its_runs(tmp_path):
    """Experiment.files (the workflow's inputs of a run): the experiment file and what it extends,
    and each creature, task (with the tasks it extends) and objective file of the file and its
    stages, once each: an edit to any of them re-runs the run."""
    soft_legs(tmp_path)
    (tmp_path / "tasks").mkdir()
    write(tmp_path / "tasks" / "base.yaml", {"extends": "lightpush", "description": "base", "speed": 1.1})
    write(tmp_path / "tasks" / "mine.yaml", {"extends": "base.yaml", "description": "mine"})
    write(tmp_path / "effort.yaml", yaml.safe_load((REPO / "models/objectives/human.yaml").read_text()))
    base = tiny(tmp_path)
    base.rename(tmp_path / "base_exp.yaml")
    path = write(
        tmp_path / "child.yaml",
        {
            "extends": "base_exp.yaml",
            "description": "stages with their own files",
            "stages": [
                {"name": "soft", "creature": "legs_soft.yaml", "task": "tasks/mine.yaml"},
                {"name": "effort", "objective": "effort.yaml"},
                {"name": "final"},
            ],
        },
    )
    files = Experiment.load(path).files
    models = REPO / "models"
    expected = [
        path,
        tmp_path / "base_exp.yaml",
        models / "creatures/human_legs.yaml",
        models / "tasks/walk.yaml",
        models / "objectives/geijtenbeek2013.yaml",
        tmp_path / "legs_soft.yaml",
        tmp_path / "tasks/mine.yaml",
        tmp_path / "tasks/base.yaml",
        models / "tasks/lightpush.yaml",
        models / "tasks/push.yaml",
        tmp_path / "effort.yaml",
    ]  # not lightpush's own objective: a stage without one runs the file's
    assert list(files) == list(dict.fromkeys(p.resolve() for p in expected))
    assert all(f.is_file() for f in files)
    # what `files` would read is checked at load: an unknown objective or preset is one error
    for key, value in (("objective", "no_such_objective"), ("creature", "NoSuchCreature")):
        with pytest.raises(ExperimentError, match=rf"tiny.yaml: {key}: .*{value}"):
            Experiment.load(tiny(tmp_path, **{key: value}))


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
    known = r"known: name, creature, scale_passive, task, aid_level, objective, parameters, speed"
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


def aided_task(tmp_path, **extra):
    (tmp_path / "tasks").mkdir(exist_ok=True)
    return write(
        tmp_path / "tasks" / "aid.yaml",
        {"description": "aided", "extends": "walk", "assist": {"upright": 1, "support": 0.5}, **extra},
    )


def test_aid_steps_are_stages_of_one_task_at_falling_aid_levels(tmp_path, optimize_cli):
    """aid_steps: one stage per level before the file's stages, named aid_<level>, each running
    the task with its aid scaled by the level, with consecutive seeds and the section's values;
    the run stores the scaled task and is scored under it."""
    aided_task(tmp_path, termination={"max_heading_error": 25})
    path = tiny(
        tmp_path,
        aid_steps={
            "task": "tasks/aid.yaml",
            "levels": [0.7, 0.35],
            "seed": 11,
            "generations": 1,
            "popsize": 4,
        },
        stages=[{"name": "final", "seed": 20}],
    )
    exp = Experiment.load(path)
    assert [s.name for s in exp.stages] == ["aid_0.7", "aid_0.35", "final"]
    assert [s.seed for s in exp.stages] == [11, 12, 20]
    assert [s.aid_level for s in exp.stages] == [0.7, 0.35, None]
    assert exp.stage_key(1) == "aid_steps.levels[1]" and exp.stage_key(2) == "stages[0]"
    settings = stage_settings(exp, 1)
    assert settings.task == str((tmp_path / "tasks" / "aid.yaml").resolve())
    assert settings.task_definition["assist"] == {"upright": 0.35, "support": 0.175}
    assert settings.task_definition["termination"] == {"max_heading_error": 25.0}
    assert stage_settings(exp, 2).task_definition is None and stage_settings(exp, 2).task == "walk"

    out = tmp_path / "out"
    r = optimize_cli(path, "--out", out, "--workers", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    stored = json.loads((out / "stages" / "aid_0.35" / "settings.json").read_text())
    assert stored["task_definition"]["assist"] == {"upright": 0.35, "support": 0.175}
    best = json.loads((out / "stages" / "aid_0.35" / "best.json").read_text())
    assert best["task_definition"] == stored["task_definition"]
    # simulate --as-scored re-simulates that best as the optimizer scored it
    from musclewalk.cli import main

    stage = out / "stages" / "aid_0.35"
    again = tmp_path / "again"
    assert main(["simulate", str(stage / "optimized.osim"), "--params", str(stage / "best.json"),
                 "--as-scored", "--out", str(again)]) == 0  # fmt: skip
    summary = json.loads((again / "summary.json").read_text())
    assert summary["simulated_time"] == pytest.approx(best["simulated_time"], abs=1e-9)
    assert summary["terminated"] == best["terminated"]
    assert summary["assist"] == {"upright": 0.35, "support": 0.175}
    log = (out / "stages" / "aid_0.35" / "log.txt").read_text()
    assert "upright torque 0.35 M g L per rad, support 0.175 of body weight" in log
    assert "seed: 12," in log
    assert "assist" not in json.loads((out / "settings.json").read_text())["task_definition"] or (
        json.loads((out / "settings.json").read_text())["task_definition"]["assist"] is None
    )


def test_aid_steps_of_an_extended_file_are_its_own_or_dropped(tmp_path):
    """An extending file takes the aid steps whole (their task relative to the file that names
    them) or drops them with aid_steps: null."""
    aided_task(tmp_path)
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "tasks").mkdir()
    write(
        tmp_path / "base" / "tasks" / "aid.yaml",
        {"description": "aided", "assist": {"upright": 2, "support": 0.5}},
    )
    write(
        tmp_path / "base" / "base.yaml",
        {
            "description": "base",
            "creature": "HumanLegs",
            "speed": 1.3,
            "aid_steps": {"task": "tasks/aid.yaml", "levels": [1, 0.5], "seed": 5},
        },
    )
    inherits = write(tmp_path / "inherits.yaml", {"description": "same steps", "extends": "base/base.yaml"})
    exp = Experiment.load(inherits)
    assert [s.name for s in exp.stages] == ["aid_1", "aid_0.5", "inherits"]
    assert stage_settings(exp, 1).task_definition["assist"] == {"upright": 1.0, "support": 0.25}
    drops = write(
        tmp_path / "drops.yaml", {"description": "none", "extends": "base/base.yaml", "aid_steps": None}
    )
    assert [s.name for s in Experiment.load(drops).stages] == ["drops"]
    own = write(
        tmp_path / "own.yaml",
        {
            "description": "own",
            "extends": "base/base.yaml",
            "aid_steps": {"task": "tasks/aid.yaml", "levels": [0.2], "seed": 9},
        },
    )
    exp = Experiment.load(own)
    assert [s.name for s in exp.stages] == ["aid_0.2", "own"]
    assert stage_settings(exp, 0).task_definition["assist"] == {"upright": 0.2, "support": 0.1}


@pytest.mark.parametrize(
    "aid_steps, stages, key",
    [
        ({"levels": [1], "seed": 1}, None, "aid_steps.task: required"),
        ({"task": "walk", "levels": [1], "seed": 1}, None, "aid_steps.task: .*no balance aid"),
        ({"task": "tasks/aid.yaml", "levels": [], "seed": 1}, None, "aid_steps.levels"),
        ({"task": "tasks/aid.yaml", "levels": [1, 0], "seed": 1}, None, r"aid_steps.levels\[1\]"),
        (
            {"task": "tasks/aid.yaml", "levels": [0.5, 0.50], "seed": 1},
            None,
            "aid_steps.levels: a level is given twice",
        ),
        ({"task": "tasks/aid.yaml", "levels": [1]}, None, "aid_steps.seed"),
        ({"task": "tasks/aid.yaml", "levels": [1], "seed": 1, "duration": -1}, None, "aid_steps.duration"),
        (
            {"task": "tasks/aid.yaml", "levels": [1], "seed": 1, "speed": 1.0, "stop_when_met": ["sped"]},
            None,
            "aid_steps.stop_when_met: sped",
        ),
        (
            {"task": "tasks/aid.yaml", "levels": [1], "seed": 1, "objective": "nothing"},
            None,
            "aid_steps.objective",
        ),
        (
            None,
            [{"name": "a", "aid_level": 0.5}, {"name": "b"}],
            r"stages\[0\].aid_level: .*give the stage a task",
        ),
        (
            None,
            [{"name": "a", "task": "walk", "aid_level": 0.5}, {"name": "b"}],
            r"stages\[0\].aid_level: .*no balance aid",
        ),
        (
            None,
            [{"name": "a", "task": "tasks/aid.yaml", "aid_level": -1}, {"name": "b"}],
            r"stages\[0\].aid_level: .*> 0",
        ),
        (
            {"task": "tasks/aid.yaml", "levels": [1], "seed": 1},
            [{"name": "a", "speed": 1.1}],
            r"stages\[0\].speed: the last stage",
        ),
    ],
)
def test_bad_aid_steps_name_the_file_and_key(tmp_path, aid_steps, stages, key):
    aided_task(tmp_path)
    extra = {"aid_steps": aid_steps} if aid_steps is not None else {}
    path = tiny(tmp_path, **extra, **({"stages": stages} if stages else {}))
    with pytest.raises(ExperimentError, match=rf"{path}: {key}"):
        Experiment.load(path)


def test_a_stage_with_an_aid_level_runs_its_task_scaled(tmp_path):
    aided_task(tmp_path)
    path = tiny(
        tmp_path, stages=[{"name": "half", "task": "tasks/aid.yaml", "aid_level": 0.5}, {"name": "final"}]
    )
    exp = Experiment.load(path)
    assert stage_settings(exp, 0).task_definition["assist"] == {"upright": 0.5, "support": 0.25}
    last = tiny(
        tmp_path, task="tasks/aid.yaml", stages=[{"name": "only", "task": "tasks/aid.yaml", "aid_level": 0.5}]
    )
    with pytest.raises(ExperimentError, match=r"stages\[0\].aid_level: the last stage runs"):
        Experiment.load(last)


def test_a_committed_aid_continuation_generates_the_stages_it_wrote_out_before():
    """The rewritten longlegs-walk-2.0-aidsteps.yaml generates the stages its explicit list had
    (names, seeds, aid levels of tasks/aid.yaml: upright 1 and support 0.5 at level 1), then its
    own stages; its runs resume from these checkpoints."""
    exp = Experiment.load(REPO_EXPERIMENTS / "longlegs-walk-2.0-aidsteps.yaml")
    levels = [0.7, 0.5, 0.35, 0.25, 0.18, 0.12, 0.09, 0.06, 0.03]
    assert [s.name for s in exp.stages] == [f"aid_{level:g}" for level in levels] + ["progress", "walk"]
    assert [s.seed for s in exp.stages] == list(range(421, 432))
    for i, level in enumerate(levels):
        stage = exp.stages[i]
        assert (stage.duration, stage.generations, stage.stop_when_walking) == (5.0, 40, True)
        assist = stage_settings(exp, i).task_definition["assist"]
        assert assist == {"upright": float(f"{level}"), "support": float(f"{level / 2:g}")}
    assert exp.stage_key(2) == "aid_steps.levels[2]" and exp.stage_key(9) == "stages[0]"


def test_a_changed_aid_step_is_refused_on_resume_naming_the_step(tmp_path, optimize_cli):
    """Resuming with an aid step's seed changed is refused, naming aid_steps.levels[k]; a file's
    stage named like a generated one is refused naming the file's stage."""
    aided_task(tmp_path)
    steps = {"task": "tasks/aid.yaml", "levels": [0.5], "seed": 11, "generations": 1, "popsize": 4}
    path = tiny(tmp_path, aid_steps=steps, stages=[{"name": "final", "seed": 20}])
    out = tmp_path / "out"
    r = optimize_cli(path, "--out", out, "--workers", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    tiny(tmp_path, aid_steps={**steps, "seed": 12}, stages=[{"name": "final", "seed": 20}])
    r = optimize_cli(path, "--out", out, "--workers", "1", "--quiet")
    assert r.returncode != 0 and "aid_steps.levels[0].seed: the stage's checkpoint" in r.stderr
    clash = tiny(tmp_path, aid_steps=steps, stages=[{"name": "aid_0.5"}, {"name": "final"}])
    with pytest.raises(ExperimentError, match=r"stages\[0\].name: 'aid_0.5' used twice"):
        Experiment.load(clash)
