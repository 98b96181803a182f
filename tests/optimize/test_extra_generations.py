"""How long a run goes on once its best meets every objective threshold (driver.Settings
.extra_generations, the paper's 20): an experiment stage sets it, and a resumed run may change it,
as its generation limit may grow, since neither changes a generation already run."""

import pytest

from musclewalk.optimize.driver import CHECKPOINT, Optimization, load_checkpoint
from musclewalk.optimize.evaluate import EvaluationResult
from musclewalk.optimize.experiment import Experiment, ExperimentError
from musclewalk.optimize.runs import stage_settings


class EveryCandidateMeetsTheThresholds:
    """A stand-in evaluator: every candidate walks its t_max with all terms under their
    thresholds, its score a distinct number so that generations still rank."""

    def __init__(self, terms, duration):
        self.terms, self.duration, self.calls = terms, duration, 0

    def map(self, task, values):
        self.calls += 1
        out = []
        for i, _ in enumerate(values):
            score = 1.0 / (self.calls * 10 + i + 1)
            terms = dict.fromkeys(self.terms, score / len(self.terms))
            out.append(
                EvaluationResult(
                    score, terms, dict(terms), self.duration, False, None, 0.0, thresholds_met=True
                )
            )
        return out

    def close(self):
        pass


def run(small_settings, out, monkeypatch, resume=False, requested=None, **settings):
    import musclewalk.optimize.driver as driver

    terms = driver.Objective.load("geijtenbeek2013").term_names
    monkeypatch.setattr(
        driver, "make_evaluator", lambda *a, **k: EveryCandidateMeetsTheThresholds(terms, 0.3)
    )
    opt = Optimization(
        small_settings(generations=30, popsize=4, **settings),
        out,
        resume=resume,
        progress=False,
        requested=requested,
    )
    opt.run()
    return opt


def test_a_run_stops_its_extra_generations_after_the_thresholds(small_settings, tmp_path, monkeypatch):
    opt = run(small_settings, tmp_path / "r", monkeypatch, extra_generations=2)
    assert opt.state.thresholds_met_at == 1
    assert opt.state.generation == 3
    log = (tmp_path / "r" / "log.txt").read_text()
    assert "stop: all objective thresholds met at generation 1, then 2 more generations" in log


def test_a_resumed_run_may_run_on_past_its_thresholds(small_settings, tmp_path, monkeypatch):
    run(small_settings, tmp_path / "r", monkeypatch, extra_generations=1)
    again = run(small_settings, tmp_path / "r", monkeypatch, resume=True, requested={"extra_generations": 4})
    assert again.state.generation == 5
    settings, _ = load_checkpoint(tmp_path / "r" / CHECKPOINT)
    assert settings.extra_generations == 4
    assert "then 4 more generations" in (tmp_path / "r" / "log.txt").read_text()
    # and resumed as it is, a finished run runs nothing more
    same = run(small_settings, tmp_path / "r", monkeypatch, resume=True)
    assert same.state.generation == 5


def test_an_experiment_stage_sets_its_extra_generations(tmp_path, one_stage_experiment):
    assert stage_settings(Experiment.load(one_stage_experiment(tmp_path, {})), 0).extra_generations == 20
    more = Experiment.load(one_stage_experiment(tmp_path, {"extra_generations": 300}))
    assert stage_settings(more, 0).extra_generations == 300
    none = Experiment.load(one_stage_experiment(tmp_path, {"extra_generations": 0}))
    assert stage_settings(none, 0).extra_generations == 0
    for bad in (-1, 2.5, True):
        with pytest.raises(
            ExperimentError,
            match=rf"exp\.yaml: stages\[0\]\.extra_generations: expected an integer >= 0, got {bad!r}",
        ):
            Experiment.load(one_stage_experiment(tmp_path, {"extra_generations": bad}))


def test_an_experiment_run_again_with_more_extra_generations_runs_on(
    tmp_path, one_stage_experiment, monkeypatch
):
    import musclewalk.optimize.driver as driver
    from musclewalk.optimize.runs import run_experiment

    terms = driver.Objective.load("geijtenbeek2013").term_names
    monkeypatch.setattr(
        driver, "make_evaluator", lambda *a, **k: EveryCandidateMeetsTheThresholds(terms, 0.3)
    )
    stage = {"duration": 0.3, "popsize": 4, "generations": 30, "extra_generations": 1}
    options = {"evaluator": "serial", "workers": 1}
    out = tmp_path / "run"
    exp = Experiment.load(one_stage_experiment(tmp_path, stage))
    assert run_experiment(exp, out, options, progress=False, report=lambda m: None).generation == 2
    exp = Experiment.load(one_stage_experiment(tmp_path, {**stage, "extra_generations": 3}))
    assert run_experiment(exp, out, options, progress=False, report=lambda m: None).generation == 4
