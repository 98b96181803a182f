"""Trials at other target speeds (driver.Settings.trial_speeds; beyond the paper): a candidate
scored by walking at its run's speed and at faster ones, the step a target-speed continuation
needs its walkers to take."""

import json
from pathlib import Path

import numpy as np
import pytest
from test_trials import Recording

from musclewalk.optimize.driver import Optimization, OptimizationError
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
    import musclewalk.optimize.driver as driver

    terms = driver.Objective.load("geijtenbeek2013").term_names
    monkeypatch.setattr(driver, "make_evaluator", lambda *a, **k: SpeedRecording(calls, terms))
    opt = Optimization(small_settings(generations=generations, seed=5, **settings), out, resume=resume,
                       progress=False)  # fmt: skip
    opt.run()
    return opt


SPEEDS = dict(trials=3, trial_speeds=(1.05, 1.1), trial_jitter=0.0, elitist=True)


def test_further_trials_simulate_the_candidate_itself_at_their_speeds(small_settings, tmp_path, monkeypatch):
    calls = []
    run_speeds(small_settings, tmp_path / "run", monkeypatch, calls, 2, **SPEEDS)
    assert [speed for speed, _ in calls] == pytest.approx([1.3, 1.365, 1.43] * 2)
    for g in (0, 1):
        own = calls[3 * g][1]
        assert calls[3 * g + 1][1] == own and calls[3 * g + 2][1] == own  # jitter 0: unmoved
    best = json.loads((tmp_path / "run" / "best.json").read_text())
    assert best["speed"] == 1.3  # re-simulated at the run's own speed: trial 0
    assert best["trials"]["speeds"] == pytest.approx([1.365, 1.43])
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
    the bit, not with their round trip through the CMA-ES vector."""
    calls = []
    warm = REPO / "models/optimized/HumanLegs-walk-1.3/best.json"
    run_speeds(small_settings, tmp_path / "run", monkeypatch, calls, 1, init=str(warm), **SPEEDS)
    params = json.loads(warm.read_text())["parameters"]
    own = {**params["controller"], **params["initial_state"]}
    for _, values in calls:
        assert any(all(v[k] == x for k, x in own.items()) for v in values)
