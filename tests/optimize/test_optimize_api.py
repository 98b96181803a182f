"""The optimize stage's API (musclewalk.optimize.runs): runs and experiments from typed settings,
the same checks and messages as `musclewalk optimize`, no command line involved."""

import ast
from pathlib import Path

import pytest
import yaml

from musclewalk.optimize.driver import CHECKPOINT, OptimizationError, Settings, load_checkpoint
from musclewalk.optimize.experiment import Experiment, is_experiment_file
from musclewalk.optimize.runs import (
    EXPERIMENT_OPTIONS,
    complete_run,
    resume_run,
    run_experiment,
    stage_settings,
    start_run,
)

PACKAGE = Path(__file__).resolve().parents[2] / "musclewalk"


def experiment(tmp_path, **extra):
    path = tmp_path / "tiny.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "creature": "HumanLegs",
                "speed": 1.3,
                "init_from_other_creature": True,
                "defaults": {"duration": 0.05, "generations": 1, "popsize": 2, "sigma": 0.2},
                "stages": [
                    {"name": "soft_hips", "scale_passive": {"hip_axial": 1.5}, "seed": 3},
                    {"name": "final", "seed": 4, "stop_when_walking": True},
                ],
                **extra,
            }
        )
    )
    return path


def test_only_the_command_line_knows_argparse():
    for path in sorted((PACKAGE / "optimize").glob("*.py")):
        tree = ast.parse(path.read_text())
        names = {
            a.name
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for a in node.names
        } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert "argparse" not in names, path
        assert not any(
            isinstance(node, ast.ImportFrom) and node.module and node.module.endswith("cli")
            for node in ast.walk(tree)
        ), path


def test_stage_settings_come_from_the_file_and_the_given_options(tmp_path):
    exp = Experiment.load(experiment(tmp_path))
    first = stage_settings(exp, 0, None, {"workers": 1, "clip_init": True}, command="c")
    assert first == Settings(
        model="",
        speed=1.3,
        duration=0.05,
        generations=1,
        seed=3,
        sigma=0.2,
        popsize=2,
        objective="geijtenbeek2013",
        workers=1,
        clip_init=True,
        init_other_creature=True,
        command="c",
    )
    last = stage_settings(exp, 1, "stage0/best.json")
    assert (last.seed, last.init, last.init_other_creature, last.stop_when_walking) == (
        4,
        "stage0/best.json",
        False,
        True,
    )
    assert set(EXPERIMENT_OPTIONS) <= {f for f in Settings.__dataclass_fields__}
    with pytest.raises(OptimizationError, match=r"^seed: an experiment file sets it"):
        stage_settings(exp, 0, None, {"seed": 2})
    with pytest.raises(OptimizationError, match="seed: an experiment file sets it"):
        run_experiment(exp, tmp_path / "out", {"seed": 2})
    assert not (tmp_path / "out").exists()


def test_is_experiment_file(tmp_path):
    assert is_experiment_file(experiment(tmp_path))
    creature = tmp_path / "creature.yaml"
    creature.write_text("parts: {legs: {template: humanoid_legs}}\n")
    assert not is_experiment_file(creature) and not is_experiment_file("HumanLegs")
    assert not is_experiment_file(tmp_path / "missing.yaml")


def test_a_run_that_cannot_start_leaves_nothing(humanlegs_osim, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(OptimizationError, match="sigma: expected a number > 0"):
        start_run(str(humanlegs_osim), out, Settings(model="", speed=1.3, sigma=0.0))
    with pytest.raises(OptimizationError, match="missing.osim: model file not found"):
        start_run(str(tmp_path / "missing.osim"), out, Settings(model="", speed=1.3))
    with pytest.raises(OptimizationError, match="--scale-passive: .*no_such_gain"):
        start_run(
            str(humanlegs_osim), out, Settings(model="", speed=1.3), scale_passive={"no_such_gain": 2.0}
        )
    assert not out.exists()
    with pytest.raises(OptimizationError, match=f"{out / CHECKPOINT}: no checkpoint"):
        resume_run(str(humanlegs_osim), out)
    out.write_text("x")
    for call in (
        lambda: start_run(str(humanlegs_osim), out, Settings(model="", speed=1.3)),
        lambda: resume_run(str(humanlegs_osim), out),
    ):
        with pytest.raises(OptimizationError, match="--out exists and is not a directory"):
            call()


def test_a_run_started_resumed_and_reported(humanlegs_osim, tmp_path):
    out = tmp_path / "run"
    settings = Settings(
        model="", speed=1.3, duration=0.05, generations=1, seed=5, popsize=2, evaluator="serial", workers=1
    )
    lines = []
    state = complete_run(start_run(str(humanlegs_osim), out, settings, progress=False), lines.append)
    assert settings.model == ""  # the caller's settings are kept
    assert state.generation == 1 and len(lines) == 2
    assert lines[0].startswith("HumanLegs: ") and " parameters " in lines[0]
    assert lines[1].startswith("best objective ") and lines[1].endswith(f"; wrote {out}")
    with pytest.raises(OptimizationError, match="seed: the run was started with 5, not 6"):
        resume_run(str(humanlegs_osim), out, requested={"seed": 6})
    with pytest.raises(OptimizationError, match="the run optimizes 'HumanLegs', not 'Human'"):
        resume_run("Human", out)
    # a note someone added to log.txt (why it stopped, how to resume) survives the rewrites
    note = "note: stopped after generation 1 to free the cores; resume with ..."
    with open(out / "log.txt", "a") as log:
        log.write(note + "\n")
    opt = resume_run("HumanLegs", out, generations=2, requested={"seed": 5, "workers": 1}, progress=False)
    assert complete_run(opt, lines.append).generation == 2
    saved, _ = load_checkpoint(out / CHECKPOINT)
    assert saved.generations == 2 and saved.model == str(humanlegs_osim)
    log = (out / "log.txt").read_text().splitlines()
    assert "generations: 2, evaluations: 4, failed evaluations: 0" in log
    assert log.count(note) == 1


def test_an_experiment_runs_its_stages_and_resumes(tmp_path):
    path = experiment(tmp_path)
    exp = Experiment.load(path)
    out = tmp_path / "out"
    lines = []
    options = {"evaluator": "serial", "workers": 1}
    state = run_experiment(exp, out, options, progress=False, report=lines.append)
    first = out / "stages" / "soft_hips"
    assert state.generation == 1
    assert [line for line in lines if line.startswith("tiny: ")] == [
        f"tiny: stage 1/2 'soft_hips' -> {first}",
        f"tiny: stage 2/2 'final' -> {out}",
    ]
    saved, _ = load_checkpoint(out / CHECKPOINT)
    assert (saved.seed, saved.init, saved.stop_when_walking, saved.init_other_creature) == (
        4,
        str(first / "best.json"),
        True,
        False,
    )
    assert saved.command == f"musclewalk optimize {exp.path} --out {out} (stage final)"
    first_saved, _ = load_checkpoint(first / CHECKPOINT)
    assert first_saved.init_other_creature and Path(first_saved.model).parent == first / "model"
    # again: both stages resume and return at once
    mtime = (first / CHECKPOINT).stat().st_mtime_ns
    assert run_experiment(exp, out, options, progress=False, report=lines.append).generation == 1
    assert (first / CHECKPOINT).stat().st_mtime_ns == mtime


@pytest.mark.parametrize(
    "stage, change, name",
    [
        (1, {"seed": 9}, "seed"),
        (1, {"sigma": 0.3}, "sigma"),
        (1, {"stop_when_walking": False}, "stop_when_walking"),
        (1, {"stop_when_walking": False, "stop_when_met": ["speed"]}, "stop_when_walking"),
        (0, {"stop_when_met": []}, "stop_when_met"),
        (1, {}, "speed"),
    ],
)
def test_a_stage_whose_result_settings_changed_in_the_file_is_not_resumed(tmp_path, stage, change, name):
    """A stage resumes with the settings it started with: the file saying otherwise is refused
    (naming the file, the stage's key and its checkpoint), not silently ignored; a larger
    generation limit is not such a change. The first stage here stops when its speed term is met
    (it is not: it runs its generation limit)."""
    path = experiment(tmp_path)
    data = yaml.safe_load(path.read_text())
    data["stages"][0]["stop_when_met"] = ["speed"]
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "out"
    run_experiment(Experiment.load(path), out, {"workers": 1}, progress=False, report=lambda _: None)
    first = out / "stages" / "soft_hips"
    assert load_checkpoint(first / CHECKPOINT)[0].stop_when_met == ("speed",)
    # unchanged: both stages resume and return at once
    mtime = (first / CHECKPOINT).stat().st_mtime_ns
    run_experiment(Experiment.load(path), out, {"workers": 1}, progress=False, report=lambda _: None)
    assert (first / CHECKPOINT).stat().st_mtime_ns == mtime
    if stage == 1:
        data["stages"][0]["generations"] = 2
    data["stages"][stage].update(change)
    if name == "speed":  # the last stage runs at the file's speed, the first keeps its own
        data["stages"][0]["speed"], data["speed"] = data["speed"], 1.2
    path.write_text(yaml.safe_dump(data))
    checkpoint = (first if stage == 0 else out) / CHECKPOINT
    message = rf"{path}: stages\[{stage}\].{name}: the stage's checkpoint \({checkpoint}\) was started with"
    with pytest.raises(OptimizationError, match=message):
        run_experiment(Experiment.load(path), out, {"workers": 1}, progress=False, report=lambda _: None)
    if stage == 1:  # the first stage, unchanged but for its limit, ran on
        assert load_checkpoint(first / CHECKPOINT)[0].generations == 2


def test_a_later_stage_checkpointed_with_the_files_start_values_resumes(tmp_path):
    """Before stages had their own search spaces every stage's checkpoint kept the file's
    parameters, start values included; running the file again resumes such a stage."""
    import pickle

    path = experiment(tmp_path, parameters={"lift.hip": {"start": 0.6}})
    exp = Experiment.load(path)
    assert exp.stages[1].parameters == {}  # a paper parameter: no start, nothing left
    out = tmp_path / "out"
    run_experiment(exp, out, {"workers": 1}, progress=False, report=lambda _: None)
    checkpoint = out / CHECKPOINT
    data = pickle.loads(checkpoint.read_bytes())
    data["settings"]["parameters"] = dict(exp.parameters)  # as the earlier version wrote it
    checkpoint.write_bytes(pickle.dumps(data))
    lines = []
    state = run_experiment(Experiment.load(path), out, {"workers": 1}, progress=False, report=lines.append)
    assert state.generation == 1 and "best objective" in lines[-1]  # resumed: it had finished
    assert load_checkpoint(checkpoint)[0].parameters == exp.parameters


def test_a_recorded_command_names_paths_from_the_checkout_root(tmp_path):
    """runs.checkout_relative: a run's command reads as typed from the root of the git checkout
    holding each path (a .git folder, or a worktree's .git file), so that it is the same in every
    clone; outside a checkout the absolute path."""
    from musclewalk.optimize.runs import checkout_relative

    clone, worktree = tmp_path / "clone", tmp_path / "worktree"
    (clone / ".git").mkdir(parents=True)
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: /elsewhere\n")
    assert checkout_relative(clone / "config/experiments/a.yaml") == "config/experiments/a.yaml"
    assert checkout_relative(worktree / "models/optimized/in-progress/R") == "models/optimized/in-progress/R"
    assert checkout_relative(tmp_path / "loose" / "a.yaml") == str(tmp_path / "loose" / "a.yaml")
