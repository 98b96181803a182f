"""keep_generation_bests (driver.Settings; `optimize --keep-generation-bests`): each generation
that finds a new best also writes that best's files to generation-N/, so that the bests of a run's
history can be re-simulated and compared (issue 14's tries judge every improving generation's best
by the targets, not only the last)."""

import json

import pandas as pd

from musclewalk.optimize.driver import Optimization, Settings
from musclewalk.optimize.evaluate import EvaluationResult

# per generation: the score of candidate 0 (the others score more); generation 2 finds no better
GENERATION_BEST = {1: 60.0, 2: 70.0, 3: 50.0}


class ByGeneration:
    """A stand-in evaluator: every candidate walks its t_max; scores by generation as above."""

    def __init__(self, terms):
        self.terms, self.generation = terms, 0

    def map(self, task, values):
        self.generation += 1
        out = []
        for i, _ in enumerate(values):
            score = GENERATION_BEST[self.generation] + i
            terms = dict.fromkeys(self.terms, score / len(self.terms))
            out.append(EvaluationResult(score, terms, dict(terms), 0.3, False, None, 0.0))
        return out

    def close(self):
        pass


def stand_in(monkeypatch):
    import musclewalk.optimize.driver as driver

    terms = driver.Objective.load("geijtenbeek2013").term_names
    evaluator = ByGeneration(terms)
    monkeypatch.setattr(driver, "make_evaluator", lambda *a, **k: evaluator)
    return evaluator


def test_each_new_best_is_kept_in_its_generation_folder(small_settings, tmp_path, monkeypatch):
    stand_in(monkeypatch)
    out = tmp_path / "r"
    Optimization(small_settings(generations=3, keep_generation_bests=True), out, progress=False).run()
    assert sorted(p.name for p in out.glob("generation-*")) == ["generation-1", "generation-3"]
    for generation, score in ((1, 60.0), (3, 50.0)):
        kept = out / f"generation-{generation}"
        assert {p.name for p in kept.iterdir()} == {
            "best.json",
            "optimized.osim",
            "optimized.meta.json",
            "settings.json",
        }
        best = json.loads((kept / "best.json").read_text())
        assert best["generation"] == generation and best["objective"] == score
        assert json.loads((kept / "settings.json").read_text())["keep_generation_bests"] is True
    # the last kept best is the run's best, file for file
    for name in ("best.json", "optimized.osim", "optimized.meta.json"):
        assert (out / "generation-3" / name).read_bytes() == (out / name).read_bytes(), name
    assert list(pd.read_csv(out / "history.csv")["best"]) == [60.0, 60.0, 50.0]


def test_off_by_default_and_switched_on_when_resuming(small_settings, tmp_path, monkeypatch):
    stand_in(monkeypatch)
    out = tmp_path / "r"
    Optimization(small_settings(generations=2), out, progress=False).run()
    assert not list(out.glob("generation-*"))
    # an output, not a result setting: a resumed run may ask for it
    Optimization(
        Settings(model="", speed=1.3, generations=3),
        out,
        resume=True,
        progress=False,
        requested={"keep_generation_bests": True},
    ).run()
    assert [p.name for p in out.glob("generation-*")] == ["generation-3"]


def test_a_bad_value_is_refused(small_settings, tmp_path):
    import pytest

    from musclewalk.optimize.driver import OptimizationError

    with pytest.raises(OptimizationError, match="keep_generation_bests: expected true or false"):
        Optimization(small_settings(keep_generation_bests="yes"), tmp_path / "r", progress=False)


def test_an_experiment_run_takes_it_from_the_command_line(tmp_path, optimize_cli, one_stage_experiment):
    exp = one_stage_experiment(
        tmp_path, {"duration": 0.3, "generations": 1, "popsize": 4, "sigma": 0.2, "seed": 3}
    )
    out = tmp_path / "out"
    r = optimize_cli(exp, "--out", out, "--workers", "1", "--quiet", "--keep-generation-bests")
    assert r.returncode == 0, r.stderr
    kept = json.loads((out / "generation-1" / "best.json").read_text())
    assert kept == json.loads((out / "best.json").read_text())
