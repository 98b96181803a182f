"""Trials that move only some parameter groups, in directions fixed for the whole run
(driver.Settings.trial_groups, trial_directions; beyond the paper): with [initial_state] and
fixed directions a candidate is scored by walking from several starts, a deterministic objective
that elitism may keep."""

import json
from pathlib import Path

import pytest
from test_trials import Recording, run_recorded

from musclewalk.optimize.driver import Optimization, OptimizationError
from musclewalk.optimize.experiment import Experiment, ExperimentError
from musclewalk.optimize.runs import stage_settings
from musclewalk.optimize.task import trial_signs

REPO = Path(__file__).resolve().parents[2]


def moved_names(own, moved):
    return {k for o, m in zip(own, moved) for k in o if m[k] != o[k]}


def test_trials_move_only_their_groups_in_the_same_directions_every_generation(
    small_settings, tmp_path, monkeypatch
):
    calls = []
    opt = run_recorded(small_settings, tmp_path / "run", monkeypatch, calls, 2, trials=3, trial_jitter=1e-3,
                       trial_groups=("initial_state",), trial_directions="fixed")  # fmt: skip
    state = {e.name for e in opt.space.optimized if e.group == "initial_state"}
    assert state and len(calls) == 6
    ranges = {e.name: e.upper - e.lower for e in opt.space.optimized}
    names = [e.name for e in opt.space.optimized]
    for g in (1, 2):
        own = calls[3 * (g - 1)][1]
        for k in (1, 2):
            moved = calls[3 * (g - 1) + k][1]
            assert moved_names(own, moved) <= state and moved_names(own, moved)
            # the run's one draw (generation 0), whatever the generation
            signs = dict(zip(names, trial_signs(5, 0, k, len(names))))
            for o, m in zip(own, moved):
                for name in state:
                    if m[name] not in (opt.space.optimized[opt.space._index[name]].lower,
                                       opt.space.optimized[opt.space._index[name]].upper):  # fmt: skip
                        assert m[name] - o[name] == pytest.approx(signs[name] * 1e-3 * ranges[name], rel=1e-6)
    best = json.loads((tmp_path / "run" / "best.json").read_text())
    assert best["trials"]["groups"] == ["initial_state"] and best["trials"]["directions"] == "fixed"
    # resumed with the same groups and directions it goes on
    run_recorded(small_settings, tmp_path / "run", monkeypatch, calls, 3, resume=True, trials=3,
                 trial_jitter=1e-3, trial_groups=("initial_state",), trial_directions="fixed")  # fmt: skip
    assert len(calls) == 9
    log = (tmp_path / "run" / "log.txt").read_text()
    assert "of each range of the initial_state parameters (directions drawn once for the run" in log


def test_the_order_of_the_trial_groups_does_not_change_the_run(small_settings, tmp_path, monkeypatch):
    """The groups are a set: a resume that names them in another order (or twice) goes on."""
    calls = []
    opt = run_recorded(small_settings, tmp_path / "run", monkeypatch, calls, 1, trials=2, trial_jitter=1e-3,
                       trial_groups=("target_features", "initial_state"),
                       trial_directions="fixed")  # fmt: skip
    assert opt.settings.trial_groups == ("initial_state", "target_features")
    import musclewalk.optimize.driver as driver

    terms = driver.Objective.load("geijtenbeek2013").term_names
    monkeypatch.setattr(driver, "make_evaluator", lambda *a, **k: Recording(calls, terms))
    requested = {"trials": 2, "trial_jitter": 1e-3, "trial_directions": "fixed",
                 "trial_groups": ("target_features", "initial_state", "target_features")}  # fmt: skip
    Optimization(small_settings(generations=2, seed=5, **requested), tmp_path / "run", resume=True,
                 requested=requested, progress=False).run()  # fmt: skip
    assert len(calls) == 4
    with pytest.raises(OptimizationError, match="trial_groups: the run was started with"):
        Optimization(small_settings(generations=3, seed=5), tmp_path / "run", resume=True,
                     requested={"trial_groups": ("initial_state",)}, progress=False)  # fmt: skip
    best = json.loads((tmp_path / "run" / "best.json").read_text())
    assert best["trials"]["groups"] == ["initial_state", "target_features"]


def test_a_warm_start_s_further_trials_keep_its_other_values_exactly(small_settings, tmp_path, monkeypatch):
    """The warm start's candidate runs with the file's values; its moved copies change the trial
    groups' values only, every other value the file's to the bit."""
    calls = []
    warm = REPO / "models/optimized/HumanLegs-walk-1.3/best.json"
    run_recorded(small_settings, tmp_path / "run", monkeypatch, calls, 1, trials=2, trial_jitter=1e-3,
                 trial_groups=("initial_state",), trial_directions="fixed", init=str(warm))  # fmt: skip
    params = json.loads(warm.read_text())["parameters"]
    own = {**params["controller"], **params["initial_state"]}
    first = [i for i, v in enumerate(calls[0][1]) if all(v[k] == x for k, x in own.items())]
    assert first, "the warm start's candidate runs with the file's values"
    moved = calls[1][1][first[0]]
    changed = {k for k, x in own.items() if moved[k] != x}
    assert changed and changed <= set(params["initial_state"])


def test_per_generation_directions_with_groups_change_each_generation(small_settings, tmp_path, monkeypatch):
    calls = []
    run_recorded(small_settings, tmp_path / "run", monkeypatch, calls, 2, trials=2, trial_jitter=1e-3,
                 trial_groups=("initial_state",))  # fmt: skip
    first = [m[k] - o[k] for o, m in zip(calls[0][1], calls[1][1]) for k in o if m[k] != o[k]]
    second = [m[k] - o[k] for o, m in zip(calls[2][1], calls[3][1]) for k in o if m[k] != o[k]]
    assert [x > 0 for x in first[:6]] != [x > 0 for x in second[:6]]


def test_elitism_with_fixed_trials_is_allowed_and_resumes_exactly(small_settings, tmp_path, monkeypatch):
    calls, again = [], []
    settings = dict(trials=2, trial_jitter=1e-3, trial_groups=("initial_state",), trial_directions="fixed",
                    elitist=True)  # fmt: skip
    run_recorded(small_settings, tmp_path / "whole", monkeypatch, calls, 2, **settings)
    run_recorded(small_settings, tmp_path / "parts", monkeypatch, again, 1, **settings)
    run_recorded(small_settings, tmp_path / "parts", monkeypatch, again, 2, resume=True, **settings)
    assert again == calls
    for name, value in (("trial_groups", ()), ("trial_directions", "per_generation")):
        with pytest.raises(OptimizationError, match=f"{name}: the run was started with"):
            Optimization(small_settings(), tmp_path / "parts", resume=True, progress=False,
                         requested={name: value})  # fmt: skip


@pytest.mark.parametrize(
    "values, message",
    [
        ({"trials": 2, "elitist": True}, "elitist: trials draw new directions each generation"),
        ({"trial_directions": "sometimes"}, "trial_directions: expected per_generation or fixed"),
        ({"trial_groups": "initial_state"}, "trial_groups: expected a list of parameter group names"),
        ({"trials": 2, "trial_groups": ("neck",)}, "trial_groups: unknown group neck"),
        # a group the run holds entirely (here: the initial state fixed at its defaults)
        (
            {"trials": 2, "trial_groups": ("initial_state",), "parameters": {"init.*": {"hold": True}}},
            "trial_groups: initial_state: no optimized parameter of",
        ),
        # fixed directions do not make a task's random perturbations deterministic
        (
            {"trials": 2, "trial_directions": "fixed", "elitist": True, "task": "push"},
            "elitist: task push draws new perturbations each generation",
        ),
    ],
)
def test_bad_trial_group_settings_are_refused(small_settings, tmp_path, values, message):
    with pytest.raises(OptimizationError, match=message):
        Optimization(small_settings(**values), tmp_path / "r", progress=False)


def test_a_bad_trial_group_on_the_command_line_is_refused_before_the_model_is_built(tmp_path, optimize_cli):
    out = tmp_path / "o"
    r = optimize_cli("HumanLegs", "--speed", "1.3", "--trials", "2", "--trial-groups", "neck", "--out", out)
    assert r.returncode != 0 and "trial_groups: unknown group neck" in r.stderr
    assert not out.exists()


def test_an_experiment_stage_sets_trial_groups_and_directions(tmp_path, one_stage_experiment):
    stage = {"trials": 3, "trial_jitter": 1e-3, "trial_groups": ["initial_state"],
             "trial_directions": "fixed", "elitist": True}  # fmt: skip
    settings = stage_settings(Experiment.load(one_stage_experiment(tmp_path, stage)), 0)
    assert settings.trial_groups == ("initial_state",) and settings.trial_directions == "fixed"
    settings.validate()
    plain = stage_settings(Experiment.load(one_stage_experiment(tmp_path, {})), 0)
    assert plain.trial_groups == () and plain.trial_directions == "per_generation"
    for key, value, message in (
        ("trial_groups", "initial_state", "expected a list of parameter group names"),
        ("trial_directions", "once", "expected per_generation or fixed"),
    ):
        with pytest.raises(ExperimentError, match=rf"exp\.yaml: stages\[0\]\.{key}: {message}"):
            Experiment.load(one_stage_experiment(tmp_path, {key: value}))


def test_the_cli_leaves_trial_groups_to_an_experiment_file(tmp_path, capsys, one_stage_experiment):
    from musclewalk.cli import main

    path = one_stage_experiment(tmp_path, {"generations": 1})
    assert main(["optimize", str(path), "--out", str(tmp_path / "o"), "--trial-directions", "fixed"]) != 0
    assert "--trial-directions: an experiment file sets it" in capsys.readouterr().err
