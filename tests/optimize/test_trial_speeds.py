"""Trials at other target speeds (driver.Settings.trial_speeds; beyond the paper): a candidate
scored by walking at its run's speed and at faster ones, the step a target-speed continuation
needs its walkers to take."""

import json
from pathlib import Path

import numpy as np
import pytest
from test_trials import Recording, run_recorded

from musclewalk.optimize.driver import Optimization, OptimizationError, trial_speed
from musclewalk.optimize.evaluate import EvaluationResult
from musclewalk.optimize.experiment import Experiment, ExperimentError
from musclewalk.optimize.runs import stage_settings

REPO = Path(__file__).resolve().parents[2]


class SpeedRecording(Recording):
    """The Recording evaluator, also recording each map call's target speed and scoring a
    candidate worse the faster its target."""

    def map(self, task, values):
        self.calls.append((task.speed, [dict(v) for v in values]))
        out = []
        for v in values:
            score = float(np.sum(np.array(list(v.values())[:10]) ** 2)) + task.speed
            terms = dict.fromkeys(self.terms, score / len(self.terms))
            out.append(EvaluationResult(score, terms, dict(terms), 0.3, False, None, 0.0))
        return out


def run_speeds(small_settings, out, monkeypatch, calls, generations, resume=False, **settings):
    return run_recorded(
        small_settings, out, monkeypatch, calls, generations, resume, SpeedRecording, **settings
    )


SPEEDS = dict(trials=3, trial_speeds=(1.05, 1.1), trial_jitter=0.0, elitist=True)


def test_further_trials_simulate_the_candidate_itself_at_their_speeds(small_settings, tmp_path, monkeypatch):
    calls = []
    run_speeds(small_settings, tmp_path / "run", monkeypatch, calls, 2, **SPEEDS)
    # the decimals themselves (1.3 x 1.05 is 1.3650000000000002): what best.json lists is what ran
    assert [speed for speed, _ in calls] == [1.3, 1.365, 1.43] * 2
    for g in (0, 1):
        own = calls[3 * g][1]
        assert calls[3 * g + 1][1] == own and calls[3 * g + 2][1] == own  # jitter 0: unmoved
    best = json.loads((tmp_path / "run" / "best.json").read_text())
    assert best["speed"] == 1.3  # re-simulated at the run's own speed: trial 0
    assert best["trials"]["speeds"] == [1.3, 1.365, 1.43]  # each trial's, as its objectives and times
    # the objective is the trials' mean
    assert best["objective"] == pytest.approx(np.mean(best["trials"]["objectives"]))
    log = (tmp_path / "run" / "log.txt").read_text()
    assert "the candidate, then itself 2 more times at target speeds 1.365, 1.43 m/s" in log


def test_speed_trials_resume_exactly_and_refuse_other_speeds(small_settings, tmp_path, monkeypatch):
    calls, again = [], []
    run_speeds(small_settings, tmp_path / "whole", monkeypatch, calls, 2, **SPEEDS)
    run_speeds(small_settings, tmp_path / "parts", monkeypatch, again, 1, **SPEEDS)
    run_speeds(small_settings, tmp_path / "parts", monkeypatch, again, 2, resume=True, **SPEEDS)
    assert again == calls
    with pytest.raises(OptimizationError, match="trial_speeds: the run was started with"):
        Optimization(small_settings(**SPEEDS), tmp_path / "parts", resume=True, progress=False,
                     requested={"trial_speeds": (1.05, 1.2)})  # fmt: skip


@pytest.mark.parametrize(
    "values, message",
    [
        (
            {"trials": 3, "trial_speeds": (1.1,)},
            "trial_speeds: one factor per further trial: trials 3 needs 2",
        ),
        ({"trials": 2, "trial_speeds": (0.0,)}, r"trial_speeds: expected a list of numbers > 0"),
        ({"trials": 2, "trial_speeds": 1.1}, r"trial_speeds: expected a list of numbers > 0"),
        # moved trials drawn anew each generation stay refused with elitism
        (
            {"trials": 2, "trial_speeds": (1.1,), "trial_jitter": 1e-3, "elitist": True},
            "elitist: trials draw new directions each generation",
        ),
    ],
)
def test_bad_trial_speeds_are_refused(small_settings, tmp_path, values, message):
    with pytest.raises(OptimizationError, match=message):
        Optimization(small_settings(**values), tmp_path / "r", progress=False)


def test_an_experiment_stage_sets_trial_speeds(tmp_path, one_stage_experiment):
    stage = {"trials": 3, "trial_speeds": [1.05, 1.1], "trial_jitter": 0, "elitist": True}
    settings = stage_settings(Experiment.load(one_stage_experiment(tmp_path, stage)), 0)
    assert settings.trial_speeds == (1.05, 1.1)
    settings.validate()
    assert stage_settings(Experiment.load(one_stage_experiment(tmp_path, {})), 0).trial_speeds == ()
    for value in ([1.1, -1], 1.1, ["fast"]):
        with pytest.raises(
            ExperimentError, match=r"exp\.yaml: stages\[0\]\.trial_speeds: expected a list of numbers > 0"
        ):
            Experiment.load(one_stage_experiment(tmp_path, {"trial_speeds": value}))


def test_a_warm_start_s_speed_trials_run_with_its_file_s_values(small_settings, tmp_path, monkeypatch):
    """With trial_jitter 0 every trial of the warm start's candidate runs with the file's values to
    the bit, not with their round trip through the CMA-ES vector (here made inexact on purpose:
    every decoded value one ulp up)."""
    import musclewalk.optimize.space as space

    decode = space.ParameterSpace.values
    monkeypatch.setattr(
        space.ParameterSpace,
        "values",
        lambda self, x: {k: float(np.nextafter(v, np.inf)) for k, v in decode(self, x).items()},
    )
    calls = []
    warm = REPO / "models/optimized/HumanLegs-walk-1.3/best.json"
    run_speeds(small_settings, tmp_path / "run", monkeypatch, calls, 1, init=str(warm), **SPEEDS)
    params = json.loads(warm.read_text())["parameters"]
    own = {**params["controller"], **params["initial_state"]}
    assert len(calls) == 3
    for _, values in calls:
        assert any(all(v[k] == x for k, x in own.items()) for v in values)


def test_a_ramp_task_is_checked_at_every_trial_speed(small_settings, tmp_path):
    """A slope task whose ramps suffice at the run's speed but not at a trial's is refused, naming
    the trial speed."""
    from musclewalk.sim.terrain import MAX_LENGTH, RUN_LENGTH_FACTOR, RUN_LENGTH_MARGIN

    duration = (MAX_LENGTH - RUN_LENGTH_MARGIN) / (1.35 * RUN_LENGTH_FACTOR)  # fits at 1.3, not 1.43
    Optimization(small_settings(task="slope", duration=duration, trials=2), tmp_path / "a", progress=False)
    with pytest.raises(
        OptimizationError, match=r"m of ramps for 1\.43 m/s .* \(a trial speed: trial_speeds factor 1\.1\)"
    ):
        Optimization(small_settings(task="slope", duration=duration, trials=2, trial_speeds=(1.1,)),
                     tmp_path / "b", progress=False)  # fmt: skip


def test_identical_trials_are_refused(small_settings, tmp_path):
    with pytest.raises(
        OptimizationError, match="trials: 2 simulations of the same candidate in the same scenario"
    ):
        Optimization(small_settings(trials=2, trial_jitter=0.0), tmp_path / "r", progress=False)
    # under random perturbations each trial has its own: allowed
    Optimization(
        small_settings(trials=2, trial_jitter=0.0, task="gentlepush"), tmp_path / "p", progress=False
    )


class UnperturbedAtSpeeds(SpeedRecording):
    """Every candidate walks under the task's perturbations; without them it walks only at target
    speeds below ``limit``."""

    def __init__(self, calls, terms, limit):
        super().__init__(calls, terms)
        self.limit = limit

    def map(self, task, values):
        if task.task is not None:
            return super().map(task, values)
        self.calls.append(("unperturbed", task.speed))
        walks = task.speed < self.limit
        return [EvaluationResult(1.0, dict.fromkeys(self.terms, 0.0), dict.fromkeys(self.terms, 0.0),
                                 10.0 if walks else 2.0, not walks, None, 0.0) for _ in values]  # fmt: skip


@pytest.mark.parametrize("limit, stops", [(1.4, False), (1.5, True)])
def test_an_unperturbed_walker_must_walk_at_every_trial_speed(
    small_settings, tmp_path, monkeypatch, limit, stops
):
    """stop_when_walking "unperturbed" with trial_speeds re-simulates the walkers without the
    task's perturbations at each trial's speed; one that walks only at the run's speed does not
    end the stage."""
    import musclewalk.optimize.driver as driver

    terms = driver.Objective.load("geijtenbeek2013").term_names
    calls = []
    monkeypatch.setattr(driver, "make_evaluator", lambda *a, **k: UnperturbedAtSpeeds(calls, terms, limit))
    settings = small_settings(task="gentlepush", generations=2, stop_when_walking="unperturbed", trials=2,
                              trial_speeds=(1.1,))  # fmt: skip
    state = Optimization(settings, tmp_path / "stage", progress=False).run()
    checked = [c[1] for c in calls if c[0] == "unperturbed"]
    assert checked[:2] == pytest.approx([1.3, 1.43])
    assert state.generation == (1 if stops else 2)
    assert all(c["walks"] == stops for c in state.unperturbed_checks)


def test_an_experiment_file_with_a_wrong_factor_count_is_refused_when_loaded(tmp_path, one_stage_experiment):
    """A stage whose trial_speeds do not match its trials fails when the file is read, not when its
    stage starts after the earlier ones have run."""
    path = one_stage_experiment(tmp_path, {"trials": 3, "trial_speeds": [1.1]})
    with pytest.raises(
        ExperimentError, match=r"stages\[0\]\.trial_speeds: one factor per further trial: trials 3 needs 2"
    ):
        Experiment.load(path)


def test_a_trial_speed_is_the_decimal_a_user_types_back():
    assert 1.75 * 1.05 != 1.8375 and trial_speed(1.75, 1.05) == 1.8375
    assert trial_speed(1.75, 1.1) == 1.925
    assert trial_speed(1 / 3, 1.0) == 1 / 3  # the candidate's own trial: its speed unrounded
