"""An elitist CMA-ES (driver.Settings.elitist, pycma's CMA_elitist): the best candidate so far is
recombined into every generation that found none better, so that on a landscape where one lucky
candidate walks and its neighbours fall the search stays by it instead of drifting away."""

import numpy as np
import pytest

from musclewalk.optimize.driver import CHECKPOINT, Optimization, OptimizationError, load_checkpoint
from musclewalk.optimize.evaluate import EvaluationResult
from musclewalk.optimize.experiment import Experiment, ExperimentError
from musclewalk.optimize.runs import stage_settings


class OneLuckyCandidate:
    """A stand-in evaluator: the first candidate of the first generation scores -100, every other
    one a pseudo-random number in [0, 1) that depends only on its values (a knife edge: nothing
    near the lucky candidate is any better than anywhere else)."""

    def __init__(self, terms):
        self.terms, self.calls = terms, 0

    def map(self, task, values):
        self.calls += 1
        out = []
        for i, v in enumerate(values):
            key = hash(tuple(round(float(x), 12) for x in v.values())) % 2**32
            score = -100.0 if (self.calls == 1 and i == 0) else float(np.random.default_rng(key).random())
            terms = dict.fromkeys(self.terms, score / len(self.terms))
            out.append(EvaluationResult(score, terms, dict(terms), 0.3, False, None, 0.0))
        return out

    def close(self):
        pass


def run(small_settings, out, monkeypatch, generations, resume=False, **settings):
    import musclewalk.optimize.driver as driver

    terms = driver.Objective.load("geijtenbeek2013").term_names
    monkeypatch.setattr(driver, "make_evaluator", lambda *a, **k: OneLuckyCandidate(terms))
    opt = Optimization(
        small_settings(generations=generations, seed=5, popsize=6, **settings),
        out,
        resume=resume,
        progress=False,
    )
    opt.run()
    return opt


def distance_of_mean_to_best(opt):
    es = opt.state.es
    return float(np.linalg.norm(es.mean - es.best.x_geno) / es.sigma)


def test_the_elitist_search_stays_by_a_lone_best_the_plain_one_drifts_away(
    small_settings, tmp_path, monkeypatch
):
    plain = run(small_settings, tmp_path / "plain", monkeypatch, 8)
    elitist = run(small_settings, tmp_path / "elitist", monkeypatch, 8, elitist=True)
    assert plain.state.best_generation == elitist.state.best_generation == 1
    assert not plain.state.es.opts["CMA_elitist"] and elitist.state.es.opts["CMA_elitist"] is True
    # in units of each run's own step size, the plain mean has wandered off the lucky candidate
    assert distance_of_mean_to_best(elitist) < 0.5 * distance_of_mean_to_best(plain)
    log = (tmp_path / "elitist" / "log.txt").read_text()
    assert "elitist (the best so far recombined into every generation)" in log
    assert "elitist" not in (tmp_path / "plain" / "log.txt").read_text()


def test_a_resumed_run_keeps_its_elitism(small_settings, tmp_path, monkeypatch):
    run(small_settings, tmp_path / "r", monkeypatch, 1, elitist=True)
    settings, _ = load_checkpoint(tmp_path / "r" / CHECKPOINT)
    assert settings.elitist is True
    with pytest.raises(OptimizationError, match="elitist: the run was started with"):
        Optimization(
            small_settings(), tmp_path / "r", resume=True, progress=False, requested={"elitist": False}
        )


def test_a_bad_elitist_setting_is_refused(small_settings, tmp_path):
    with pytest.raises(OptimizationError, match="elitist: expected true or false, got 'yes'"):
        Optimization(small_settings(elitist="yes"), tmp_path / "r", progress=False)
    assert not (tmp_path / "r" / CHECKPOINT).exists()


@pytest.mark.parametrize(
    "noisy, why",
    [
        ({"task": "gentlepush"}, "task gentlepush draws new perturbations"),
        ({"trials": 3}, "trials draw new directions"),
    ],
)
def test_elitism_under_a_noisy_objective_is_refused(small_settings, tmp_path, noisy, why):
    with pytest.raises(OptimizationError, match=f"elitist: {why} each generation"):
        Optimization(small_settings(elitist=True, **noisy), tmp_path / "r", progress=False)
    assert not (tmp_path / "r" / CHECKPOINT).exists()


def test_an_experiment_stage_sets_elitism(tmp_path, one_stage_experiment):
    elitist = Experiment.load(one_stage_experiment(tmp_path, {"elitist": True}))
    assert stage_settings(elitist, 0).elitist is True
    assert stage_settings(Experiment.load(one_stage_experiment(tmp_path, {})), 0).elitist is False
    with pytest.raises(
        ExperimentError, match=r"exp\.yaml: stages\[0\]\.elitist: expected true or false, got 1"
    ):
        Experiment.load(one_stage_experiment(tmp_path, {"elitist": 1}))


def test_a_committed_checkpoint_resumes_without_elitism():
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    settings, _ = load_checkpoint(repo / "models" / "optimized" / "HumanLegs-walk-1.3" / CHECKPOINT)
    assert settings.elitist is False
