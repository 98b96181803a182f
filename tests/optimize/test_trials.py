"""Several trials per candidate (driver.Settings.trials, beyond the paper): a candidate's objective
is the mean over itself and copies moved by +-trial_jitter of each range, each copy under
perturbations of its own; the directions and seeds are common random numbers (the same for every
candidate of a generation, new each generation, the same after --resume); best.json lists the
trials, and re-simulating the best gives its own (first) trial."""

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from musclewalk.optimize.driver import CHECKPOINT, Optimization, OptimizationError, load_checkpoint
from musclewalk.optimize.evaluate import FAILURE_SCORE, EvaluationResult, combine_trials
from musclewalk.optimize.experiment import Experiment, ExperimentError
from musclewalk.optimize.runs import stage_settings
from musclewalk.optimize.task import generation_seed, trial_signs

REPO = Path(__file__).resolve().parents[2]
WALL_COLUMNS = ["wall_time", "generation_wall"]


def result(score, time=1.0, terminated=True, reason="com_height", error=None, met=False):
    terms = {"speed": score / 2, "effort": score / 2}
    if error is not None:
        terms = dict.fromkeys(terms, math.nan)
    return EvaluationResult(
        score, terms, dict(terms), time, terminated, reason, 0.5, error=error, thresholds_met=met
    )


# ------------------------------------------------------------------------- combining trials
def test_one_trial_is_the_result_itself():
    one = result(3.0)
    assert combine_trials([one]) is one


def test_trials_combine_to_their_mean_with_the_shortest_survival():
    combined = combine_trials(
        [result(10.0, 4.0, reason="com_height"), result(20.0, 2.5, reason="heading"), result(30.0, 6.0)]
    )
    assert combined.score == pytest.approx(20.0)
    assert combined.terms == {"speed": pytest.approx(10.0), "effort": pytest.approx(10.0)}
    assert combined.simulated_time == 2.5 and combined.terminated and combined.reason == "heading"
    assert combined.wall_time == pytest.approx(1.5) and combined.error is None
    assert combined.trial_scores == [10.0, 20.0, 30.0] and combined.trial_times == [4.0, 2.5, 6.0]
    # a walker only when every trial walked, thresholds met only when every trial met them
    walkers = [result(1.0, 10.0, terminated=False, reason=None, met=True) for _ in range(2)]
    assert not combine_trials(walkers).terminated and combine_trials(walkers).thresholds_met
    mixed = combine_trials([walkers[0], result(5.0, 10.0, terminated=False, reason=None, met=False)])
    assert not mixed.terminated and not mixed.thresholds_met


def test_a_failed_trial_is_penalized_and_only_all_failed_is_a_failure():
    failed = result(FAILURE_SCORE, 0.0, reason="RuntimeError", error="RuntimeError: boom")
    combined = combine_trials([result(100.0, 3.0), failed])
    assert combined.score == pytest.approx((100.0 + FAILURE_SCORE) / 2) and combined.error is None
    assert combined.terms == {"speed": 50.0, "effort": 50.0}  # over the trials that simulated
    assert combined.simulated_time == 0.0 and combined.reason == "RuntimeError"
    both = combine_trials([failed, failed])
    assert both.error == "RuntimeError: boom" and both.score == FAILURE_SCORE
    assert all(math.isnan(v) for v in both.terms.values())
    # the checkpoint's plain data reads back
    assert EvaluationResult.from_dict(combined.as_dict()) == combined


def test_a_stop_rule_on_terms_holds_for_every_trial():
    from musclewalk.measures.objective import Objective

    objective = Objective.load("geijtenbeek2013")
    speed = {t.name: t.threshold for t in objective.terms}["speed"]

    def walker(speed_error):
        averages = dict.fromkeys(objective.term_names, 0.0) | {"speed": speed_error}
        return EvaluationResult(1.0, dict(averages), averages, 10.0, False, None, 0.1)

    good, bad = walker(0.5 * speed), walker(1.5 * speed)
    combined = combine_trials([good, good, bad])
    assert combined.averages["speed"] < speed  # the mean is under the threshold ...
    assert not objective.met(combined, ["speed"])  # ... but one trial is not
    assert objective.met(combine_trials([good, good]), ["speed"]) and objective.met(good, ["speed"])
    assert combined.trial_averages[2]["speed"] == 1.5 * speed and combined.trial_errors == [None] * 3


def test_the_trial_directions_are_a_rule_of_seed_generation_and_trial():
    a = trial_signs(5, 3, 1, 200)
    assert set(np.unique(a)) == {-1.0, 1.0} and 60 < (a > 0).sum() < 140
    assert np.array_equal(a, trial_signs(5, 3, 1, 200))
    assert not np.array_equal(a, trial_signs(5, 4, 1, 200))
    assert not np.array_equal(a, trial_signs(5, 3, 2, 200))
    assert not np.array_equal(a, trial_signs(6, 3, 1, 200))
    # trial 0 keeps a generation's perturbation seed as before trials; each further trial has its own
    assert generation_seed(5, 3, 0) == generation_seed(5, 3)
    assert len({generation_seed(5, 3, k) for k in range(4)}) == 4


# ----------------------------------------------------------------------------- the driver
class Recording:
    """A stand-in evaluator: records each map call's perturbation seed and values and scores a
    candidate by its values and the seed."""

    def __init__(self, calls, terms):
        self.calls, self.terms = calls, terms

    def map(self, task, values):
        self.calls.append((task.perturbation_seed, [dict(v) for v in values]))
        out = []
        for v in values:
            x = np.array(list(v.values())[:10])
            score = float(np.sum(x**2)) + (task.perturbation_seed or 0) % 97 / 10
            terms = dict.fromkeys(self.terms, score / len(self.terms))
            out.append(EvaluationResult(score, terms, dict(terms), 0.3, False, None, 0.0))
        return out

    def close(self):
        pass


def run_recorded(
    small_settings, out, monkeypatch, calls, generations, resume=False, evaluator=Recording, **settings
):
    import musclewalk.optimize.driver as driver

    terms = driver.Objective.load("geijtenbeek2013").term_names
    monkeypatch.setattr(driver, "make_evaluator", lambda *a, **k: evaluator(calls, terms))
    opt = Optimization(small_settings(generations=generations, seed=5, **settings), out, resume=resume,
                       progress=False)  # fmt: skip
    opt.run()
    return opt


class FailingTrial(Recording):
    """The Recording evaluator, with candidate 0 of every further trial failing."""

    def map(self, task, values):
        out = super().map(task, values)
        if len(self.calls) % 2 == 0:
            out[0] = dataclasses.replace(
                out[0], score=FAILURE_SCORE, terminated=True, error="RuntimeError: boom"
            )
        return out


def test_a_failed_further_trial_is_logged_and_counted(small_settings, tmp_path, monkeypatch):
    import musclewalk.optimize.driver as driver

    terms = driver.Objective.load("geijtenbeek2013").term_names
    calls = []
    monkeypatch.setattr(driver, "make_evaluator", lambda *a, **k: FailingTrial(calls, terms))
    opt = Optimization(small_settings(generations=2, seed=5, trials=2), tmp_path / "run", progress=False)
    opt.run()
    assert opt.state.failures == 2  # one failed simulation per generation, though no candidate failed
    assert [(f["generation"], f["candidate"], f["trial"]) for f in opt.state.failure_log] == [
        (1, 0, 1),
        (2, 0, 1),
    ]
    log = (tmp_path / "run" / "log.txt").read_text()
    assert "  1, 0 (trial 1): RuntimeError: boom" in log
    assert "evaluations: 8 candidates of 2 trials each, failed evaluations: 2 (simulations)" in log


def test_each_candidate_is_simulated_in_its_trials_under_common_random_numbers(
    small_settings, tmp_path, monkeypatch
):
    calls = []
    opt = run_recorded(small_settings, tmp_path / "run", monkeypatch, calls, 2, task="push", trials=3,
                       trial_jitter=1e-3)  # fmt: skip
    assert len(calls) == 6  # 2 generations x 3 trials, each trial one batch of the population
    space = opt.space
    ranges = {e.name: e.upper - e.lower for e in space.optimized}
    for g in (1, 2):
        batches = calls[3 * (g - 1) : 3 * g]
        assert [seed for seed, _ in batches] == [generation_seed(5, g, k) for k in range(3)]
        own = batches[0][1]
        for k in (1, 2):
            signs = dict(zip([e.name for e in space.optimized], trial_signs(5, g, k, len(space))))
            for candidate, moved in zip(own, batches[k][1]):
                for name, r in ranges.items():
                    step = moved[name] - candidate[name]
                    at_bound = moved[name] in (space.optimized[space._index[name]].lower,
                                               space.optimized[space._index[name]].upper)  # fmt: skip
                    if not at_bound:
                        assert step == pytest.approx(signs[name] * 1e-3 * r, rel=1e-6, abs=1e-12)
    # CMA-ES ranks the mean; history and best.json say what the best was scored as
    hist = pd.read_csv(tmp_path / "run" / "history.csv")
    best = json.loads((tmp_path / "run" / "best.json").read_text())
    assert best["trials"]["count"] == 3 and best["trials"]["jitter"] == 1e-3
    assert len(best["trials"]["objectives"]) == 3
    assert best["objective"] == pytest.approx(np.mean(best["trials"]["objectives"]))
    assert best["perturbation_seed"] == generation_seed(5, best["generation"])
    assert hist["best"].iloc[-1] == pytest.approx(best["objective"], rel=1e-5)
    log = (tmp_path / "run" / "log.txt").read_text()
    assert "trials: 3 simulations per candidate, its objective their mean" in log
    assert "each under its own perturbations" in log

    # stopped after one generation and resumed: the same batches
    again = []
    run_recorded(small_settings, tmp_path / "parts", monkeypatch, again, 1, task="push", trials=3,
                 trial_jitter=1e-3)  # fmt: skip
    np.random.seed(99)
    run_recorded(small_settings, tmp_path / "parts", monkeypatch, again, 2, resume=True, task="push",
                 trials=3, trial_jitter=1e-3)  # fmt: skip
    assert again == calls
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "parts" / "history.csv").drop(columns=WALL_COLUMNS),
        hist.drop(columns=WALL_COLUMNS),
    )
    # a resumed run keeps its trials
    for name, value in (("trials", 2), ("trial_jitter", 1e-6)):
        with pytest.raises(OptimizationError, match=f"{name}: the run was started with"):
            Optimization(small_settings(), tmp_path / "parts", resume=True, progress=False,
                         requested={name: value})  # fmt: skip


def test_without_perturbations_the_trials_differ_only_by_the_move(small_settings, tmp_path, monkeypatch):
    calls = []
    run_recorded(small_settings, tmp_path / "walk", monkeypatch, calls, 1, trials=2)
    assert [seed for seed, _ in calls] == [None, None]
    (own, moved) = (calls[0][1], calls[1][1])
    assert own != moved
    diffs = [abs(m[k] - o[k]) for o, m in zip(own, moved) for k in o if m[k] != o[k]]
    assert diffs and max(diffs) < 1e-4  # 1e-6 of ranges of at most ~100
    assert "each under the same scenario" in (tmp_path / "walk" / "log.txt").read_text()


def test_one_trial_is_the_run_as_before(small_settings, tmp_path, monkeypatch):
    calls = []
    run_recorded(small_settings, tmp_path / "one", monkeypatch, calls, 1)
    assert len(calls) == 1
    assert "trials" not in json.loads((tmp_path / "one" / "best.json").read_text())
    assert "trials:" not in (tmp_path / "one" / "log.txt").read_text()


@pytest.mark.parametrize(
    "values, message",
    [
        ({"trials": 0}, "trials: expected an integer > 0"),
        ({"trials": 1.5}, "trials: expected an integer > 0"),
        ({"trial_jitter": -1e-6}, "trial_jitter: expected a number >= 0 and <= 0.1"),
        ({"trial_jitter": 0.5}, "trial_jitter: expected a number >= 0 and <= 0.1"),
    ],
)
def test_bad_trial_settings_are_refused(small_settings, tmp_path, values, message):
    with pytest.raises(OptimizationError, match=message):
        Optimization(small_settings(**values), tmp_path / "r", progress=False)
    assert not (tmp_path / "r" / CHECKPOINT).exists()


def test_a_committed_checkpoint_resumes_with_one_trial():
    settings, _ = load_checkpoint(REPO / "models" / "optimized" / "HumanLegs-walk-1.3" / CHECKPOINT)
    assert settings.trials == 1


# ------------------------------------------------------------------------- experiment files
def test_an_experiment_stage_sets_its_trials(tmp_path, one_stage_experiment):
    exp = Experiment.load(one_stage_experiment(tmp_path, {"trials": 3, "trial_jitter": 1e-9}))
    settings = stage_settings(exp, 0)
    assert settings.trials == 3 and settings.trial_jitter == 1e-9
    plain = stage_settings(Experiment.load(one_stage_experiment(tmp_path, {})), 0)
    assert plain.trials == 1 and plain.trial_jitter == 1e-6


@pytest.mark.parametrize(
    "stage, message",
    [
        ({"trials": 0}, r"stages\[0\]\.trials: expected an integer >= 1"),
        ({"trial_jitter": 0.2}, r"stages\[0\]\.trial_jitter: expected a fraction of the range in \[0, 0.1\]"),
        ({"trial_jitter": "small"}, r"stages\[0\]\.trial_jitter: expected a fraction"),
    ],
)
def test_a_bad_trial_value_names_the_file_and_key(tmp_path, stage, message, one_stage_experiment):
    with pytest.raises(ExperimentError, match=r"exp\.yaml: " + message):
        Experiment.load(one_stage_experiment(tmp_path, stage))


def test_the_cli_leaves_trials_to_an_experiment_file(tmp_path, capsys, one_stage_experiment):
    from musclewalk.cli import main

    path = one_stage_experiment(tmp_path, {"generations": 1})
    assert main(["optimize", str(path), "--out", str(tmp_path / "o"), "--trials", "2"]) != 0
    assert "--trials: an experiment file sets it" in capsys.readouterr().err


# ------------------------------------------------------------------ a short real optimization
def test_a_short_real_run_with_trials_re_simulates_its_own_trial(small_settings, tmp_path):
    from musclewalk.optimize.runs import complete_run, start_run

    out = tmp_path / "trials"
    settings = small_settings(generations=1, popsize=2, trials=2, trial_jitter=1e-3, sigma=0.3)
    complete_run(start_run(settings.model, out, settings, progress=False), lambda line: None)
    best = json.loads((out / "best.json").read_text())
    trials = best["trials"]
    assert len(trials["objectives"]) == 2 and trials["objectives"][0] != trials["objectives"][1]
    assert best["objective"] == pytest.approx(sum(trials["objectives"]) / 2, rel=1e-12)
    from musclewalk.cli import main

    shown = tmp_path / "shown"
    assert main(["simulate", str(out / "optimized.osim"), "--params", str(out / "best.json"),
                 "--speed", "1.3", "--duration", "0.3", "--out", str(shown)]) == 0  # fmt: skip
    summary = json.loads((shown / "summary.json").read_text())
    assert summary["simulated_time"] == pytest.approx(trials["simulated_times"][0], abs=1e-9)
